// BackgroundSink: episodes reach the writer in push order, on another thread, and a writer's
// error comes back to the recording thread.
#include "agent/record/background_sink.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using recur::agent::record::BackgroundSink;
using recur::agent::record::Episode;

namespace {
Episode episode_with_seed(uint64_t seed) {
  Episode e;
  e.seed = seed;
  e.rewards.assign(3, 1.0);
  return e;
}
}  // namespace

TEST_CASE("background sink writes every episode in push order on its own thread") {
  std::vector<uint64_t> seeds;
  std::thread::id writer_thread;
  {
    BackgroundSink sink(
        [&](const Episode& e) {
          writer_thread = std::this_thread::get_id();
          std::this_thread::sleep_for(std::chrono::microseconds(200));  // a slow disk
          seeds.push_back(e.seed);
        },
        2);
    for (uint64_t i = 0; i < 20; ++i) sink.push(episode_with_seed(i));
    sink.finish();
    REQUIRE(seeds.size() == 20);  // finish() returned: all written, none pending
  }
  for (uint64_t i = 0; i < 20; ++i) CHECK(seeds[i] == i);
  CHECK(writer_thread != std::this_thread::get_id());
}

TEST_CASE("background sink returns the writer's first error and writes nothing after it") {
  std::atomic<int> written = 0;
  BackgroundSink sink([&](const Episode& e) {
    if (e.seed == 3) throw std::runtime_error("disk full at episode 3");
    ++written;
  });
  bool thrown = false;
  try {
    for (uint64_t i = 0; i < 50; ++i) sink.push(episode_with_seed(i));
    sink.finish();
  } catch (const std::runtime_error& e) {
    thrown = true;
    CHECK(std::string(e.what()) == "disk full at episode 3");
  }
  CHECK(thrown);
  CHECK(written.load() == 3);  // episodes 0-2; none after the failure
  CHECK_THROWS_AS(sink.finish(), std::runtime_error);
}

TEST_CASE("background sink dropped without finish stops cleanly") {
  std::atomic<int> written = 0;
  {
    BackgroundSink sink([&](const Episode&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ++written;
    });
    for (uint64_t i = 0; i < 4; ++i) sink.push(episode_with_seed(i));
  }  // destructor: joins, drops what waits
  CHECK(written.load() <= 4);
}
