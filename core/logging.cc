#include "core/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <string>

#include "core/error.h"

namespace recur {

void setup_logging(std::string_view level) {
  const auto parsed = spdlog::level::from_str(std::string(level));
  // from_str maps anything unknown to "off"; only accept "off" when it was asked for.
  RECUR_CHECK(parsed != spdlog::level::off || level == "off",
              "--log-level '{}' is not a level; use one of trace, debug, info, warn, error, "
              "critical, off",
              level);
  static auto logger = [] {
    auto l = spdlog::stderr_color_mt("recur");
    l->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    spdlog::set_default_logger(l);
    return l;
  }();
  logger->set_level(parsed);
}

}  // namespace recur
