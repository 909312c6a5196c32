// The calling thread's scheduling priority, for work that must yield to the threads beside it
// (evaluations beside training: agent/run/background_eval.h).
#pragma once

#include <string>

namespace recur {

// Sets the calling thread's Linux nice value (0-19; higher yields more readily to the other
// threads when the cores are all busy). Linux keeps nice per thread, so the process's other
// threads keep theirs. A thread may raise its own value without privileges but not lower it
// again. Returns an empty string, or why it failed (e.g. an OS without per-thread nice).
std::string set_thread_nice(int nice);

}  // namespace recur
