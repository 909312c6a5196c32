// `recur bench rnn-gpu`: the GPU executors against each other and against the CPU ones, in one
// run. Actor side: per-step latency of the CUDA step executor (plain launches and CUDA-graph
// replay, both including the host<->device copies of observations and outputs; cuda-step-mapped:
// graph replay with zero-copy I/O, kernels/mapped_io.h) against the CPU step executor, across B
// and H: where the crossover is. Learner side: cuDNN forward and forward+backward over (T, B)
// (standard and persistent algorithms; cudnn-* rows through the host-span interface, so x, y and
// the gradients cross PCIe every call; cudnn-dev-* rows device-resident, as the CUDA learner runs
// them) against a loop of the CUDA step cell over the same sequence and against the CPU sequence
// executor. The roofline is a cuBLAS SGEMM of the step's shape timed with CUDA events in the same
// run. CUDA builds only.
#pragma once

#include <string>
#include <vector>

#include "policy/core_spec.h"
#include "policy/gpu_executors.h"

namespace recur::cli {

struct GpuRnnBenchConfig {
  policy::CellType cell = policy::CellType::kLstm;
  int input = 8;
  int layers = 1;
  int device = 0;
  std::vector<int> batch = {1, 16, 64, 256, 1024};
  std::vector<int> hidden = {64, 128, 256};
  std::vector<int> seq_len = {32, 128};
  double min_seconds = 0.2;  // per timed measurement
  // Fraction of the sequence rows' timesteps that start an episode (resets inside the sequence,
  // as a learner's minibatch has them; 0.03 is TorchRL's RNN benchmark's rate). 0: none.
  double start_rate = 0;
  bool cpu = true;  // also time the CPU executors (slow for big B x T)
  // device.cudnn_math modes of the cuDNN rows: each beyond fma adds device-resident rows
  // (cudnn-dev-*-tf32, -fp16) for the standard algorithm.
  std::vector<policy::RnnMath> math = {policy::RnnMath::kFma};
  // device.cudnn_data types of the cuDNN rows: each beyond fp32 adds device-resident rows
  // (cudnn-dev-*-bf16, -fp16: 16-bit cuDNN data, fp32 master weights, the casts included).
  std::vector<policy::RnnData> data = {policy::RnnData::kFp32};
};

struct GpuRnnBenchRow {
  std::string mode;  // see bench_rnn_gpu.cc: gemm, cpu-step, cuda-step, cuda-step-graph, ...
  int batch = 0, hidden = 0, seq_len = 0;
  double us_per_call = 0;    // one step, or one whole (T, B) sequence
  double samples_per_s = 0;  // timestep-samples per second
  double gflops = 0;         // GEMM FLOPs only
  double roofline_fraction = 0;
  std::string note;  // e.g. the cuDNN algorithm that ran
};

// Throws recur::Error when the build has no CUDA or no GPU is usable.
std::vector<GpuRnnBenchRow> bench_rnn_gpu(const GpuRnnBenchConfig& config);

}  // namespace recur::cli
