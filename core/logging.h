// Logging setup: every part of recur logs through spdlog's default logger (to stderr, so that
// stdout stays machine-readable for --json and listings).
#pragma once

#include <string_view>

namespace recur {

// Sets the global level from a name: trace, debug, info, warn, error, critical, off.
// Throws recur::Error naming the allowed values on anything else.
void setup_logging(std::string_view level);

}  // namespace recur
