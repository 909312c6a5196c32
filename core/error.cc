#include "core/error.h"

namespace recur::detail {

void throw_internal(const char* file, int line, const char* what) {
  throw InternalError(
      fmt::format("internal error at {}:{}: '{}' does not hold. This is a bug in "
                  "recur; please report it with the command that triggered it.",
                  file, line, what));
}

void throw_device(const char* file, int line, const char* call, const char* library, int code,
                  const char* message) {
  throw DeviceError(
      fmt::format("{} error {} ({}) in {} at {}:{}", library, code, message, call, file, line));
}

}  // namespace recur::detail
