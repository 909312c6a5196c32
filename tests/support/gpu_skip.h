// GPU tests skip themselves, with a message, on machines without a usable GPU (CI, CPU-only
// builds): `if (!recur::test::gpu_or_skip("name")) return;` at the top of a test case.
#pragma once

#include <cstdio>

#include "policy/devices.h"

namespace recur::test {

inline bool gpu_or_skip(const char* name) {
  const policy::DeviceReport r = policy::query_devices();
  if (r.cuda_usable()) return true;
  std::printf("[skip] %s: no usable GPU: %s\n", name, r.gpu_unavailable.c_str());
  return false;
}

}  // namespace recur::test
