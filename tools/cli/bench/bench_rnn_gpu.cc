#include "tools/cli/bench/bench_rnn_gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "core/error.h"
#include "core/rng.h"
#include "policy/cpu/cpu_sequence_executor.h"
#include "policy/cpu/cpu_step_executor.h"
#include "policy/devices.h"
#include "tools/cli/bench/bench_timing.h"

#ifdef RECUR_WITH_CUDA
#include <cublas_v2.h>

#include "kernels/cuda_memory.h"
#include "policy/cuda/cuda_sequence_executor.h"
#include "policy/cudnn/cudnn_sequence_executor.h"
#include "policy/gpu_executors.h"
#endif

namespace recur::cli {

#ifndef RECUR_WITH_CUDA
std::vector<GpuRnnBenchRow> bench_rnn_gpu(const GpuRnnBenchConfig&) {
  throw Error(
      "recur bench rnn-gpu: this build of recur has no CUDA support (configured with "
      "RECUR_CUDA=OFF or without the CUDA toolkit); use `recur bench rnn` for the CPU executors");
}
#else
namespace {

// The GPU roofline of the step's GEMM: (B, K) x (K, C) in fp32 without TF32 (what the step
// executor runs), device time from CUDA events, median of 3 batches of calls.
double cublas_gemm_seconds(int B, int K, int C, double min_seconds, Rng& rng) {
  kernels::CudaStream stream;
  kernels::DeviceBuffer<float> a(static_cast<size_t>(B) * K), w(static_cast<size_t>(K) * C),
      out(static_cast<size_t>(B) * C);
  a.upload(random_vec(a.size(), rng), stream.get());
  w.upload(random_vec(w.size(), rng), stream.get());
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  const float one = 1, zero = 0;
  auto run = [&](int calls) {
    for (int i = 0; i < calls; ++i)
      CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, C, B, K, &one, w.data(), C,
                               a.data(), K, &zero, out.data(), C));
  };
  double result = 0;
  try {
    CUBLAS_CHECK(cublasSetStream(handle, stream.get()));
    CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    kernels::CudaEvent start, stop;
    run(5);
    start.record(stream.get());
    run(20);
    stop.record(stream.get());
    stop.synchronize();
    const double per_call = stop.ms_since(start) / 1e3 / 20;
    const int calls = std::max(20, static_cast<int>(min_seconds / 3 / std::max(per_call, 1e-7)));
    std::vector<double> chunks;
    for (int c = 0; c < 3; ++c) {
      start.record(stream.get());
      run(calls);
      stop.record(stream.get());
      stop.synchronize();
      chunks.push_back(stop.ms_since(start) / 1e3 / calls);
    }
    std::sort(chunks.begin(), chunks.end());
    result = chunks[1];
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
  cublasDestroy(handle);
  return result;
}

}  // namespace

std::vector<GpuRnnBenchRow> bench_rnn_gpu(const GpuRnnBenchConfig& config) {
  const auto devices = policy::query_devices();
  RECUR_CHECK(devices.cuda_usable(), "recur bench rnn-gpu: no usable GPU: {}",
              devices.gpu_unavailable);
  std::vector<GpuRnnBenchRow> rows;
  Rng rng(1);
  for (int H : config.hidden) {
    const policy::CoreSpec spec{config.cell, config.input, H, config.layers, 0};
    spec.validate();
    const auto weights = policy::CanonicalWeights::random(spec, rng);
    const int G = spec.gates();
    const int columns = config.cell == policy::CellType::kGru ? 4 * H : G * H;
    // 2 (in_k + H) G H per layer: true work, no GRU zero block; minGRU has no recurrent GEMM.
    const bool cudnn_cell =
        config.cell != policy::CellType::kLstmLn && !policy::is_mingru(config.cell);
    double flops_per_sample = 0;
    for (int k = 0; k < spec.layers; ++k)
      flops_per_sample += 2.0 * (spec.layer_input(k) + (spec.recurrent_rows() > 0 ? H : 0)) * G * H;

    for (int B : config.batch) {
      const int width = config.input + H;
      const double gemm_s = cublas_gemm_seconds(B, width, columns, config.min_seconds, rng);
      const double roof = 2.0 * B * width * columns / gemm_s / 1e9;
      rows.push_back({"gemm", B, H, 1, gemm_s * 1e6, B / gemm_s, roof, 1.0, "cuBLAS, device"});
      auto add = [&](const std::string& mode, int T, double seconds, double flops,
                     std::string note) {
        const double samples = static_cast<double>(B) * T;
        const double gflops = flops * samples / seconds / 1e9;
        rows.push_back({mode, B, H, T, seconds * 1e6, samples / seconds, gflops, gflops / roof,
                        std::move(note)});
      };

      const auto x = random_vec(static_cast<size_t>(B) * config.input, rng);
      std::vector<uint8_t> starts(static_cast<size_t>(B), 0);
      std::vector<float> h(static_cast<size_t>(B) * H);
      if (config.cpu) {
        policy::CpuStepExecutor cpu(spec, B);
        cpu.load(weights);
        add("cpu-step", 1, time_per_call(config.min_seconds, [&] { cpu.step(x, starts, h); }),
            flops_per_sample, "host");
      }
      struct StepMode {
        const char* name;
        bool graph;
        policy::StepIo io;
        const char* note;
      };
      for (const StepMode& m :
           {StepMode{"cuda-step", false, policy::StepIo::kCopy, "incl. H2D obs + D2H h"},
            StepMode{"cuda-step-graph", true, policy::StepIo::kCopy, "incl. H2D obs + D2H h"},
            StepMode{"cuda-step-mapped", true, policy::StepIo::kMapped,
                     "zero-copy obs + h, flag wait"}}) {
        auto step = policy::make_cuda_step_executor(spec, B, {config.device, m.graph, m.io});
        step->load(weights);
        add(m.name, 1, time_per_call(config.min_seconds, [&] { step->step(x, starts, h); }),
            flops_per_sample, m.note);
      }

      for (int T : config.seq_len) {
        const auto tb = static_cast<size_t>(T) * B;
        const auto xs = random_vec(tb * config.input, rng);
        const auto s0 = random_vec(static_cast<size_t>(B) * spec.state_size(), rng);
        const auto dy = random_vec(tb * H, rng);
        const auto seq_starts = episode_starts(tb, config.start_rate);
        std::vector<float> y(tb * H), dx(tb * config.input), ds(s0.size());
        // Device-resident, as the CUDA learner runs it (and as PyTorch's nn.LSTM rows measure):
        // x, y, dy, dx in device memory, only the plan and the initial states staged from the
        // host. The host-span rows also move x, y and the gradients across PCIe every call.
        auto time_device = [&](policy::DeviceSequenceExecutor& dev, const std::string& prefix,
                               const std::function<std::string()>& note, double flops,
                               const std::vector<float>& state0) {
          dev.set_device_resident(true);
          kernels::DeviceBuffer<float> d_x(xs.size()), d_y(y.size()), d_dy(dy.size()),
              d_dx(dx.size());
          d_x.upload(xs, dev.stream());
          d_dy.upload(dy, dev.stream());
          CUDA_CHECK(cudaStreamSynchronize(dev.stream()));
          const double dev_fwd = time_per_call(config.min_seconds, [&] {
            dev.forward_device(T, B, d_x.data(), seq_starts, state0, d_y.data());
            CUDA_CHECK(cudaStreamSynchronize(dev.stream()));
          });
          add(prefix + "-dev-fwd", T, dev_fwd, flops, note() + "device-resident");
          const double dev_both = time_per_call(config.min_seconds, [&] {
            dev.forward_device(T, B, d_x.data(), seq_starts, state0, d_y.data());
            dev.backward_device(d_dy.data(), d_dx.data());
            CUDA_CHECK(cudaStreamSynchronize(dev.stream()));
          });
          add(prefix + "-dev-fwd+bwd", T, dev_both, 3 * flops, note() + "device-resident");
        };
        if (!cudnn_cell) {
          // recur's fused kernels (lstm_ln, mingru), host-span and device-resident.
          policy::CudaSequenceExecutor seq(spec, config.device);
          seq.load(weights);
          add("fused-fwd", T,
              time_per_call(config.min_seconds, [&] { seq.forward(T, B, xs, seq_starts, s0, y); }),
              flops_per_sample, "recur's CUDA kernels");
          add("fused-fwd+bwd", T,
              time_per_call(config.min_seconds,
                            [&] {
                              seq.forward(T, B, xs, seq_starts, s0, y);
                              seq.backward(dy, dx, ds);
                            }),
              3 * flops_per_sample, "recur's CUDA kernels");
          policy::CudaSequenceExecutor dev(spec, config.device);
          dev.load(weights);
          time_device(
              dev, "fused", [] { return std::string(); }, flops_per_sample, s0);
          // The yardstick of issue 37: cuDNN's plain LSTM of the same input, H and layers.
          const policy::CoreSpec lstm{policy::CellType::kLstm, config.input, H, config.layers, 0};
          double lstm_flops = 0;
          for (int k = 0; k < lstm.layers; ++k)
            lstm_flops += 2.0 * (lstm.layer_input(k) + H) * 4 * H;
          policy::CudnnSequenceExecutor ref(
              lstm, {config.device, policy::RnnMath::kFma, policy::RnnAlgo::kStandard});
          ref.load(policy::CanonicalWeights::random(lstm, rng));
          const auto lstm_s0 = random_vec(static_cast<size_t>(B) * lstm.state_size(), rng);
          time_device(
              ref, "cudnn-lstm", [] { return std::string("cuDNN LSTM, same H; "); }, lstm_flops,
              lstm_s0);
        }
        for (auto algo : {policy::RnnAlgo::kStandard, policy::RnnAlgo::kPersistSmallH}) {
          if (!cudnn_cell) break;
          auto seq = policy::make_cudnn_sequence_executor(
              spec, {config.device, policy::RnnMath::kFma, algo});
          seq->load(weights);
          auto* cudnn = dynamic_cast<policy::CudnnSequenceExecutor*>(seq.get());
          RECUR_ASSERT(cudnn != nullptr);
          const std::string suffix = algo == policy::RnnAlgo::kStandard ? "" : "-persist";
          const double fwd =
              time_per_call(config.min_seconds, [&] { seq->forward(T, B, xs, seq_starts, s0, y); });
          const std::string ran = std::string(policy::to_string(cudnn->last_algo()));
          add("cudnn-fwd" + suffix, T, fwd, flops_per_sample, "algo " + ran);
          const double both = time_per_call(config.min_seconds, [&] {
            seq->forward(T, B, xs, seq_starts, s0, y);
            seq->backward(dy, dx, ds);
          });
          add("cudnn-fwd+bwd" + suffix, T, both, 3 * flops_per_sample, "algo " + ran);
          policy::CudnnSequenceExecutor dev(spec, {config.device, policy::RnnMath::kFma, algo});
          dev.load(weights);
          time_device(
              dev, "cudnn" + suffix,
              [&] { return "algo " + std::string(policy::to_string(dev.last_algo())) + ", "; },
              flops_per_sample, s0);
          // Tensor-core math (device.cudnn_math), device-resident, standard algorithm.
          for (const policy::RnnMath math : config.math) {
            if (math == policy::RnnMath::kFma || algo != policy::RnnAlgo::kStandard) continue;
            policy::CudnnSequenceExecutor tc(spec, {config.device, math, algo});
            tc.load(weights);
            const std::string name(policy::to_string(math));
            time_device(
                tc, "cudnn-" + name, [&] { return "math " + name + ", "; }, flops_per_sample, s0);
          }
          // 16-bit data (device.cudnn_data), device-resident, standard algorithm.
          for (const policy::RnnData data : config.data) {
            if (data == policy::RnnData::kFp32 || algo != policy::RnnAlgo::kStandard) continue;
            policy::CudnnSequenceOptions options{config.device, policy::RnnMath::kFma, algo};
            options.data = data;
            policy::CudnnSequenceExecutor low(spec, options);
            low.load(weights);
            const std::string name(policy::to_string(data));
            time_device(
                low, "cudnn-" + name, [&] { return "data " + name + ", "; }, flops_per_sample, s0);
          }
        }
        {
          // The "vanilla" GPU baseline: the step cell called T times (graph replay per step).
          auto step = policy::make_cuda_step_executor(spec, B, {config.device, true});
          step->load(weights);
          const double loop = time_per_call(config.min_seconds, [&] {
            for (int t = 0; t < T; ++t)
              step->step(
                  std::span<const float>(xs).subspan(static_cast<size_t>(t) * B * config.input,
                                                     static_cast<size_t>(B) * config.input),
                  starts, h);
          });
          add("cuda-step-loop", T, loop, flops_per_sample, "T graph replays");
        }
        if (config.cpu) {
          policy::CpuSequenceExecutor cpu(spec);
          cpu.load(weights);
          add("cpu-seq-fwd", T,
              time_per_call(config.min_seconds, [&] { cpu.forward(T, B, xs, seq_starts, s0, y); }),
              flops_per_sample, "host");
          add("cpu-seq-fwd+bwd", T,
              time_per_call(config.min_seconds,
                            [&] {
                              cpu.forward(T, B, xs, seq_starts, s0, y);
                              cpu.backward(dy, dx, ds);
                            }),
              3 * flops_per_sample, "host");
        }
      }
    }
  }
  return rows;
}
#endif

}  // namespace recur::cli
