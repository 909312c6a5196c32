// Deterministic reductions on the device: what every reducing launcher of the device learner
// (launch_gaussian_backward, launch_normalize_advantages, launch_ppo_loss, launch_grad_sq_norm)
// promises, and the scratch it needs.
//
// Every sum is taken in float64 in two fixed stages, never with atomics: (1) a grid whose size
// depends only on the problem size (not on the GPU) has each thread add its grid-stride elements
// in order and each block add its threads in a fixed tree; (2) one block per summed quantity adds
// the per-block partials in a fixed tree. The same inputs therefore give the same bits on every
// run and every GPU, so that a training run is reproducible. The order differs from the host's
// serial loop, so sums agree with the CPU learner's to ~1e-15 relative (of the sum of |terms|),
// not bitwise.
//
// Plain C++: includable without CUDA (the learner sizes its workspace with it).
#pragma once

namespace recur::kernels {

// The device scratch, in doubles (64 KiB), that each reducing launcher may overwrite: its
// per-block partials and small intermediate results. Allocate it once with the learner's
// workspace (DeviceBuffer<double>(kReductionScratch)). Launches on ONE stream may share one
// scratch (each launcher is done with it when its last kernel ends); launches that may overlap
// (different streams) need one each. Its contents between launches mean nothing.
inline constexpr int kReductionScratch = 8192;

}  // namespace recur::kernels
