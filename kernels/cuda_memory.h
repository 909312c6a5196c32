// RAII owners for what the GPU executors hold: device buffers, pinned host buffers, streams,
// events and CUDA graphs. Host C++ only (no kernels here), usable from policy/ and tools/ in CUDA
// builds. Every failure throws recur::DeviceError through CUDA_CHECK; destructors never throw (a
// failing free at shutdown is ignored: nothing useful can be done with it).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <span>
#include <utility>

#include "core/error.h"

namespace recur::kernels {

// n elements of T in device memory (uninitialized unless zero() is called).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { resize(n); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Reallocates only when n differs; contents are lost then.
  void resize(size_t n) {
    if (n == size_) return;
    release();
    if (n > 0) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T)));
    size_ = n;
  }
  // Grows to at least n (never shrinks): for workspaces re-sized per call shape.
  void reserve(size_t n) {
    if (n > size_) resize(n);
  }
  void zero(cudaStream_t stream) {
    if (size_ > 0) CUDA_CHECK(cudaMemsetAsync(ptr_, 0, bytes(), stream));
  }
  void upload(std::span<const T> host, cudaStream_t stream, size_t offset = 0) {
    RECUR_ASSERT(offset + host.size() <= size_);
    if (!host.empty())
      CUDA_CHECK(cudaMemcpyAsync(ptr_ + offset, host.data(), host.size_bytes(),
                                 cudaMemcpyHostToDevice, stream));
  }
  void download(std::span<T> host, cudaStream_t stream, size_t offset = 0) const {
    RECUR_ASSERT(offset + host.size() <= size_);
    if (!host.empty())
      CUDA_CHECK(cudaMemcpyAsync(host.data(), ptr_ + offset, host.size_bytes(),
                                 cudaMemcpyDeviceToHost, stream));
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }

 private:
  void release() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  T* ptr_ = nullptr;
  size_t size_ = 0;
};

// n elements of T in page-locked host memory: the staging area of async copies (a copy from
// pageable memory is synchronous and cannot be captured in a graph).
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t n) { resize(n); }
  ~PinnedBuffer() { release(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void resize(size_t n) {
    if (n == size_) return;
    release();
    if (n > 0) CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_), n * sizeof(T)));
    size_ = n;
  }
  void reserve(size_t n) {
    if (n > size_) resize(n);
  }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return size_; }
  std::span<T> span() { return {ptr_, size_}; }

 private:
  void release() noexcept {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  T* ptr_ = nullptr;
  size_t size_ = 0;
};

// n elements of T in page-locked host memory mapped into the device's address space
// (cudaHostAllocMapped): the host reads and writes data(), kernels device(). Not write-combined:
// the output blocks are read by the host, and for the input blocks plain cached memory spares
// the fencing that write-combined stores would need before a launch. See mapped_io.h.
template <typename T>
class MappedBuffer {
 public:
  MappedBuffer() = default;
  explicit MappedBuffer(size_t n) { resize(n); }
  ~MappedBuffer() { release(); }
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;

  // Reallocates only when n differs; contents are lost then (zeroed when allocated).
  void resize(size_t n) {
    if (n == size_) return;
    release();
    if (n > 0) {
      CUDA_CHECK(
          cudaHostAlloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T), cudaHostAllocMapped));
      size_ = n;
      std::memset(static_cast<void*>(ptr_), 0, n * sizeof(T));
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_ptr_), ptr_, 0));
    }
  }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  T* device() const { return device_ptr_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }

 private:
  void release() noexcept {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    device_ptr_ = nullptr;
    size_ = 0;
  }
  T* ptr_ = nullptr;
  T* device_ptr_ = nullptr;
  size_t size_ = 0;
};

// A non-blocking stream owned by one executor.
class CudaStream {
 public:
  CudaStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// An instantiated CUDA graph: captured once from a stream, replayed with one launch.
class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph() { release(); }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Records what `record(stream)` enqueues on `stream` (nothing runs) and instantiates it. If
  // recording throws, the capture is ended and discarded before the error propagates.
  template <typename F>
  void capture(cudaStream_t stream, F&& record) {
    release();
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      record(stream);
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream, &broken);
      if (broken) cudaGraphDestroy(broken);
      cudaGetLastError();
      throw;
    }
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  bool ready() const { return exec_ != nullptr; }
  void launch(cudaStream_t stream) const { CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }
  void reset() { release(); }

 private:
  void release() noexcept {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Device-side timing for benchmarks: elapsed milliseconds between two recorded points.
class CudaEvent {
 public:
  CudaEvent() { CUDA_CHECK(cudaEventCreate(&event_)); }
  // cudaEventDisableTiming: a fork or join point only, cheaper to record and wait on.
  explicit CudaEvent(unsigned flags) { CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags)); }
  ~CudaEvent() {
    if (event_) cudaEventDestroy(event_);
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  void record(cudaStream_t stream) { CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() const { CUDA_CHECK(cudaEventSynchronize(event_)); }
  // Work enqueued on `stream` after this call waits for the last recorded point (a fork or join
  // between two streams, with no host wait).
  void wait_in(cudaStream_t stream) const { CUDA_CHECK(cudaStreamWaitEvent(stream, event_, 0)); }
  float ms_since(const CudaEvent& start) const {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace recur::kernels
