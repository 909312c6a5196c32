#include "policy/device_choice.h"

#include <fmt/format.h>

#include "core/error.h"
#include "policy/cpu/cpu_sequence_executor.h"
#include "policy/cpu/cpu_step_executor.h"

namespace recur::policy {

std::string_view to_string(Device device) {
  return device == Device::kCuda ? "cuda" : "cpu";
}

Device resolve_device(std::string_view key, std::string_view value, const DeviceReport& report,
                      std::string* why) {
  if (value == "cpu") return Device::kCpu;
  RECUR_CHECK(value == "cuda" || value == "auto",
              "{}: '{}' is not a device: expected cpu, cuda or auto", key, value);
  const std::string build =
      report.cuda_built ? fmt::format("this build of recur has CUDA {} and cuDNN {}",
                                      report.cuda_runtime, report.cudnn_version)
                        : "this build of recur has no CUDA support (configured with "
                          "RECUR_CUDA=OFF or without the CUDA toolkit), so it cannot look for a "
                          "GPU";
  const std::string machine =
      report.gpus.empty()
          ? fmt::format("this machine has no usable GPU ({})",
                        report.gpu_unavailable.empty() ? "none found" : report.gpu_unavailable)
          : fmt::format("this machine has GPU {}", report.gpus.front());
  if (value == "cuda") {
    RECUR_CHECK(report.cuda_built,
                "{}: cuda was asked for, but {}; rebuild with the CUDA toolkit and cuDNN in "
                "/usr/local/cuda, or set {} to cpu or auto",
                key, build, key);
    RECUR_CHECK(report.cuda_usable(),
                "{}: cuda was asked for, but {} ({}); run on a machine with an NVIDIA GPU and "
                "driver, or set {} to cpu or auto",
                key, machine, build, key);
    return Device::kCuda;
  }
  const Device d = report.cuda_usable() ? Device::kCuda : Device::kCpu;
  if (why)
    *why = d == Device::kCuda  ? fmt::format("{}: auto -> cuda ({})", key, machine)
           : report.cuda_built ? fmt::format("{}: auto -> cpu ({}; {})", key, machine, build)
                               : fmt::format("{}: auto -> cpu ({})", key, build);
  return d;
}

std::unique_ptr<StepExecutor> make_step_executor(const CoreSpec& spec, int slots,
                                                 const Placement& placement) {
  if (placement.device == Device::kCuda) {
    require_cuda_core(spec);  // before the CUDA build check: the clearer of the two refusals
    return make_cuda_step_executor(spec, slots, placement.step);
  }
  return std::make_unique<CpuStepExecutor>(spec, slots);
}

std::unique_ptr<SequenceExecutor> make_sequence_executor(const CoreSpec& spec,
                                                         const Placement& placement) {
  if (placement.device == Device::kCuda) {
    return make_gpu_sequence_executor(spec, placement.sequence);  // cuDNN or the fused kernels
  }
  return std::make_unique<CpuSequenceExecutor>(spec);
}

}  // namespace recur::policy
