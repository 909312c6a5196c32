// GAE on the device (kernels/gae.h) and its CPU reference (kernels/gae_math.h) against the host
// updater's agent::compute_gae, on random rollouts with terminations, truncations (bootstrapped
// from V(final observation)) and, for the reference, reset steps. The reference must equal
// compute_gae bit for bit: it repeats its operations. The kernel must equal the reference bit for
// bit too (tolerance 0): the same double operations, compiled without FMA contraction
// (kernels/CMakeLists.txt: --fmad=false), and IEEE + - * are correctly rounded on both devices.
// The GPU case skips (with a message) without a usable GPU.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "agent/ppo/gae.h"
#include "core/rng.h"
#include "kernels/gae_math.h"

#ifdef RECUR_WITH_CUDA
#include "kernels/cuda_memory.h"
#include "kernels/gae.h"
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"
#endif

namespace {

struct RandomRollout {
  int T = 0, N = 0;
  std::vector<float> rewards, values, bootstrap, last_values;
  std::vector<uint8_t> terminated, truncated, transition;

  RandomRollout(int steps, int envs, uint64_t seed, bool resets) : T(steps), N(envs) {
    recur::Rng rng(seed);
    const auto tn = static_cast<size_t>(T) * N;
    auto uniform = [&](std::vector<float>& v, size_t size, double lo, double hi) {
      v.resize(size);
      for (auto& x : v) x = static_cast<float>(rng.uniform(lo, hi));
    };
    uniform(rewards, tn, -2, 3);
    uniform(values, tn, -5, 5);
    uniform(bootstrap, tn, -5, 5);
    uniform(last_values, static_cast<size_t>(N), -5, 5);
    terminated.assign(tn, 0);
    truncated.assign(tn, 0);
    transition.assign(tn, 1);
    for (size_t i = 0; i < tn; ++i) {
      const double u = rng.uniform();
      if (u < 0.05)
        terminated[i] = 1;
      else if (u < 0.10)
        truncated[i] = 1;
      else if (u < 0.12)
        terminated[i] = truncated[i] = 1;  // both: termination wins
    }
    // A reset step (NEXT_STEP autoreset) follows an episode's end.
    if (resets)
      for (int t = 1; t < T; ++t)
        for (int n2 = 0; n2 < N; ++n2) {
          const size_t i = static_cast<size_t>(t) * N + n2, prev = i - N;
          if ((terminated[prev] || truncated[prev]) && rng.uniform() < 0.5) {
            transition[i] = 0;
            terminated[i] = truncated[i] = 0;
          }
        }
  }

  recur::kernels::GaeInputs inputs(bool resets) const {
    recur::kernels::GaeInputs in;
    in.rewards = rewards.data();
    in.values = values.data();
    in.terminated = terminated.data();
    in.truncated = truncated.data();
    in.bootstrap_values = bootstrap.data();
    in.last_values = last_values.data();
    in.transition = resets ? transition.data() : nullptr;
    return in;
  }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
  return true;
}

const float kGamma = 0.99f, kLambda = 0.95f;

}  // namespace

TEST_CASE("GAE reference equals compute_gae bit for bit") {
  for (const bool resets : {false, true}) {
    // compute_gae walks columns below 8 envs and rows from 8 on: both walks.
    for (const auto& [T, N] :
         {std::pair{1, 1}, std::pair{32, 7}, std::pair{32, 8}, std::pair{64, 129}}) {
      CAPTURE(resets);
      CAPTURE(T);
      CAPTURE(N);
      const RandomRollout r(T, N, 17 + T * 31 + N, resets);
      const auto tn = static_cast<size_t>(T) * N;
      std::vector<float> adv(tn), ret(tn), ref_adv(tn), ref_ret(tn);
      recur::agent::compute_gae(
          T, N, kGamma, kLambda, r.rewards, r.values, r.terminated, r.truncated, r.bootstrap,
          r.last_values, adv, ret,
          resets ? std::span<const uint8_t>(r.transition) : std::span<const uint8_t>());
      recur::kernels::gae_reference(T, N, kGamma, kLambda, r.inputs(resets), ref_adv.data(),
                                    ref_ret.data());
      CHECK(same_bits(ref_adv, adv));
      CHECK(same_bits(ref_ret, ret));
    }
  }
}

TEST_CASE("GAE reference bootstraps a truncation from V(final observation)") {
  // T = 2, N = 1: step 0 truncated (bootstrap 10), step 1 continues to last_values.
  const std::vector<float> rewards = {1, 2}, values = {0.5f, 0.25f}, bootstrap = {10, 0},
                           last = {4};
  const std::vector<uint8_t> term = {0, 0}, trunc = {1, 0};
  recur::kernels::GaeInputs in{rewards.data(),   values.data(), term.data(), trunc.data(),
                               bootstrap.data(), last.data(),   nullptr};
  std::vector<float> adv(2), ret(2);
  recur::kernels::gae_reference(2, 1, 0.5f, 1.0f, in, adv.data(), ret.data());
  CHECK(adv[1] == doctest::Approx(2 + 0.5 * 4 - 0.25));
  CHECK(adv[0] == doctest::Approx(1 + 0.5 * 10 - 0.5));  // no chain across the truncation
  CHECK(ret[0] == doctest::Approx(adv[0] + 0.5));
}

#ifdef RECUR_WITH_CUDA
TEST_CASE("GAE kernel equals the CPU reference bit for bit") {
  if (!recur::test::gpu_or_skip("GAE kernel")) return;
  using recur::test::to_device;
  using recur::test::to_host;
  for (const bool resets : {false, true}) {
    // N = 1000 spans several blocks with a partial last one; N = 1 a single thread.
    for (const auto& [T, N] : {std::pair{1, 1}, std::pair{32, 1000}, std::pair{128, 257}}) {
      CAPTURE(resets);
      CAPTURE(T);
      CAPTURE(N);
      const RandomRollout r(T, N, 5 + T + N, resets);
      const auto tn = static_cast<size_t>(T) * N;
      std::vector<float> ref_adv(tn), ref_ret(tn);
      recur::kernels::gae_reference(T, N, kGamma, kLambda, r.inputs(resets), ref_adv.data(),
                                    ref_ret.data());
      auto rew = to_device(r.rewards), val = to_device(r.values), boot = to_device(r.bootstrap),
           last = to_device(r.last_values);
      auto term = to_device(r.terminated), trunc = to_device(r.truncated),
           trans = to_device(r.transition);
      recur::kernels::GaeInputs in{rew.data(),
                                   val.data(),
                                   term.data(),
                                   trunc.data(),
                                   boot.data(),
                                   last.data(),
                                   resets ? trans.data() : nullptr};
      recur::kernels::DeviceBuffer<float> adv(tn), ret(tn);
      recur::kernels::launch_gae(T, N, kGamma, kLambda, in, adv.data(), ret.data(), nullptr);
      CHECK(same_bits(to_host(adv), ref_adv));
      CHECK(same_bits(to_host(ret), ref_ret));
    }
  }
}
#endif
