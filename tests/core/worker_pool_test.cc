#include "core/worker_pool.h"

#include "core/error.h"

#include <doctest/doctest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

TEST_CASE("WorkerPool runs every slice once per run over many runs") {
  recur::WorkerPool pool(4);
  std::vector<int> hits(4, 0);
  const std::function<void(int)> fn = [&](int i) { hits[static_cast<size_t>(i)]++; };
  for (int r = 0; r < 1000; ++r) pool.run(fn);
  for (int h : hits) CHECK(h == 1000);
}

TEST_CASE("WorkerPool rethrows a slice's exception after all slices finish") {
  recur::WorkerPool pool(3);
  std::atomic<int> done{0};
  const std::function<void(int)> fn = [&](int i) {
    if (i == 2) throw std::runtime_error("slice 2 failed");
    done++;
  };
  CHECK_THROWS_WITH(pool.run(fn), "slice 2 failed");
  CHECK(done == 2);
  // The pool stays usable.
  const std::function<void(int)> ok = [&](int) { done++; };
  pool.run(ok);
  CHECK(done == 5);
}

TEST_CASE("WorkerPool runs every chunk once, more or fewer chunks than threads") {
  for (int size : {1, 2, 3}) {
    recur::WorkerPool pool(size);
    for (int count : {0, 1, 2, 7, 64}) {
      CAPTURE(size);
      CAPTURE(count);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      const std::function<void(int)> fn = [&](int c) { hits[static_cast<size_t>(c)]++; };
      for (int r = 0; r < 200; ++r) pool.run(count, fn);
      for (auto& h : hits) CHECK(h.load() == 200);
    }
  }
  recur::WorkerPool pool(2);
  CHECK_THROWS_AS(pool.run(-1, [](int) {}), std::invalid_argument);
}

TEST_CASE("WorkerPool lets free threads take the chunks of a slow one") {
  // Chunk 0 is slow; with one chunk per thread the run would take it plus a share of the rest on
  // one thread. With claiming, the other thread steps all remaining chunks while it sleeps.
  recur::WorkerPool pool(2);
  std::vector<std::atomic<int>> owner(32);
  std::atomic<int> next_thread_id{0};
  const std::function<void(int)> fn = [&](int c) {
    thread_local int id = -1;
    if (id < 0) id = next_thread_id++;
    if (c == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    owner[static_cast<size_t>(c)] = id;
  };
  pool.run(32, fn);
  const int slow = owner[0];
  int others = 0;
  for (size_t c = 1; c < owner.size(); ++c) others += owner[c] != slow;
  CHECK(others >= 28);  // the slow thread took at most a few chunks before sleeping
}

TEST_CASE("WorkerPool rethrows a chunk's exception after running every other chunk") {
  recur::WorkerPool pool(3);
  std::atomic<int> done{0};
  const std::function<void(int)> fn = [&](int c) {
    if (c == 5) throw std::runtime_error("chunk 5 failed");
    done++;
  };
  CHECK_THROWS_WITH(pool.run(20, fn), "chunk 5 failed");
  CHECK(done == 19);
  recur::WorkerPool single(1);
  done = 0;
  CHECK_THROWS_WITH(single.run(20, fn), "chunk 5 failed");
  CHECK(done == 19);
}

TEST_CASE("WorkerPool wakes sleeping workers, whatever the wait budget") {
  // A zero budget sends workers to the condition variable at once: every run needs a wake-up
  // (or is done by the calling thread alone). A long gap between runs does the same with the
  // default budget.
  recur::WorkerPool pool(3, {std::chrono::microseconds(0), std::chrono::microseconds(0)});
  CHECK(pool.wait_budget().spin.count() == 0);
  std::atomic<int> hits{0};
  const std::function<void(int)> fn = [&](int) { hits++; };
  for (int r = 0; r < 300; ++r) pool.run(9, fn);
  CHECK(hits == 300 * 9);
  pool.set_wait_budget({std::chrono::microseconds(100), std::chrono::microseconds(100)});
  for (int r = 0; r < 5; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    pool.run(9, fn);
  }
  CHECK(hits == 305 * 9);
  CHECK_THROWS_AS(pool.set_wait_budget({std::chrono::microseconds(-1), {}}), std::invalid_argument);
}

TEST_CASE("An idle WorkerPool stops burning CPU after its wait budget") {
  // Workers spin and yield for about 2 ms after a run (the default budget), then sleep: 60 ms of
  // idleness must cost the process far less than 3 workers x 60 ms of CPU.
  auto cpu_seconds = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  recur::WorkerPool pool(4);
  const std::function<void(int)> fn = [](int) {};
  pool.run(fn);
  const double before = cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const double used = cpu_seconds() - before;
  CHECK(used < 0.03);
  pool.run(fn);  // and wakes up again
}

TEST_CASE("WorkerPool start/finish runs every chunk once while the caller does its own work") {
  for (int size : {1, 2, 3}) {
    recur::WorkerPool pool(size);
    for (int count : {0, 1, 2, 9}) {
      CAPTURE(size);
      CAPTURE(count);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      const std::function<void(int)> fn = [&](int c) { hits[static_cast<size_t>(c)]++; };
      for (int r = 0; r < 100; ++r) {
        pool.start(count, fn);
        CHECK(pool.started() == (count > 0));
        // The caller's own work, overlapping (with workers) the chunks.
        volatile int own = 0;
        for (int k = 0; k < 1000; ++k) own = own + k;
        pool.finish();
        CHECK_FALSE(pool.started());
        pool.finish();  // nothing pending: a no-op
      }
      for (auto& h : hits) CHECK(h.load() == 100);
      if (count > 0) {
        pool.start(count, fn);
        CHECK_THROWS_AS(pool.run(count, fn), recur::Error);  // one run at a time
        CHECK_THROWS_AS(pool.start(count, fn), recur::Error);
        pool.finish();
      }
    }
  }
}

TEST_CASE("WorkerPool start/finish: workers take the chunks while the caller is busy") {
  recur::WorkerPool pool(2);
  std::atomic<int> done{0};
  const std::function<void(int)> fn = [&](int) { done++; };
  pool.start(8, fn);
  // The caller claims nothing before finish(): the worker alone gets through all 8.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (done.load() < 8 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  CHECK(done.load() == 8);
  pool.finish();
}

TEST_CASE("WorkerPool finish rethrows a chunk's exception, and the pool stays usable") {
  for (int size : {1, 2}) {
    recur::WorkerPool pool(size);
    std::atomic<int> done{0};
    const std::function<void(int)> fn = [&](int c) {
      if (c == 1) throw std::runtime_error("chunk 1 failed");
      done++;
    };
    pool.start(4, fn);
    CHECK_THROWS_WITH(pool.finish(), "chunk 1 failed");
    CHECK(done == 3);
    CHECK_FALSE(pool.started());
    const std::function<void(int)> ok = [&](int) { done++; };
    pool.run(2, ok);
    CHECK(done == 5);
  }
}
