#include "policy/devices.h"

#include <doctest/doctest.h>

#include <cstdio>

TEST_CASE("device report describes the build and the GPUs") {
  const auto d = recur::policy::query_devices();
  CHECK(d.eigen_version.rfind("3.", 0) == 0);
  CHECK((d.cpu_products.rfind("LIBXSMM ", 0) == 0 || d.cpu_products.rfind("Eigen 3.", 0) == 0));
#ifdef RECUR_WITH_CUDA
  CHECK(d.cuda_built);
  CHECK(d.cudnn_version.rfind("9.", 0) == 0);
  CHECK_FALSE(d.cuda_runtime.empty());
#else
  CHECK_FALSE(d.cuda_built);
#endif
  if (!d.cuda_usable()) {
    CHECK_FALSE(d.gpu_unavailable.empty());
    // The CPU side was checked: this case passes (no "[skip]" marker, tests/support/skip.h).
    std::printf("no usable GPU: %s\n", d.gpu_unavailable.c_str());
  } else {
    CHECK(d.gpu_unavailable.empty());
  }
}
