// The host side of the zero-copy step protocol (mapped_io.h): spinning on the completion flag.
#include <atomic>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "kernels/mapped_io.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace recur::kernels {
namespace {

uint32_t load_flag(const uint32_t* flag) {
  // The device writes the flag after a system-scope fence; an acquire load on the host orders
  // the reads of the outputs after it.
  return std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(flag)).load(std::memory_order_acquire);
}

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();  // a spinning hyper-thread yields its core's pipeline to its sibling
#endif
}

}  // namespace

void wait_for_flag(const uint32_t* flag, uint32_t expected, cudaStream_t stream) {
  for (uint64_t spins = 1;; ++spins) {
    if (load_flag(flag) == expected) return;
    relax();
    if (spins % 1024 != 0) continue;
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaErrorNotReady) continue;
    CUDA_CHECK(status);
    // The stream is idle, so everything it wrote is visible: the flag is final now.
    if (load_flag(flag) == expected) return;
    throw DeviceError(
        "a zero-copy step finished without writing its completion flag (expected sequence " +
        std::to_string(expected) + ", found " + std::to_string(load_flag(flag)) +
        "): the step's enqueue sequence lacks its emit kernel; this is a bug in recur");
  }
}

}  // namespace recur::kernels
