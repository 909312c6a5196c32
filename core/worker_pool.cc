#include "core/worker_pool.h"

#include "core/error.h"

namespace recur {
namespace {
// Spin iterations before a waiting thread yields the core (each about one pause instruction);
// long enough to bridge the gap between two env steps, short enough not to burn a core while a
// learner update runs.
constexpr int kSpinsBeforeSleep = 1 << 14;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}
}  // namespace

WorkerPool::WorkerPool(int size) : size_(size), errors_(static_cast<size_t>(size)) {
  RECUR_CHECK_ARG(size >= 1, "WorkerPool size must be >= 1, got {}", size);
  threads_.reserve(static_cast<size_t>(size - 1));
  for (int i = 1; i < size; ++i) threads_.emplace_back([this, i] { worker_loop(i); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::run_slice(int index) {
  try {
    (*task_)(index);
  } catch (...) {
    errors_[static_cast<size_t>(index)] = std::current_exception();
  }
}

void WorkerPool::run(const std::function<void(int)>& fn) {
  if (size_ == 1) {
    fn(0);
    return;
  }
  task_ = &fn;
  pending_.store(size_ - 1, std::memory_order_relaxed);
  {
    // Publishing under the mutex pairs with a worker's check-then-wait: no lost wake-up.
    std::lock_guard lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  work_ready_.notify_all();
  run_slice(0);
  for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < kSpinsBeforeSleep) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  task_ = nullptr;
  for (auto& e : errors_) {
    if (e) {
      auto first = e;
      for (auto& other : errors_) other = nullptr;
      std::rethrow_exception(first);
    }
  }
}

void WorkerPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    // Spin for the next run first; sleep on the condition variable when none comes soon.
    uint64_t now = generation_.load(std::memory_order_acquire);
    for (int spins = 0; now == seen && spins < kSpinsBeforeSleep && !stopping_; ++spins) {
      cpu_relax();
      now = generation_.load(std::memory_order_acquire);
    }
    if (now == seen) {
      std::unique_lock lock(mutex_);
      work_ready_.wait(
          lock, [&] { return stopping_ || generation_.load(std::memory_order_acquire) != seen; });
      now = generation_.load(std::memory_order_acquire);
    }
    if (stopping_) return;
    seen = now;
    run_slice(index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace recur
