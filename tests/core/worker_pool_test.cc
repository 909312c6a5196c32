#include "core/worker_pool.h"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>

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
