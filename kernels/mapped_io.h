// Zero-copy step I/O: the actor's observations come in and its outputs go out through page-locked
// host memory MAPPED into the device's address space, moved by kernels instead of by the copy
// engine, and the host learns that a step is done from a flag the last kernel writes into host
// memory, instead of from cudaStreamSynchronize.
//
// Why: on the H100 (docs/PERFORMANCE.md, "the first H100 run") a pinned H2D copy + a D2H copy +
// a stream sync alone took 24 us, more than the whole compute of a small step: every memcpy-based
// step sits above that floor. A kernel reading mapped memory issues its PCIe reads itself (no DMA
// descriptor set-up) and the host polls a word in its own memory. `recur bench rnn-gpu` /
// `recur bench devices` measure both (io=copy and io=mapped rows side by side): on an H200 the
// mapped step took half the copy step's time at B 1 (15.7 against 31.5 us) and was faster at
// every measured shape (docs/PERFORMANCE.md, "GPU, second run"). The copy path stays the
// default after one card and one run.
//
// The protocol of one step:
//   host:   writes the inputs (and a fresh sequence number) into the mapped input block,
//           launches the step (a graph), spins on the mapped flag until it equals the number
//   device: launch_fetch copies the mapped input block into device memory (first kernel)
//           ... the step's kernels read device memory only ...
//           launch_emit copies the device outputs into the mapped output block, makes them
//           visible to the host (__threadfence_system) and then writes the number into the flag
//   host:   reads the outputs; the next step may rewrite the input block (fetch has run).
// wait_for_flag never hangs on a failed step: it asks the stream every so often and throws
// when the stream reports an error or finished without writing the flag.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace recur::kernels {

// dst[0, bytes) = src[0, bytes). bytes a multiple of 16, both pointers 16-byte aligned; src is
// typically the device pointer of a mapped host block, dst device memory.
void launch_fetch(const void* src, void* dst, size_t bytes, cudaStream_t stream);

struct EmitArgs {
  const float* src = nullptr;       // (n) device
  float* dst = nullptr;             // (n) mapped host memory (device pointer)
  size_t n = 0;                     // floats
  const uint32_t* seq = nullptr;    // device: this step's sequence number (in the fetched block)
  uint32_t* flag = nullptr;         // mapped host memory (device pointer): set to *seq last
  unsigned int* counter = nullptr;  // device, zero before the first launch: blocks finished
};
// dst = src, then *flag = *seq once every block's writes are visible to the host. Leaves
// *counter zero again, so the same launch can be replayed (in a graph).
void launch_emit(const EmitArgs& args, cudaStream_t stream);

// Host: returns once *flag (mapped host memory, host pointer) equals `expected`. Every 1024
// spins it asks `stream`: an error status throws recur::DeviceError; a finished stream whose flag
// is still different throws too (the step ran without its emit: a bug, never a hang).
void wait_for_flag(const uint32_t* flag, uint32_t expected, cudaStream_t stream);

}  // namespace recur::kernels
