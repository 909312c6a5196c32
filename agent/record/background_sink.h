// BackgroundSink: hands recorded episodes to a writer on its own thread, so that writing episode
// i (HDF5 groups, attributes, datasets: ~0.35 ms for a CartPole episode) overlaps recording
// episode i + 1 instead of adding to it.
//
//   MinariWriter writer(root, info);
//   BackgroundSink sink([&](const Episode& e) { writer.add(e); });
//   recorder.run([&](const Episode& e) { sink.push(e); });
//   sink.finish();      // every episode written; the writer's first error is rethrown here
//   writer.commit();
//
// Episodes are written in push order by one thread (HDF5's serial build wants one thread at a
// time; the writer is touched by the sink's thread alone until finish() returns). At most
// `capacity` episodes wait: a slow disk slows the recorder instead of filling memory.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "agent/record/episode.h"

namespace recur::agent::record {

class BackgroundSink {
 public:
  explicit BackgroundSink(std::function<void(const Episode&)> write, int capacity = 4);
  // Stops the thread; episodes not yet written are dropped (the path of an error elsewhere).
  ~BackgroundSink();
  BackgroundSink(const BackgroundSink&) = delete;
  BackgroundSink& operator=(const BackgroundSink&) = delete;

  // Queues a copy of the episode; blocks while `capacity` wait. Rethrows the writer's error (and
  // takes nothing more) once one happened.
  void push(const Episode& episode);
  // Waits until every queued episode is written; rethrows the writer's first error.
  void finish();

 private:
  void loop();
  void rethrow_locked();

  std::function<void(const Episode&)> write_;
  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Episode> queue_;
  bool writing_ = false;  // the thread holds an episode it took from the queue
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace recur::agent::record
