#include "tools/cli/bench/bench_scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "core/error.h"
#include "core/rng.h"
#include "core/worker_pool.h"
#include "policy/aligned.h"
#include "tools/cli/bench/bench_timing.h"

namespace recur::cli {
namespace {

using Buf = policy::AlignedVector<float>;

constexpr int64_t kMaxElements = int64_t{1} << 24;

// One layer's scan problem in the sequence engine's layouts: zh (T*B, 2H) = [z | h~] after the
// activations, h / h_prev / dy (T*B, H), rows t * B + b; lane = b * H + j indexes (B, H).
struct Scan {
  int T, B, H;
  Buf zh, h0, dy;
  std::vector<uint8_t> starts;
  // Outputs of one forward + backward.
  Buf h, h_prev, dzh, dh0;
  size_t lanes() const { return static_cast<size_t>(B) * H; }
};

// The lanes a thread owns in the sequential scan: whole rows of b when there are enough of them,
// else slices of j (so B = 1 still splits).
struct Rect {
  int b0, b1, j0, j1;
};

Rect rect_of(const Scan& s, int part, int parts) {
  if (s.B >= parts) return {s.B * part / parts, s.B * (part + 1) / parts, 0, s.H};
  return {0, s.B, s.H * part / parts, s.H * (part + 1) / parts};
}

// Forward over t in [t0, t1) for the lanes of r; `carry` (lanes) holds h entering step t0 and,
// on return, h after step t1 - 1. The update is the engine's: h = h_prev + z (h~ - h_prev).
void forward_steps(Scan& s, const Rect& r, int t0, int t1, float* carry) {
  const int H = s.H;
  for (int t = t0; t < t1; ++t)
    for (int b = r.b0; b < r.b1; ++b) {
      const size_t row = static_cast<size_t>(t) * s.B + b;
      const float* z = s.zh.data() + row * 2 * H;
      const float* ht = z + H;
      float* hp = s.h_prev.data() + row * H;
      float* h = s.h.data() + row * H;
      float* c = carry + static_cast<size_t>(b) * H;
      const bool start = s.starts[row] != 0;
      for (int j = r.j0; j < r.j1; ++j) {
        const float p = start ? 0.0f : c[j];
        hp[j] = p;
        c[j] = h[j] = p + z[j] * (ht[j] - p);
      }
    }
}

// Backward over t from t1 - 1 down to t0; `carry` (lanes) holds the gradient reaching h_{t1-1}
// from step t1 and, on return, the gradient reaching h_{t0-1}.
void backward_steps(Scan& s, const Rect& r, int t0, int t1, float* carry) {
  const int H = s.H;
  for (int t = t1 - 1; t >= t0; --t)
    for (int b = r.b0; b < r.b1; ++b) {
      const size_t row = static_cast<size_t>(t) * s.B + b;
      const float* z = s.zh.data() + row * 2 * H;
      const float* ht = z + H;
      const float* hp = s.h_prev.data() + row * H;
      const float* dy = s.dy.data() + row * H;
      float* d = s.dzh.data() + row * 2 * H;
      float* n = carry + static_cast<size_t>(b) * H;
      const float keep = s.starts[row] ? 0.0f : 1.0f;
      for (int j = r.j0; j < r.j1; ++j) {
        const float dh = dy[j] + n[j];
        d[j] = dh * (ht[j] - hp[j]) * z[j] * (1.0f - z[j]);
        d[H + j] = dh * z[j];
        n[j] = keep * dh * (1.0f - z[j]);
      }
    }
}

// The sequential scan: each thread runs the whole of T on its own lanes.
void sequential(Scan& s, WorkerPool& pool, Buf& carry) {
  const int parts = pool.size();
  std::copy(s.h0.begin(), s.h0.end(), carry.begin());
  pool.run(parts, [&](int p) { forward_steps(s, rect_of(s, p, parts), 0, s.T, carry.data()); });
  std::fill(carry.begin(), carry.end(), 0.0f);
  pool.run(parts, [&](int p) { backward_steps(s, rect_of(s, p, parts), 0, s.T, carry.data()); });
  std::copy(carry.begin(), carry.end(), s.dh0.begin());
}

// The chunked scan: T cut into one chunk per thread, each over all lanes. Per chunk k, A[k] and
// Bc[k] (lanes each) hold its affine map, then its carry in.
void chunked(Scan& s, WorkerPool& pool, Buf& A, Buf& Bc) {
  const int C = pool.size();
  const size_t L = s.lanes();
  const Rect all{0, s.B, 0, s.H};
  auto range = [&](int k) { return std::pair{s.T * k / C, s.T * (k + 1) / C}; };  // [t0, t1)
  // Forward pass 1: each chunk folds its steps, h_end = A h_begin + Bc, per lane.
  pool.run(C, [&](int k) {
    const auto [t0, t1] = range(k);
    float* a = A.data() + k * L;
    float* bc = Bc.data() + k * L;
    std::fill(a, a + L, 1.0f);
    std::fill(bc, bc + L, 0.0f);
    for (int t = t0; t < t1; ++t)
      for (int b = 0; b < s.B; ++b) {
        const size_t row = static_cast<size_t>(t) * s.B + b;
        const float* z = s.zh.data() + row * 2 * s.H;
        const float* ht = z + s.H;
        const float keep = s.starts[row] ? 0.0f : 1.0f;
        float* ab = a + static_cast<size_t>(b) * s.H;
        float* bb = bc + static_cast<size_t>(b) * s.H;
        for (int j = 0; j < s.H; ++j) {
          const float m = keep * (1.0f - z[j]);
          ab[j] *= m;
          bb[j] = m * bb[j] + z[j] * ht[j];
        }
      }
  });
  // Pass 2: the carries, in order from h0 (C x L multiply-adds: nothing to parallelize at C = 2).
  for (size_t l = 0; l < L; ++l) {
    float h = s.h0[l];
    for (int k = 0; k < C; ++k) {
      const float next = A[k * L + l] * h + Bc[k * L + l];
      A[k * L + l] = h;
      h = next;
    }
  }
  // Pass 3: each chunk re-runs its steps from its carry.
  pool.run(C, [&](int k) {
    const auto [t0, t1] = range(k);
    forward_steps(s, all, t0, t1, A.data() + k * L);
  });
  // Backward, the same three passes from the last step down: n_out = A n_in + Bc.
  pool.run(C, [&](int k) {
    const auto [t0, t1] = range(k);
    float* a = A.data() + k * L;
    float* bc = Bc.data() + k * L;
    std::fill(a, a + L, 1.0f);
    std::fill(bc, bc + L, 0.0f);
    for (int t = t1 - 1; t >= t0; --t)
      for (int b = 0; b < s.B; ++b) {
        const size_t row = static_cast<size_t>(t) * s.B + b;
        const float* z = s.zh.data() + row * 2 * s.H;
        const float* dy = s.dy.data() + row * s.H;
        const float keep = s.starts[row] ? 0.0f : 1.0f;
        float* ab = a + static_cast<size_t>(b) * s.H;
        float* bb = bc + static_cast<size_t>(b) * s.H;
        for (int j = 0; j < s.H; ++j) {
          const float m = keep * (1.0f - z[j]);
          ab[j] *= m;
          bb[j] = m * (bb[j] + dy[j]);
        }
      }
  });
  for (size_t l = 0; l < L; ++l) {
    float n = 0.0f;
    for (int k = C - 1; k >= 0; --k) {
      const float next = A[k * L + l] * n + Bc[k * L + l];
      A[k * L + l] = n;
      n = next;
    }
    s.dh0[l] = n;
  }
  pool.run(C, [&](int k) {
    const auto [t0, t1] = range(k);
    backward_steps(s, all, t0, t1, A.data() + k * L);
  });
}

Scan make_scan(int T, int B, int H, Rng& rng) {
  Scan s{T, B, H, {}, {}, {}, {}, {}, {}, {}, {}};
  const size_t rows = static_cast<size_t>(T) * B;
  s.zh.resize(rows * 2 * H);
  for (size_t r = 0; r < rows; ++r)
    for (int j = 0; j < 2 * H; ++j)  // z in (0.05, 0.95), h~ in (-1, 1)
      s.zh[r * 2 * H + j] =
          static_cast<float>(j < H ? rng.uniform(0.05, 0.95) : rng.uniform(-1, 1));
  s.h0.resize(s.lanes());
  for (auto& v : s.h0) v = static_cast<float>(rng.uniform(-1, 1));
  s.dy.resize(rows * H);
  for (auto& v : s.dy) v = static_cast<float>(rng.uniform(-1, 1));
  s.starts.resize(rows);
  for (auto& v : s.starts) v = rng.uniform() < 0.01 ? 1 : 0;  // ~1% episode starts
  s.h.assign(rows * H, 0.0f);
  s.h_prev.assign(rows * H, 0.0f);
  s.dzh.assign(rows * 2 * H, 0.0f);
  s.dh0.assign(s.lanes(), 0.0f);
  return s;
}

double max_abs_diff(const Buf& a, const Buf& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, static_cast<double>(std::fabs(a[i] - b[i])));
  return m;
}

}  // namespace

std::vector<ScanBenchRow> bench_scan(const ScanBenchConfig& config) {
  // Every value is checked before the first row runs.
  for (int threads : config.threads)
    RECUR_CHECK(threads >= 1 && threads <= 256,
                "recur bench scan: --threads {} (expected counts from 1 to 256)", threads);
  const int most_threads =
      config.threads.empty() ? 1 : *std::max_element(config.threads.begin(), config.threads.end());
  for (int H : config.hidden)
    for (int B : config.batch)
      for (int T : config.seq_len) {
        RECUR_CHECK(H >= 1 && B >= 1 && T >= 1,
                    "recur bench scan: B {}, H {}, T {} (expected sizes >= 1)", B, H, T);
        // Seven (T, B, H) float buffers and the chunked scan's two (threads, B, H) ones: keep each
        // under 64 MiB.
        const double elements = static_cast<double>(std::max(T, most_threads)) * B * H;
        RECUR_CHECK(elements <= kMaxElements,
                    "recur bench scan: B {} x H {} x max(T {}, threads {}) = {:.3g} elements per "
                    "buffer (expected at most {}: use smaller sizes)",
                    B, H, T, most_threads, elements, kMaxElements);
      }
  std::vector<ScanBenchRow> rows;
  Rng rng(1);
  for (int threads : config.threads) {
    WorkerPool pool(threads);
    for (int H : config.hidden)
      for (int B : config.batch)
        for (int T : config.seq_len) {
          Scan s = make_scan(T, B, H, rng);
          Buf carry(s.lanes()), A(s.lanes() * threads), Bc(s.lanes() * threads);
          ScanBenchRow row{B, H, T, threads};
          // Agreement first: the same problem through both, outputs compared.
          sequential(s, pool, carry);
          const Buf h = s.h, dzh = s.dzh, dh0 = s.dh0;
          chunked(s, pool, A, Bc);
          row.max_abs_diff =
              std::max({max_abs_diff(h, s.h), max_abs_diff(dzh, s.dzh), max_abs_diff(dh0, s.dh0)});
          if (!(row.max_abs_diff <= 1e-4))
            throw InternalError(fmt::format(
                "recur bench scan: the chunked scan differs from the sequential one by {} at B {}, "
                "H {}, T {}, {} threads (a bug in recur)",
                row.max_abs_diff, B, H, T, threads));
          row.sequential_us =
              1e6 * time_per_call(config.min_seconds, [&] { sequential(s, pool, carry); });
          row.chunked_us =
              1e6 * time_per_call(config.min_seconds, [&] { chunked(s, pool, A, Bc); });
          rows.push_back(row);
        }
  }
  return rows;
}

}  // namespace recur::cli
