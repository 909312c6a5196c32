#include "policy/gpu_executors.h"

#include "core/error.h"

#ifdef RECUR_WITH_CUDA
#include "policy/cuda/cuda_step_executor.h"
#include "policy/cuda/device_sequence_executor.h"
#include "policy/cudnn/cudnn_sequence_executor.h"
#endif

namespace recur::policy {

std::string_view to_string(StepIo io) {
  switch (io) {
    case StepIo::kCopy:
      return "copy";
    case StepIo::kMapped:
      return "mapped";
  }
  return "?";
}

StepIo parse_step_io(std::string_view name) {
  for (StepIo io : {StepIo::kCopy, StepIo::kMapped})
    if (name == to_string(io)) return io;
  throw Error(fmt::format("unknown CUDA step I/O '{}': expected copy or mapped", name));
}

std::string_view to_string(RnnMath math) {
  switch (math) {
    case RnnMath::kFma:
      return "fma";
    case RnnMath::kTf32:
      return "tf32";
    case RnnMath::kFp16:
      return "fp16";
  }
  return "?";
}

std::string_view to_string(RnnAlgo algo) {
  switch (algo) {
    case RnnAlgo::kAuto:
      return "auto";
    case RnnAlgo::kStandard:
      return "standard";
    case RnnAlgo::kPersistSmallH:
      return "persist_small_h";
  }
  return "?";
}

RnnMath parse_rnn_math(std::string_view name) {
  for (RnnMath m : {RnnMath::kFma, RnnMath::kTf32, RnnMath::kFp16})
    if (name == to_string(m)) return m;
  throw Error(fmt::format("unknown cuDNN math '{}': expected fma, tf32 or fp16", name));
}

std::string_view to_string(RnnData data) {
  switch (data) {
    case RnnData::kFp32:
      return "fp32";
    case RnnData::kFp16:
      return "fp16";
    case RnnData::kBf16:
      return "bf16";
  }
  return "?";
}

RnnData parse_rnn_data(std::string_view name) {
  for (RnnData d : {RnnData::kFp32, RnnData::kFp16, RnnData::kBf16})
    if (name == to_string(d)) return d;
  throw Error(fmt::format("unknown cuDNN RNN data type '{}': expected fp32, fp16 or bf16", name));
}

RnnAlgo parse_rnn_algo(std::string_view name) {
  for (RnnAlgo a : {RnnAlgo::kAuto, RnnAlgo::kStandard, RnnAlgo::kPersistSmallH})
    if (name == to_string(a)) return a;
  throw Error(fmt::format(
      "unknown cuDNN RNN algorithm '{}': expected auto, standard or persist_small_h", name));
}

#ifdef RECUR_WITH_CUDA
std::unique_ptr<StepExecutor> make_cuda_step_executor(const CoreSpec& spec, int slots,
                                                      const CudaStepOptions& options) {
  return std::make_unique<CudaStepExecutor>(spec, slots, options);
}

std::unique_ptr<SequenceExecutor> make_cudnn_sequence_executor(
    const CoreSpec& spec, const CudnnSequenceOptions& options) {
  return std::make_unique<CudnnSequenceExecutor>(spec, options);
}

std::unique_ptr<SequenceExecutor> make_gpu_sequence_executor(const CoreSpec& spec,
                                                             const CudnnSequenceOptions& options) {
  return make_device_sequence(spec, options);
}
#else
namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw Error(fmt::format(
      "{} needs a CUDA build of recur, and this one has no CUDA support (configured with "
      "RECUR_CUDA=OFF or without the CUDA toolkit); rebuild with the toolkit in /usr/local/cuda "
      "or choose the cpu device",
      what));
}
}  // namespace

std::unique_ptr<StepExecutor> make_cuda_step_executor(const CoreSpec&, int,
                                                      const CudaStepOptions&) {
  no_cuda("the CUDA step executor");
}

std::unique_ptr<SequenceExecutor> make_cudnn_sequence_executor(const CoreSpec&,
                                                               const CudnnSequenceOptions&) {
  no_cuda("the cuDNN sequence executor");
}

std::unique_ptr<SequenceExecutor> make_gpu_sequence_executor(const CoreSpec&,
                                                             const CudnnSequenceOptions&) {
  no_cuda("the GPU sequence executor");
}
#endif

}  // namespace recur::policy
