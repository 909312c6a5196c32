#include "core/thread_priority.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace recur {

std::string set_thread_nice(int nice) {
#if defined(__linux__)
  // PRIO_PROCESS with a thread id addresses that one thread on Linux (setpriority(2), NOTES).
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  if (setpriority(PRIO_PROCESS, tid, nice) == 0) return {};
  return fmt::format("setpriority(nice {}) failed: {}", nice, std::strerror(errno));
#else
  return fmt::format("a per-thread nice value ({}) needs Linux", nice);
#endif
}

}  // namespace recur
