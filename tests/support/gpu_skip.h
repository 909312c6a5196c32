// GPU tests skip themselves, with the "[skip]" marker (tests/support/skip.h), on machines without
// a usable GPU (CI, CPU-only builds): `if (!recur::test::gpu_or_skip("name")) return;` at the top
// of a test case. ctest reports them as skipped.
#pragma once

#include <string>

#include "policy/devices.h"
#include "tests/support/skip.h"

namespace recur::test {

inline bool gpu_or_skip(const char* name) {
  const policy::DeviceReport r = policy::query_devices();
  if (r.cuda_usable()) return true;
  skip(std::string(name) + ": no usable GPU: " + r.gpu_unavailable);
  return false;
}

}  // namespace recur::test
