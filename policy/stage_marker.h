// Stage boundaries of a GPU enqueue sequence, for `recur bench devices --stages`: where the time
// of one actor step or one PPO minibatch goes when no profiler is at hand. The CUDA policy actor
// and the CUDA PPO engine call mark() at each boundary of what they enqueue when a marker is set;
// only the benchmark sets one, on an actor that launches plainly (no graph replay). A marker
// typically records a CUDA event on `stream`, so one stage's time is the device time between two
// marks: its kernels, its copies, and any gap while the host was still preparing it. No CUDA
// header here (CUstream_st is cudaStream_t's struct), so CPU-only builds compile the hooks.
#pragma once

struct CUstream_st;

namespace recur::policy {

class StageMarker {
 public:
  // The first mark of a step or minibatch: where its first stage begins.
  static constexpr const char* kStart = "(start)";

  virtual ~StageMarker() = default;
  // The stage `stage` (a string literal, kept by pointer) ends here on `stream`.
  virtual void mark(const char* stage, CUstream_st* stream) = 0;
};

}  // namespace recur::policy
