// Which compute backends this build of recur has and which devices it can use now. The device
// choices of a training job (device.actor / device.learner: cpu | cuda | auto) are resolved
// against this report.
#pragma once

#include <string>
#include <vector>

namespace recur::policy {

struct DeviceReport {
  std::string eigen_version;      // the CPU executors' linear algebra
  std::string cpu_products;       // what runs their matrix products (policy::gemm_backend())
  bool cuda_built = false;        // compiled with RECUR_WITH_CUDA
  std::string cuda_runtime;       // "13.0", when built with CUDA
  std::string cuda_driver;        // "13.0", or empty without a driver
  std::string cudnn_version;      // "9.x.y" of the cuDNN library loaded at run time
  std::vector<std::string> gpus;  // "0: NVIDIA H100 (sm_90, 80.0 GiB)"
  std::string gpu_unavailable;    // why no GPU can be used (empty when one can)

  bool cuda_usable() const { return cuda_built && !gpus.empty(); }
};

DeviceReport query_devices();

}  // namespace recur::policy
