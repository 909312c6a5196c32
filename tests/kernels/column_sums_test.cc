// The fused sequence executor's column sums (kernels/sequence_cells.h, launch_column_sums): the
// bias gradient of minGRU and the layer-norm LSTM's gain and shift gradients. The executor tests
// run small batches, whose rows are never split into ranges; these cases run the split path too.
//   - column_sum_splits (host, runs without a GPU): one range for small shapes, enough blocks to
//     fill a large GPU at the learner's shapes, every range >= 1024 rows, never more ranges than
//     rows;
//   - the kernels (GPU) against a double sum, ADDED to what out held, the plain sums beside the
//     weighted ones from one pass, bitwise repeatable. Each output is a sum of float products
//     in double, rounded once to float (plus what it held): checked to 1e-6 of the sum of the
//     terms' magnitudes.
#include <doctest/doctest.h>

#ifdef RECUR_WITH_CUDA

#include <cmath>
#include <cstddef>
#include <vector>

#include "core/rng.h"
#include "kernels/cuda_memory.h"
#include "kernels/sequence_cells.h"
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"
#include "tests/support/uniform.h"

using recur::kernels::column_sum_splits;
using recur::kernels::column_sums_scratch;
using recur::test::uniform;

TEST_CASE("column sums split the rows where the columns alone cannot fill a GPU") {
  // The executor tests' batches (at most a few hundred rows): one range, no scratch.
  CHECK(column_sum_splits(333, 1000) == 1);
  CHECK(column_sums_scratch(333, 1000) == 0);
  CHECK(column_sum_splits(1, 1) == 1);
  CHECK(column_sum_splits(0, 5) == 1);
  // T 32 x B 1024 (32768 rows): lstm_ln's 5H at H 128 (640 columns, 20 blocks) and minGRU's
  // 2H at H 128 (256 columns, 8 blocks) get >= 256 blocks: 14 and 32 ranges (at most 1024 rows
  // each bounds the second).
  CHECK(column_sum_splits(32768, 640) == 14);
  CHECK(column_sum_splits(32768, 256) == 32);
  CHECK(column_sums_scratch(32768, 640) == 2u * 14u * 640u);
  for (const int rows : {1, 31, 1024, 1025, 5000, 8192, 32768, 1 << 20})
    for (const int cols : {1, 32, 33, 256, 640, 1280, 8448, 20000}) {
      CAPTURE(rows);
      CAPTURE(cols);
      const int splits = column_sum_splits(rows, cols);
      const int col_blocks = (cols + 31) / 32;
      CHECK(splits >= 1);
      CHECK(splits <= (rows + 1023) / 1024);                    // every range >= 1024 rows ...
      CHECK((splits == 1 || (splits - 1) * col_blocks < 264));  // ... no more than fill needs
    }
}

TEST_CASE("column sums kernel equals double sums, split or not, plain sums beside") {
  if (!recur::test::gpu_or_skip("column sums kernel")) return;
  using recur::test::to_device;
  using recur::test::to_host;
  recur::Rng rng(17);
  struct Shape {
    int rows, cols;
  };
  // {5, 3}: fewer rows than lanes; {333, 70}: one range, a partial column block; {4097, 70}: 5
  // ranges of 820 rows, the last 817; {20000, 640}: lstm_ln's 5H at H 128, 14 ranges of 1429 rows.
  for (const Shape shape : {Shape{5, 3}, Shape{333, 70}, Shape{4097, 70}, Shape{20000, 640}}) {
    const int rows = shape.rows, cols = shape.cols;
    CAPTURE(rows);
    CAPTURE(cols);
    const size_t n = static_cast<size_t>(rows) * cols;
    const std::vector<float> a = uniform(n, -1, 1, rng), w = uniform(n, -2, 2, rng);
    const std::vector<float> out0 = uniform(static_cast<size_t>(cols), -3, 3, rng);
    const std::vector<float> plain0 = uniform(static_cast<size_t>(cols), -3, 3, rng);
    auto d_a = to_device(a), d_w = to_device(w);
    recur::kernels::DeviceBuffer<double> scratch(column_sums_scratch(rows, cols));
    // Weighted with plain sums beside, twice (bitwise the same); then unweighted alone.
    std::vector<std::vector<float>> weighted, plain;
    for (int run = 0; run < 2; ++run) {
      auto d_out = to_device(out0), d_plain = to_device(plain0);
      recur::kernels::launch_column_sums(d_a.data(), d_w.data(), rows, cols, d_out.data(),
                                         d_plain.data(), scratch.data(), nullptr);
      weighted.push_back(to_host(d_out));
      plain.push_back(to_host(d_plain));
    }
    CHECK(weighted[0] == weighted[1]);
    CHECK(plain[0] == plain[1]);
    // The plain sums ride along the weighted pass in the same order as a pass of their own.
    auto d_own = to_device(plain0);
    recur::kernels::launch_column_sums(d_a.data(), nullptr, rows, cols, d_own.data(), nullptr,
                                       scratch.data(), nullptr);
    CHECK(to_host(d_own) == plain[0]);
    for (int j = 0; j < cols; ++j) {
      const auto c = static_cast<size_t>(j);
      double sw = out0[c], sp = plain0[c], mw = std::abs(sw), mp = std::abs(sp);
      for (int r = 0; r < rows; ++r) {
        const size_t i = static_cast<size_t>(r) * cols + c;
        sw += double{a[i]} * w[i];
        sp += a[i];
        mw += std::abs(double{a[i]} * w[i]);
        mp += std::abs(a[i]);
      }
      CHECK(std::abs(weighted[0][c] - sw) <= 1e-6 * mw);
      CHECK(std::abs(plain[0][c] - sp) <= 1e-6 * mp);
    }
  }
}

#endif  // RECUR_WITH_CUDA
