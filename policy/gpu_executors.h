// The GPU executors behind the StepExecutor / SequenceExecutor interfaces, and the options a
// training config or a benchmark chooses them with. This header needs no CUDA: in a CPU-only
// build the factories throw recur::Error saying the build has no CUDA support, so callers
// compile and fail clearly the same way everywhere.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "policy/executor.h"

namespace recur::policy {

// How a CUDA step moves its inputs and outputs between host and device (kernels/mapped_io.h):
// `copy` pinned staging + cudaMemcpyAsync + cudaStreamSynchronize (the default; verified on an
// H100 and an H200); `mapped` mapped pinned memory read and written by kernels, completion by a
// host-polled flag (equal to `copy` bit for bit and faster at every shape measured on an H200:
// half the step executor's time at B 1, 5-15% off the policy actor's step; docs/PERFORMANCE.md,
// "GPU, second run"; not the default after one card and one run).
enum class StepIo { kCopy, kMapped };

struct CudaStepOptions {
  int device = 0;             // CUDA device ordinal
  bool use_graph = true;      // capture one step as a CUDA graph and replay it
  StepIo io = StepIo::kCopy;  // see StepIo
  // CudaPolicyActor (device.tower_streams): 2 runs the critic's tower on a second stream in
  // act(), a parallel branch of the step's graph; the step executors ignore it.
  int tower_streams = 1;
};

// cuDNN math for fp32 data: `fma` (CUDNN_FMA_MATH, no tensor cores: parity with the CPU),
// `tf32` (CUDNN_DEFAULT_MATH: TF32 tensor cores on Ampere+), `fp16` (CUDNN_TENSOR_OP_MATH_ALLOW_
// CONVERSION: fp32 data converted to half for tensor cores).
enum class RnnMath { kFma, kTf32, kFp16 };
// `standard` always; `persist_small_h` is tried when eligible (equal lengths, small H) and falls
// back to standard when cuDNN refuses; `auto` = persist_small_h when eligible else standard.
enum class RnnAlgo { kAuto, kStandard, kPersistSmallH };
// The data type cuDNN's RNN runs on (device.cudnn_data): `fp32`, or `fp16` / `bf16`, 16-bit
// copies of the weights, inputs, states and output gradients made just before each cuDNN call,
// with float math (mathPrec) on tensor cores, while the master weights, gradients and everything
// at the executor's interface stay fp32. fp16 scales the output gradients by
// kFp16GradientScale before casting them (small gradients would underflow) and unscales what
// comes back; bf16 has fp32's range and needs no scale. cudnn_math applies to fp32 data only.
enum class RnnData { kFp32, kFp16, kBf16 };
// The scale is static: a weight gradient of a minibatch beyond 65504 / 1024 = 64 (or such an
// output or state gradient) overflows to an infinity and that step is skipped by the learner's
// guard. Mean losses and normalized advantages keep PPO's far below; bf16 has no such limit.
inline constexpr float kFp16GradientScale = 1024.0f;
// cuDNN's RNN accepts bfloat16 data from 9.13 on (cudnnGetVersion() form).
inline constexpr size_t kCudnnBf16RnnVersion = 91300;

struct CudnnSequenceOptions {
  int device = 0;
  RnnMath math = RnnMath::kFma;
  RnnAlgo algo = RnnAlgo::kStandard;
  RnnData data = RnnData::kFp32;
  // CudaPolicyLearner (device.tower_streams): 2 runs the critic's tower (encoder and core) on a
  // stream of its own beside the actor's; the executors ignore it.
  int tower_streams = 1;
};

std::string_view to_string(StepIo io);
StepIo parse_step_io(std::string_view name);  // throws recur::Error listing allowed names
std::string_view to_string(RnnMath math);
std::string_view to_string(RnnAlgo algo);
RnnMath parse_rnn_math(std::string_view name);  // throws recur::Error listing allowed names
RnnAlgo parse_rnn_algo(std::string_view name);
std::string_view to_string(RnnData data);
RnnData parse_rnn_data(std::string_view name);

// The CUDA step executor (policy/cuda/): weights and state of all slots in device memory.
std::unique_ptr<StepExecutor> make_cuda_step_executor(const CoreSpec& spec, int slots,
                                                      const CudaStepOptions& options = {});
// The cuDNN sequence executor (policy/cudnn/).
std::unique_ptr<SequenceExecutor> make_cudnn_sequence_executor(
    const CoreSpec& spec, const CudnnSequenceOptions& options = {});
// The GPU learner's core for any cell: cuDNN's for its four, recur's fused CUDA sequence
// executor (policy/cuda/cuda_sequence_executor.h) for lstm_ln and mingru.
std::unique_ptr<SequenceExecutor> make_gpu_sequence_executor(
    const CoreSpec& spec, const CudnnSequenceOptions& options = {});

}  // namespace recur::policy
