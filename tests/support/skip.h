// A test case that cannot run here says so with one marker line on stdout, "[skip] <reason>",
// and returns: ctest reports it as skipped, not passed (SKIP_REGULAR_EXPRESSION on the discovered
// test cases, tests/CMakeLists.txt), and tools/gpu/run.sh counts it. GPU test cases use
// gpu_or_skip (tests/support/gpu_skip.h); any other reason:
//   if (!recur::test::AllocationCounter::available()) {
//     recur::test::skip("allocation counting is off in sanitizer builds");
//     return;
//   }
#pragma once

#include <cstdio>
#include <string>

namespace recur::test {

inline void skip(const std::string& reason) {
  std::printf("[skip] %s\n", reason.c_str());
  std::fflush(stdout);
}

}  // namespace recur::test
