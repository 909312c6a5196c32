// resolve_placement (agent/algorithm.h): `auto` on a machine with a usable GPU keeps a role on the
// CPU where policy.core has no CUDA executor for it (mingru and lstm_ln: the learner),
// instead of choosing cuda and failing at construction; an explicit cuda still fails there with
// the core's message. Device reports are constructed, so this runs without a GPU.
#include <doctest/doctest.h>

#include <string>

#include "agent/algorithm.h"

using namespace recur;

namespace {

policy::DeviceReport gpu_machine() {
  policy::DeviceReport r;
  r.cuda_built = true;
  r.cuda_runtime = "13.0";
  r.cudnn_version = "9.19.0";
  r.gpus = {"0: NVIDIA H200 (sm_90, 139.8 GiB)"};
  return r;
}

policy::Device resolve(const std::string& key, const std::string& value, const std::string& core) {
  return agent::resolve_placement(key, value, agent::DeviceConfig{}, gpu_machine(), core).device;
}

}  // namespace

TEST_CASE("auto stays on the cpu for a core without a CUDA executor in that role") {
  using policy::Device;
  CHECK(resolve("device.actor", "auto", "lstm") == Device::kCuda);
  CHECK(resolve("device.learner", "auto", "lstm") == Device::kCuda);
  CHECK(resolve("device.actor", "auto", "lstm_ln") == Device::kCuda);   // the CUDA step kernel
  CHECK(resolve("device.learner", "auto", "lstm_ln") == Device::kCpu);  // no CUDA sequence kernel
  CHECK(resolve("device.actor", "auto", "mingru") == Device::kCuda);
  CHECK(resolve("device.learner", "auto", "mingru") == Device::kCpu);
  // An explicit choice is the user's: kept, and refused with the core's message where it is built.
  CHECK(resolve("device.learner", "cuda", "lstm_ln") == Device::kCuda);
  CHECK(resolve("device.learner", "cpu", "gru") == Device::kCpu);
}
