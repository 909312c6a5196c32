// Where a policy's executors run, and how a config's `cpu | cuda | auto` becomes that choice.
// resolve_device() is pure logic over a DeviceReport (policy/devices.h), so its rules and
// messages are tested on machines without a GPU with reports the tests construct.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "policy/devices.h"
#include "policy/executor.h"
#include "policy/gpu_executors.h"

namespace recur::policy {

enum class Device { kCpu, kCuda };
std::string_view to_string(Device device);

// `value` is "cpu", "cuda" or "auto" for config key `key` (named in messages).
//   cpu  -> cpu.
//   cuda -> cuda if the build has CUDA and a GPU is usable; otherwise recur::Error naming both
//           facts (whether this build has CUDA, and what the machine lacks) and what to do.
//   auto -> cuda when usable, else cpu; `why` (if given) receives one line saying which and why.
Device resolve_device(std::string_view key, std::string_view value, const DeviceReport& report,
                      std::string* why = nullptr);

// Executor placement of one role (actor or learner) with the GPU options of each executor.
struct Placement {
  Device device = Device::kCpu;
  CudaStepOptions step;
  CudnnSequenceOptions sequence;
};

std::unique_ptr<StepExecutor> make_step_executor(const CoreSpec& spec, int slots,
                                                 const Placement& placement);
std::unique_ptr<SequenceExecutor> make_sequence_executor(const CoreSpec& spec,
                                                         const Placement& placement);

}  // namespace recur::policy
