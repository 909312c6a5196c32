// recur's random number generator: xoshiro256** seeded through SplitMix64.
//
// Why our own instead of <random>: the standard distributions (uniform_real_distribution,
// normal_distribution) are implementation-defined, so the same seed would give different episodes
// with libstdc++ and libc++. Everything here is specified bit for bit, so a seed names one episode
// on every platform. The generator's whole state is 32 bytes and can be saved and restored
// (checkpoints resume the exact stream). numpy's PCG64 stream is deliberately not reproduced:
// recur matches Gymnasium's distributions, not its draws.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace recur {

// One step of SplitMix64 (Steele, Lea, Flood 2014): a bijective mixer with good avalanche.
constexpr uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The seed of stream `index` derived from one user seed (e.g. env i of a VectorEnv). Distinct
// indices give unrelated streams; the same (seed, index) always gives the same stream.
constexpr uint64_t derive_seed(uint64_t seed, uint64_t index) {
  uint64_t x = seed;
  const uint64_t a = splitmix64(x);
  x = a ^ (index * 0xd1b54a32d192ed03ULL);
  return splitmix64(x);
}

class Rng {
 public:
  using State = std::array<uint64_t, 4>;

  explicit Rng(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
  }

  const State& state() const { return s_; }
  void set_state(const State& s) { s_ = s; }

  // xoshiro256** (Blackman, Vigna 2018).
  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform in [low, high), as numpy's Generator.uniform.
  double uniform(double low, double high) { return low + (high - low) * uniform(); }

  // Uniform integer in [0, n) without modulo bias (Lemire's multiply-and-reject). n > 0.
  uint64_t uniform_int(uint64_t n) {
    __uint128_t m = static_cast<__uint128_t>(next_u64()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<__uint128_t>(next_u64()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Standard normal by the Box-Muller transform; uses two uniforms per call (no cached spare, so
  // the state alone determines the stream).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

  // Exponential with rate 1.
  double exponential() { return -std::log(1.0 - uniform()); }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  State s_{};
};

}  // namespace recur
