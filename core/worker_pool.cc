#include "core/worker_pool.h"

#include <algorithm>

#include "core/error.h"

namespace recur {
namespace {
using Clock = std::chrono::steady_clock;

// A share's claim word: generation (bits 40-63) | end chunk (bits 20-39) | next chunk (bits 0-19).
constexpr int kEndShift = 20;
constexpr int kGenerationShift = 40;
constexpr uint64_t kFieldMask = (uint64_t{1} << 20) - 1;
constexpr uint64_t kGenerationMask = (uint64_t{1} << 24) - 1;

uint64_t generation_of(uint64_t word) {
  return word >> kGenerationShift;
}
int end_of(uint64_t word) {
  return static_cast<int>((word >> kEndShift) & kFieldMask);
}
int next_of(uint64_t word) {
  return static_cast<int>(word & kFieldMask);
}

// Pause instructions between two clock reads while spinning: a clock read (~20 ns) per ~1-3 us of
// spinning keeps the budget accurate without slowing the reaction to a new run.
constexpr int kPausesPerClockRead = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}
}  // namespace

WorkerPool::WorkerPool(int size, WaitBudget wait) : size_(size) {
  RECUR_CHECK_ARG(size >= 1, "WorkerPool size must be >= 1, got {}", size);
  errors_.resize(static_cast<size_t>(size));
  shares_ = std::make_unique<Share[]>(static_cast<size_t>(size));
  set_wait_budget(wait);
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

WorkerPool::WaitBudget WorkerPool::wait_budget() const {
  return {std::chrono::microseconds(spin_us_.load(std::memory_order_relaxed)),
          std::chrono::microseconds(yield_us_.load(std::memory_order_relaxed))};
}

void WorkerPool::set_wait_budget(WaitBudget wait) {
  RECUR_CHECK_ARG(wait.spin.count() >= 0 && wait.yield.count() >= 0,
                  "WorkerPool wait budget: spin {} us and yield {} us must be >= 0",
                  wait.spin.count(), wait.yield.count());
  spin_us_.store(wait.spin.count(), std::memory_order_relaxed);
  yield_us_.store(wait.yield.count(), std::memory_order_relaxed);
}

namespace {
// Runs every chunk on the calling thread; rethrows the first error after all have run.
void run_inline(int count, const std::function<void(int)>& fn) {
  std::exception_ptr first;
  for (int c = 0; c < count; ++c) {
    try {
      fn(c);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}
}  // namespace

void WorkerPool::run(int count, const std::function<void(int)>& fn) {
  RECUR_CHECK_ARG(count >= 0 && count <= kMaxChunks, "WorkerPool::run: {} chunks; use 0 to {}",
                  count, kMaxChunks);
  RECUR_CHECK(pending_count_ == 0, "WorkerPool::run while a start()ed run is not finish()ed");
  if (count == 0) return;
  if (size_ == 1) return run_inline(count, fn);
  complete(count, publish(count, fn, 0));
}

void WorkerPool::start(int count, const std::function<void(int)>& fn) {
  RECUR_CHECK_ARG(count >= 0 && count <= kMaxChunks, "WorkerPool::start: {} chunks; use 0 to {}",
                  count, kMaxChunks);
  RECUR_CHECK(pending_count_ == 0, "WorkerPool::start while a start()ed run is not finish()ed");
  if (count == 0) return;
  task_ = &fn;
  pending_count_ = count;
  // The calling thread is busy until finish(): its share goes to the workers (it steals back what
  // they have not claimed by then).
  if (size_ > 1) pending_generation_ = publish(count, fn, 1);
}

void WorkerPool::finish() {
  if (pending_count_ == 0) return;
  const int count = pending_count_;
  pending_count_ = 0;
  if (size_ == 1) {
    const auto* fn = task_;
    task_ = nullptr;
    return run_inline(count, *fn);
  }
  complete(count, pending_generation_);
}

uint64_t WorkerPool::publish(int count, const std::function<void(int)>& fn, int first) {
  task_ = &fn;
  const uint64_t generation = (generation_.load(std::memory_order_relaxed) + 1) & kGenerationMask;
  const int workers = size_ - first;
  for (int t = 0; t < size_; ++t) {
    // Threads below `first` get an empty share at `count` (they may still steal).
    const int k = std::max(t - first, 0);
    const auto begin =
        t < first ? uint64_t(count) : static_cast<uint64_t>(int64_t{k} * count / workers);
    const auto end =
        t < first ? uint64_t(count) : static_cast<uint64_t>(int64_t{k + 1} * count / workers);
    shares_[t].finished.store(0, std::memory_order_relaxed);
    shares_[t].claim.store(generation << kGenerationShift | end << kEndShift | begin,
                           std::memory_order_relaxed);
  }
  // The seq_cst store publishes the shares and task_ (release); with the seq_cst load of
  // sleepers_ after it, against a worker's increment of sleepers_ then load of generation_, at
  // least one side sees the other: no wake-up is lost, and the mutex and notify are paid only
  // when a worker actually went to sleep.
  generation_.store(generation);
  if (sleepers_.load() > 0) {
    { std::lock_guard lock(mutex_); }
    work_ready_.notify_all();
  }
  return generation;
}

void WorkerPool::complete(int count, uint64_t generation) {
  work(0, generation);
  // Only chunks already claimed by other threads are left: wait for them. Spin first (a chunk is
  // short), then yield so that a worker descheduled mid-chunk on a busy core can finish.
  const auto spin_until = Clock::now() + std::chrono::microseconds(spin_us_.load());
  while (finished_chunks() < count) {
    for (int k = 0; k < kPausesPerClockRead && finished_chunks() < count; ++k) cpu_relax();
    if (Clock::now() >= spin_until) std::this_thread::yield();
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

int WorkerPool::finished_chunks() const {
  int n = 0;
  for (int t = 0; t < size_; ++t) n += shares_[t].finished.load(std::memory_order_acquire);
  return n;
}

void WorkerPool::work(int index, uint64_t generation) {
  auto& finished = shares_[index].finished;
  // Own share first, then the others' in turn (each thread starts stealing at its neighbour, so
  // the thieves spread over the shares).
  for (int k = 0; k < size_; ++k) {
    auto& claim = shares_[(index + k) % size_].claim;
    uint64_t word = claim.load(std::memory_order_acquire);
    for (;;) {
      if (generation_of(word) != generation || next_of(word) >= end_of(word)) break;
      // Success means the run is still `generation` and chunk next_of(word) is ours; its task_ is
      // valid until the chunk is counted finished (run() cannot return before).
      if (!claim.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        continue;
      try {
        (*task_)(next_of(word));
      } catch (...) {
        auto& slot = errors_[static_cast<size_t>(index)];
        if (!slot) slot = std::current_exception();
      }
      // This thread is the counter's only writer during a run (run() resets it before publishing).
      finished.store(finished.load(std::memory_order_relaxed) + 1, std::memory_order_release);
      word = claim.load(std::memory_order_acquire);
    }
    // A newer run already started: this one is over.
    if (generation_.load(std::memory_order_relaxed) != generation) return;
  }
}

uint64_t WorkerPool::wait_for_run(uint64_t seen) {
  uint64_t generation = seen;
  auto changed = [&] {
    // seq_cst: the load that pairs with run()'s store when this worker is about to sleep.
    generation = generation_.load();
    return generation != seen || stopping_.load(std::memory_order_relaxed);
  };
  if (changed()) return generation;
  // Spin, then yield, then sleep: see WaitBudget for why each phase and its default length.
  const auto start = Clock::now();
  const auto spin_end = start + std::chrono::microseconds(spin_us_.load(std::memory_order_relaxed));
  const auto yield_end =
      spin_end + std::chrono::microseconds(yield_us_.load(std::memory_order_relaxed));
  do {
    for (int k = 0; k < kPausesPerClockRead; ++k) {
      if (changed()) return generation;
      cpu_relax();
    }
  } while (Clock::now() < spin_end);
  while (Clock::now() < yield_end) {
    if (changed()) return generation;
    std::this_thread::yield();
  }
  std::unique_lock lock(mutex_);
  sleepers_.fetch_add(1);
  work_ready_.wait(lock, changed);
  sleepers_.fetch_sub(1);
  return generation;
}

void WorkerPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    seen = wait_for_run(seen);
    if (stopping_.load(std::memory_order_relaxed)) return;
    work(index, seen);
  }
}

}  // namespace recur
