#include "policy/devices.h"

#include <fmt/format.h>

#include "policy/eigen.h"
#include "policy/gemm.h"

#ifdef RECUR_WITH_CUDA
#include <cudnn.h>

#include "kernels/device_query.h"
#endif

namespace recur::policy {
namespace {
[[maybe_unused]] std::string cuda_version_text(int v) {
  return v == 0 ? std::string() : fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}
}  // namespace

DeviceReport query_devices() {
  DeviceReport r;
  r.eigen_version =
      fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
  r.cpu_products = gemm_backend();
#ifdef RECUR_WITH_CUDA
  r.cuda_built = true;
  const auto cuda = kernels::query_cuda();
  r.cuda_runtime = cuda_version_text(cuda.runtime_version);
  r.cuda_driver = cuda_version_text(cuda.driver_version);
  const size_t v = cudnnGetVersion();  // 90xyz: major*10000 + minor*100 + patch in cuDNN 9
  r.cudnn_version = fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  for (const auto& d : cuda.devices)
    r.gpus.push_back(fmt::format("{}: {} (sm_{}{}, {:.1f} GiB)", d.index, d.name, d.compute_major,
                                 d.compute_minor,
                                 static_cast<double>(d.memory_bytes) / (1024.0 * 1024 * 1024)));
  r.gpu_unavailable = cuda.error;
#else
  r.gpu_unavailable =
      "this build of recur has no CUDA support (configured with RECUR_CUDA=OFF or "
      "without the CUDA toolkit)";
#endif
  return r;
}

}  // namespace recur::policy
