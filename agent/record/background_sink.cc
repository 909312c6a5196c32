#include "agent/record/background_sink.h"

#include <utility>

#include "core/error.h"

namespace recur::agent::record {

BackgroundSink::BackgroundSink(std::function<void(const Episode&)> write, int capacity)
    : write_(std::move(write)),
      capacity_(static_cast<size_t>(capacity)),
      thread_([this] { loop(); }) {
  RECUR_CHECK_ARG(capacity >= 1, "BackgroundSink: capacity {} must be >= 1", capacity);
}

BackgroundSink::~BackgroundSink() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundSink::rethrow_locked() {
  if (error_) std::rethrow_exception(error_);
}

void BackgroundSink::push(const Episode& episode) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return error_ || queue_.size() < capacity_; });
  rethrow_locked();
  queue_.push_back(episode);
  lock.unlock();
  changed_.notify_all();
}

void BackgroundSink::finish() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return error_ || (queue_.empty() && !writing_); });
  rethrow_locked();
}

void BackgroundSink::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Episode episode = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    changed_.notify_all();  // a slot is free
    std::exception_ptr error;
    try {
      write_(episode);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    writing_ = false;
    if (error && !error_) error_ = error;
    if (error_) queue_.clear();  // nothing after a failed write
    changed_.notify_all();
  }
}

}  // namespace recur::agent::record
