// What the CUDA runtime sees: runtime/driver versions and the devices present. Compiled only in
// CUDA builds (RECUR_WITH_CUDA); a machine without a GPU or driver reports it in `error`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace recur::kernels {

struct CudaDevice {
  int index = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;  // e.g. 9.0 for Hopper
  size_t memory_bytes = 0;
};

struct CudaRuntimeInfo {
  int runtime_version = 0;  // e.g. 13000 for CUDA 13.0
  int driver_version = 0;   // 0 when no driver is installed
  std::vector<CudaDevice> devices;
  std::string error;  // why no device can be used, or empty
};

// Never throws: "no device" is a normal answer on CPU-only machines.
CudaRuntimeInfo query_cuda();

}  // namespace recur::kernels
