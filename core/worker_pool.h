// A fixed set of threads that run one parallel-for at a time: run(count, fn) calls fn(c) once for
// every chunk c in [0, count) and returns when all are done. The chunks are dealt out as one
// contiguous share per thread, the calling one included; each thread claims the chunks of its own
// share one at a time, then claims (steals) the chunks left in the other threads' shares. So when
// the work is even, each thread keeps stepping the same chunks run after run (their data stays in
// its cache, and neighbouring chunks that share a cache line stay on one core), and when it is not,
// or a thread is slow, descheduled or still waking up, the free threads take over its chunks.
// Which thread runs which chunk is not fixed: fn(c) must not depend on it. run() returns as soon
// as the last chunk has finished; it does not wait for a late worker to check in.
//
// Built for per-step work (stepping chunks of a VectorEnv, a microsecond or less each): threads
// live as long as the pool, a run neither allocates nor creates threads, and between two runs a
// worker spins, then yields, and only then sleeps (WaitBudget), because a condition-variable
// wake-up (several microseconds, more on a loaded host) per run would cost more than the work. An
// exception thrown by fn(c) is rethrown by run() after every chunk has run (the other chunks still
// run; a thread keeps its first exception, and run() rethrows the one of the lowest thread index).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace recur {

class WorkerPool {
 public:
  // How long an idle worker waits for the next run before it sleeps on the condition variable.
  // The defaults bridge the gap between two env steps (the policy's act: ~0.2 ms on a GPU, up to
  // ~1-2 ms on the CPU for a large batch) without a wake-up, and cap what an idle pool burns
  // while a learner update (tens to hundreds of ms) runs at ~2 ms per worker.
  struct WaitBudget {
    // Busy-wait with the pause instruction: lowest latency; the core stays busy.
    std::chrono::microseconds spin{1000};
    // Then std::this_thread::yield() in a loop: still no wake-up, but another runnable thread on
    // the core (a policy thread, the learner) gets it first.
    std::chrono::microseconds yield{1000};
  };

  // Chunks of one run, at most (they are packed into one atomic word with the run's generation).
  static constexpr int kMaxChunks = (1 << 20) - 1;

  // `size` = number of threads, calling thread included (size 1 = no extra threads).
  explicit WorkerPool(int size) : WorkerPool(size, WaitBudget{}) {}
  WorkerPool(int size, WaitBudget wait);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return size_; }
  WaitBudget wait_budget() const;
  // Takes effect from each worker's next wait.
  void set_wait_budget(WaitBudget wait);

  // fn(c) for every c in [0, count), on any thread. `fn` must stay alive until run() returns (a
  // reference is kept, nothing is copied). count 0 returns at once.
  void run(int count, const std::function<void(int)>& fn);
  // run(size(), fn): one chunk per thread, e.g. one slice of work each.
  void run(const std::function<void(int)>& fn) { run(size_, fn); }

  // run() in two halves, for work that overlaps the caller's own: start() hands the chunks to the
  // workers and returns at once, so the calling thread is free (double-buffered env groups: the
  // policy acts on one group while the workers step the other); finish() takes whatever chunks
  // are still unclaimed on the calling thread, waits for the rest and rethrows as run() does.
  // Every start() needs its finish() before the next start() or run(); `fn` must stay alive until
  // finish() returns. With size 1 there are no workers: start() only records the run and
  // finish() does all of it.
  void start(int count, const std::function<void(int)>& fn);
  void finish();
  bool started() const { return pending_count_ > 0; }

 private:
  void worker_loop(int index);
  // Claims and runs chunks of run `generation`, its own share first, until none is left; the
  // thread's errors go to errors_[index].
  void work(int index, uint64_t generation);
  // Blocks until the published generation differs from `seen` (or the pool stops); returns it.
  uint64_t wait_for_run(uint64_t seen);
  int finished_chunks() const;  // of the current run, over all threads
  // Deals `count` chunks over the threads [first, size_) and wakes the workers; returns the run's
  // generation.
  uint64_t publish(int count, const std::function<void(int)>& fn, int first);
  // The calling thread's part of a published run: claims what is left, waits for the others'
  // chunks, rethrows the first error.
  void complete(int count, uint64_t generation);

  // One per thread, each on its own cache line: the thread's share of the run's chunks, and the
  // chunks this thread finished in the run (written by that thread only, read by run()).
  struct alignas(64) Share {
    // generation (24 bits) | end chunk (20 bits) | next chunk (20 bits), claimed by CAS: one
    // word, so a worker that wakes late can never claim a chunk of a run it did not read.
    std::atomic<uint64_t> claim{0};
    alignas(64) std::atomic<int> finished{0};
  };

  int size_;
  std::atomic<int64_t> spin_us_{0}, yield_us_{0};  // the WaitBudget; workers read it as they wait
  std::vector<std::thread> threads_;
  std::vector<std::exception_ptr> errors_;  // one per thread; set only while holding a chunk
  const std::function<void(int)>* task_ = nullptr;
  int pending_count_ = 0;  // chunks of a start() not yet finish()ed (0: none)
  uint64_t pending_generation_ = 0;
  std::unique_ptr<Share[]> shares_;
  alignas(64) std::atomic<uint64_t> generation_{0};  // of the last published run
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable work_ready_;
};

}  // namespace recur
