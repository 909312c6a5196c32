// A fixed set of threads that run one parallel-for at a time: run(fn) calls fn(i) for every
// i in [0, size()) with i = 0 on the calling thread, and returns when all are done. Built for
// per-step work (stepping slices of a VectorEnv, a microsecond or less per slice): threads live
// as long as the pool, a run neither allocates nor creates threads, and the hand-off spins
// briefly before sleeping, because a condition-variable wake-up alone (several microseconds)
// would cost more than the work. An exception thrown by any fn(i) is rethrown by run() after
// every slice has finished.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace recur {

class WorkerPool {
 public:
  // `size` = number of parallel slices, calling thread included (size 1 = no extra threads).
  explicit WorkerPool(int size);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return size_; }

  // `fn` must stay alive until run() returns (a reference is kept, nothing is copied).
  void run(const std::function<void(int)>& fn);

 private:
  void worker_loop(int index);
  void run_slice(int index);

  int size_;
  std::vector<std::thread> threads_;
  std::vector<std::exception_ptr> errors_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  const std::function<void(int)>* task_ = nullptr;
  std::atomic<uint64_t> generation_{0};  // bumped once per run; workers wait for a change
  std::atomic<int> pending_{0};          // worker slices of the current run not finished yet
  std::atomic<bool> stopping_{false};
};

}  // namespace recur
