#include "agent/run/progress_line.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace recur::agent {

std::string group_thousands(int64_t value) {
  // Digits of |value| as unsigned, so INT64_MIN does not overflow.
  const uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : value;
  const std::string digits = fmt::format("{}", magnitude);
  std::string out = value < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<int64_t>(std::llround(seconds));
  const int64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, s) : fmt::format("{}:{:02}", m, s);
}

namespace {

// Enough digits to see progress at any scale: CartPole's 187.3 and RepeatPrevious' -0.0213.
std::string format_return(double r) {
  const double a = std::fabs(r);
  if (a >= 100) return fmt::format("{:.1f}", r);
  if (a >= 1) return fmt::format("{:.2f}", r);
  return fmt::format("{:.3g}", r);
}

}  // namespace

std::string progress_line(const ProgressInfo& info) {
  const int64_t total = std::max<int64_t>(info.total_env_steps, 1);
  const int64_t steps = std::clamp<int64_t>(info.env_steps, 0, total);
  const int64_t percent = steps * 100 / total;  // steps <= total <= 2^63/100 in any real run
  const int64_t remaining = total - steps;
  const std::string eta = remaining == 0 ? format_duration(0)
                          : info.fps > 0
                              ? format_duration(static_cast<double>(remaining) / info.fps)
                              : std::string("?");
  return fmt::format("[{:3}%] {}/{} steps | {} fps | return {} | elapsed {} | ETA {}", percent,
                     group_thousands(info.env_steps), group_thousands(info.total_env_steps),
                     group_thousands(std::llround(std::max(info.fps, 0.0))),
                     info.return_mean ? format_return(*info.return_mean) : std::string("-"),
                     format_duration(info.elapsed_s), eta);
}

}  // namespace recur::agent
