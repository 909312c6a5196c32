// resolve_placement (agent/algorithm.h): `auto` on a machine with a usable GPU keeps the learner
// of mingru and lstm_ln on the CPU (their fused CUDA sequence kernels have not yet run on a GPU);
// an explicit cuda takes them. Device reports are constructed, so this runs without a GPU.
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

TEST_CASE("auto keeps the learner of the cores with unverified CUDA kernels on the cpu") {
  using policy::Device;
  CHECK(resolve("device.actor", "auto", "lstm") == Device::kCuda);
  CHECK(resolve("device.learner", "auto", "lstm") == Device::kCuda);
  CHECK(resolve("device.actor", "auto", "lstm_ln") == Device::kCuda);   // the CUDA step kernel
  CHECK(resolve("device.learner", "auto", "lstm_ln") == Device::kCpu);  // unverified on a GPU
  CHECK(resolve("device.actor", "auto", "mingru") == Device::kCuda);
  CHECK(resolve("device.learner", "auto", "mingru") == Device::kCpu);
  CHECK(resolve("device.learner", "auto", "mingru_highway") == Device::kCpu);
  // An explicit choice is the user's: kept (the fused CUDA sequence executor runs it).
  CHECK(resolve("device.learner", "cuda", "lstm_ln") == Device::kCuda);
  CHECK(resolve("device.learner", "cpu", "gru") == Device::kCpu);
}
