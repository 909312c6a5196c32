#include "core/worker_pool.h"

#include "core/error.h"

namespace recur {

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
  {
    std::lock_guard lock(mutex_);
    task_ = &fn;
    pending_ = size_ - 1;
    ++generation_;
  }
  work_ready_.notify_all();
  run_slice(0);
  {
    std::unique_lock lock(mutex_);
    work_done_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
  }
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
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_slice(index);
    {
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) work_done_.notify_one();
    }
  }
}

}  // namespace recur
