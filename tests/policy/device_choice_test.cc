// device.actor / device.learner resolution (policy/device_choice.h) over device reports the tests
// construct: every combination of "build has CUDA" x "machine has a GPU" x cpu|cuda|auto, and
// the messages a user sees. Runs without a GPU.
#include "policy/device_choice.h"

#include <doctest/doctest.h>

#include <string>

#include "core/error.h"

using namespace recur::policy;

namespace {

DeviceReport report(bool built, bool gpu) {
  DeviceReport r;
  r.cuda_built = built;
  if (built) {
    r.cuda_runtime = "13.0";
    r.cudnn_version = "9.19.0";
  }
  if (gpu)
    r.gpus = {"0: NVIDIA H100 (sm_90, 79.2 GiB)"};
  else
    r.gpu_unavailable = built ? "no NVIDIA driver on this machine" : "this build has no CUDA";
  return r;
}

std::string error_of(std::string_view value, const DeviceReport& r) {
  try {
    resolve_device("device.learner", value, r);
  } catch (const recur::Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("cpu is always cpu") {
  for (bool built : {false, true})
    for (bool gpu : {false, true})
      CHECK(resolve_device("k", "cpu", report(built, gpu)) == Device::kCpu);
}

TEST_CASE("cuda needs a CUDA build and a GPU and says which is missing") {
  CHECK(resolve_device("k", "cuda", report(true, true)) == Device::kCuda);

  const std::string no_gpu = error_of("cuda", report(true, false));
  CHECK(has(no_gpu, "device.learner: cuda was asked for"));
  CHECK(has(no_gpu, "this build of recur has CUDA 13.0 and cuDNN 9.19.0"));
  CHECK(has(no_gpu, "this machine has no usable GPU (no NVIDIA driver on this machine)"));
  CHECK(has(no_gpu, "set device.learner to cpu or auto"));

  const std::string no_build = error_of("cuda", report(false, false));
  CHECK(has(no_build, "this build of recur has no CUDA support"));
  CHECK(has(no_build, "rebuild with the CUDA toolkit"));
}

TEST_CASE("auto picks cuda only when usable and says why") {
  std::string why;
  CHECK(resolve_device("device.actor", "auto", report(true, true), &why) == Device::kCuda);
  CHECK(has(why, "device.actor: auto -> cuda (this machine has GPU 0: NVIDIA H100"));
  CHECK(resolve_device("device.actor", "auto", report(true, false), &why) == Device::kCpu);
  CHECK(has(why, "auto -> cpu (this machine has no usable GPU"));
  CHECK(has(why, "this build of recur has CUDA 13.0"));
  CHECK(has(why, "no NVIDIA driver"));
  CHECK(resolve_device("device.actor", "auto", report(false, false), &why) == Device::kCpu);
  CHECK(has(why, "no CUDA support"));
}

TEST_CASE("an unknown device name is refused") {
  CHECK(has(error_of("gpu", report(true, true)),
            "'gpu' is not a device: expected cpu, cuda or auto"));
}

TEST_CASE("this machine resolves auto consistently with its device report") {
  const DeviceReport here = query_devices();
  std::string why;
  const Device d = resolve_device("device.actor", "auto", here, &why);
  CHECK((d == Device::kCuda) == here.cuda_usable());
  if (!here.cuda_usable()) {
    CHECK_THROWS_AS(resolve_device("device.actor", "cuda", here), recur::Error);
    // The factories fail clearly too (no GPU, or no CUDA in this build), never crash.
    const CoreSpec spec{CellType::kLstm, 3, 4, 1, 0};
    CHECK_THROWS(make_step_executor(spec, 2, Placement{Device::kCuda, {}, {}}));
    CHECK_THROWS(make_sequence_executor(spec, Placement{Device::kCuda, {}, {}}));
  }
  CHECK(make_step_executor(CoreSpec{CellType::kGru, 3, 4, 1, 0}, 2, Placement{}) != nullptr);
}
