// set_thread_nice: the calling thread's nice value changes, the other threads' do not (Linux keeps
// nice per thread).
#include <doctest/doctest.h>

#include <thread>

#include "core/thread_priority.h"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {
int nice_of(pid_t tid) {
  return getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
}
pid_t this_tid() {
  return static_cast<pid_t>(syscall(SYS_gettid));
}
}  // namespace

TEST_CASE("set_thread_nice lowers the calling thread alone") {
  const int main_before = nice_of(this_tid());
  const int target = main_before + 5 > 19 ? 19 : main_before + 5;
  int inside = -100;
  std::string why = "not run";
  std::thread t([&] {
    why = recur::set_thread_nice(target);
    inside = nice_of(this_tid());
  });
  t.join();
  CHECK(why.empty());
  CHECK(inside == target);
  CHECK(nice_of(this_tid()) == main_before);  // the caller's thread is untouched
}
#endif
