// The CPU sequence engine's forward + backward alone, timed (microseconds per call, the best of
// three one-second runs): the driver behind the "scratch driver" rows of docs/PERFORMANCE.md ("The
// CPU fused layer, memory passes removed"). Random weights, a reset every 97 rows and a non-zero
// initial state, as a training minibatch has. A standalone program, built against the Release
// build's libraries (one command line):
//   g++ -O3 -march=native -ffp-contract=off -std=c++20 -DNDEBUG -I. -I/usr/include/eigen3
//     tools/bench/sequence_engine_time.cc build/policy/librecur_policy.a
//     build/core/librecur_core.a -lfmt -lspdlog -o /tmp/seq_time
// and, where the build has LIBXSMM (`recur info` says so), its archives after recur's:
//     ... build/core/librecur_core.a /usr/lib/libxsmm.a /usr/lib/libxsmmnoblas.a -lfmt -lspdlog
//     -ldl -lpthread -o /tmp/seq_time
//   /tmp/seq_time CELL B H INPUT [T]      e.g. /tmp/seq_time lstm 2 64 8 128
// To set two versions of the engine side by side, build a second binary with an older header
// first on the include path (the engine is header-only):
//   mkdir -p /tmp/old/policy/cpu
//   git show REV:policy/cpu/sequence_engine.h > /tmp/old/policy/cpu/sequence_engine.h
//   the same g++ line with -I/tmp/old before -I. and another -o
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "policy/cpu/sequence_engine.h"

namespace {

using recur::policy::CellType;

bool parse_cell(const std::string& name, CellType& cell) {
  const std::pair<const char*, CellType> cells[] = {{"lstm", CellType::kLstm},
                                                    {"gru", CellType::kGru},
                                                    {"lstm_ln", CellType::kLstmLn},
                                                    {"mingru", CellType::kMinGru},
                                                    {"rnn_tanh", CellType::kRnnTanh}};
  for (const auto& [n, c] : cells)
    if (name == n) {
      cell = c;
      return true;
    }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CellType cell{};
  if (argc < 5 || !parse_cell(argv[1], cell)) {
    std::fprintf(stderr,
                 "usage: %s CELL B H INPUT [T]   (CELL: lstm, gru, lstm_ln, mingru or rnn_tanh)\n",
                 argv[0]);
    return 2;
  }
  const int B = std::atoi(argv[2]), H = std::atoi(argv[3]), I = std::atoi(argv[4]);
  const int T = argc > 5 ? std::atoi(argv[5]) : 32;
  if (B < 1 || H < 1 || I < 1 || T < 1) {
    std::fprintf(stderr, "B, H, INPUT and T must be positive integers\n");
    return 2;
  }
  recur::policy::CoreSpec spec;
  spec.cell = cell;
  spec.input = I;
  spec.hidden = H;
  spec.layers = 1;
  recur::policy::SequenceEngine<float> engine(spec);
  std::mt19937 gen(1);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  for (auto& p : engine.params()) p = normal(gen);
  const auto rows = static_cast<size_t>(T) * B;
  const auto states = static_cast<size_t>(B) * spec.state_size();
  std::vector<float> x(rows * I), y(rows * H), dy(rows * H), s0(states), s1(states), ds(states);
  for (auto* v : {&x, &dy, &s0})
    for (auto& e : *v) e = normal(gen);
  std::vector<uint8_t> starts(rows, 0);
  for (size_t r = 0; r < rows; r += 97) starts[r] = 1;

  auto once = [&] {
    engine.forward(T, B, x.data(), starts.data(), s0.data(), y.data(), s1.data());
    engine.backward(dy.data(), nullptr, ds.data());
  };
  once();  // warm-up: the engine's buffers grow to this (T, B) here
  double best = 1e300;
  for (int run = 0; run < 3; ++run) {
    int calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < 1.0) {
      once();
      ++calls;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    best = std::min(best, elapsed / calls * 1e6);
  }
  std::printf("%s B %d H %d input %d T %d: forward + backward %.1f us\n", argv[1], B, H, I, T,
              best);
  return 0;
}
