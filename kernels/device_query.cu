#include "kernels/device_query.h"

#include <cuda_runtime_api.h>

#include <string>

namespace recur::kernels {

CudaRuntimeInfo query_cuda() {
  CudaRuntimeInfo info;
  cudaRuntimeGetVersion(&info.runtime_version);
  if (cudaDriverGetVersion(&info.driver_version) != cudaSuccess) info.driver_version = 0;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    info.error = info.driver_version == 0
                     ? std::string("no NVIDIA driver on this machine (CUDA runtime: ") +
                           cudaGetErrorString(status) + ")"
                     : std::string(cudaGetErrorString(status));
    cudaGetLastError();  // clear the error so later calls start clean
    return info;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    info.devices.push_back({i, prop.name, prop.major, prop.minor, prop.totalGlobalMem});
  }
  if (info.devices.empty()) info.error = "no CUDA device found";
  return info;
}

}  // namespace recur::kernels
