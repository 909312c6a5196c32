// `recur bench devices`: the crossover tables for choosing device.actor and device.learner, the
// whole policy (encoder, core, heads, sampling) rather than the bare core of `bench rnn-gpu`.
// Actor: one act() of B env slots (what the actor loop calls once per env step) on the CPU and,
// where a GPU is usable, on the GPU (one CUDA graph per step, observations in and actions out
// through pinned memory; a `cuda-mapped` row does the same with zero-copy I/O,
// kernels/mapped_io.h). Learner: one PPO minibatch (gather, replay of T steps of B envs,
// loss, backward, clip, Adam) on the host engine and on the CUDA engine. Wall clock per call,
// median of 3 chunks (bench_timing.h); every GPU call synchronizes, so wall clock is the truth.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace recur::cli {

struct DeviceBenchConfig {
  std::vector<int> envs = {1, 16, 64, 256, 1024};  // actor B
  std::vector<int> learner_envs = {16, 64, 256};   // learner B (minibatch envs)
  std::vector<int> hidden = {64, 256};
  int seq_len = 32;          // learner T
  double start_rate = 0.02;  // learner rollout's episode starts per env step (each cuts a sequence)
  // The GPU learner's cuDNN algorithm (device.cudnn_algo): standard, persist_small_h or auto.
  std::string cudnn_algo = "standard";
  int obs_dim = 16;
  int device = 0;
  double min_seconds = 0.2;
  bool gpu = true;      // GPU rows when a GPU is usable
  bool stages = false;  // also each GPU row's per-stage device time (plain launches)
};

struct DeviceBenchRow {
  std::string role;    // actor | learner
  std::string device;  // cpu | cuda
  int batch = 0, hidden = 0, seq_len = 0;
  double us_per_call = 0;    // one act(), or one minibatch update
  double samples_per_s = 0;  // env steps (actor) or timestep-samples (learner) per second
};

// Where one GPU act() or PPO minibatch spends its time: CUDA events at the stage boundaries the
// CUDA actor and engine mark (policy/stage_marker.h), on plain launches (a replayed graph has no
// boundaries), mean device microseconds per stage over the timed calls, in enqueue order. A
// stage's time includes any gap while the host was still preparing it.
struct DeviceStageRow {
  std::string role;  // actor | learner
  int batch = 0, hidden = 0, seq_len = 0;
  std::vector<std::pair<std::string, double>> stages;  // (name, mean us)
};

// The rows, in `note` why GPU rows are absent (no CUDA build, no GPU), and with config.stages
// the stage breakdown of every GPU row in `stages`.
std::vector<DeviceBenchRow> bench_devices(const DeviceBenchConfig& config, std::string* note,
                                          std::vector<DeviceStageRow>* stages = nullptr);

}  // namespace recur::cli
