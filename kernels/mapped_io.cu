// The zero-copy step I/O kernels (see mapped_io.h for the protocol).
#include "core/error.h"
#include "kernels/mapped_io.h"

namespace recur::kernels {
namespace {

constexpr int kBlock = 256;
// Enough blocks to keep every SM's PCIe reads or writes in flight at the largest actor sizes
// (B 1024 x H 256 = 1 MiB of h), few enough that the emit's last-block count stays cheap.
constexpr int kMaxBlocks = 264;

int grid_for(size_t n) {
  const size_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<int>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks);
}

// 16-byte words: one PCIe read request carries as much as a thread can ask for at once.
__global__ void fetch_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// The threadfence-reduction pattern of the CUDA programming guide, at system scope: every thread
// fences its own writes before its block reports; the block that reports last knows that all
// data is out and only then writes the flag.
__global__ void emit_kernel(EmitArgs a) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < a.n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    a.dst[i] = a.src[i];
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned int finished = atomicAdd(a.counter, 1u);
    if (finished == gridDim.x - 1) {
      atomicExch(a.counter, 0u);  // the next replay counts from zero (it runs after this kernel)
      __threadfence_system();
      *reinterpret_cast<volatile uint32_t*>(a.flag) = *a.seq;
    }
  }
}

}  // namespace

void launch_fetch(const void* src, void* dst, size_t bytes, cudaStream_t stream) {
  RECUR_ASSERT(bytes % 16 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0 &&
               reinterpret_cast<uintptr_t>(dst) % 16 == 0);
  const size_t n = bytes / 16;
  if (n == 0) return;
  fetch_kernel<<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint4*>(src),
                                                   static_cast<uint4*>(dst), n);
  CUDA_CHECK(cudaGetLastError());
}

void launch_emit(const EmitArgs& args, cudaStream_t stream) {
  RECUR_ASSERT(args.src && args.dst && args.seq && args.flag && args.counter);
  emit_kernel<<<grid_for(args.n), kBlock, 0, stream>>>(args);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace recur::kernels
