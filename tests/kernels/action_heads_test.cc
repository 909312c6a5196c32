// The CUDA policy actor's own kernels against their host references: bias_activation against
// the formula, the action heads against policy::Categorical / policy::DiagGaussian (mode with
// ties, log-probs of the mode and of sampled actions, sampling reproducible from the seed).
// Tolerance 1e-6 relative per value: one row's few float32 operations, in the CPU's order,
// differing only by CUDA's expf/logf/tanhf vs the host's (<= 2 ulp each). Skipped (with a
// message) without a usable GPU.
#include <doctest/doctest.h>

#ifdef RECUR_WITH_CUDA

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/rng.h"
#include "kernels/action_heads.h"
#include "kernels/bias_activation.h"
#include "kernels/cuda_memory.h"
#include "policy/devices.h"
#include "policy/distributions.h"
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"

namespace {

using recur::kernels::DeviceBuffer;

using recur::test::to_device;
using recur::test::to_host;

// Runs a head on (B, n) inputs: returns actions and log-probs.
struct HeadRun {
  std::vector<float> actions, log_probs;
};
HeadRun run_head(bool categorical, const std::vector<float>& in, const std::vector<float>& log_std,
                 int B, int n, uint64_t seed, bool deterministic) {
  auto d_in = to_device(in);
  auto d_log_std = to_device(log_std.empty() ? std::vector<float>(1, 0.0f) : log_std);
  auto d_seed = to_device(std::vector<uint64_t>{seed});
  auto d_flag = to_device(std::vector<uint32_t>{deterministic ? 1u : 0u});
  DeviceBuffer<float> actions(static_cast<size_t>(B) * (categorical ? 1 : n)), lp(B);
  CUDA_CHECK(cudaDeviceSynchronize());
  if (categorical)
    recur::kernels::launch_categorical_head(d_in.data(), B, n, d_seed.data(), d_flag.data(),
                                            actions.data(), lp.data(), nullptr);
  else
    recur::kernels::launch_gaussian_head(d_in.data(), d_log_std.data(), B, n, d_seed.data(),
                                         d_flag.data(), actions.data(), lp.data(), nullptr);
  return {to_host(actions), to_host(lp)};
}

}  // namespace

TEST_CASE("bias_activation kernel equals its formula") {
  if (!recur::test::gpu_or_skip("bias_activation kernel equals its formula")) return;
  const int rows = 37, n = 19;
  recur::Rng rng(1);
  std::vector<float> y(rows * n), bias(n);
  for (auto& v : y) v = static_cast<float>(rng.uniform(-3, 3));
  for (auto& v : bias) v = static_cast<float>(rng.uniform(-1, 1));
  using recur::kernels::Activation;
  for (Activation act : {Activation::kIdentity, Activation::kTanh, Activation::kRelu}) {
    CAPTURE(static_cast<int>(act));
    auto d_y = to_device(y);
    auto d_bias = to_device(bias);
    recur::kernels::launch_bias_activation(d_y.data(), d_bias.data(), rows, n, act, nullptr);
    const std::vector<float> out = to_host(d_y);
    for (size_t i = 0; i < y.size(); ++i) {
      const double z = double{y[i]} + bias[i % n];
      const double want = act == Activation::kTanh   ? std::tanh(z)
                          : act == Activation::kRelu ? std::max(z, 0.0)
                                                     : z;
      CHECK(out[i] == doctest::Approx(want).epsilon(1e-6).scale(1));
    }
  }
}

TEST_CASE("categorical head kernel equals policy Categorical") {
  if (!recur::test::gpu_or_skip("categorical head kernel equals policy Categorical")) return;
  const int B = 64, A = 5;
  recur::Rng rng(2);
  std::vector<float> logits(B * A);
  for (auto& v : logits) v = static_cast<float>(rng.uniform(-4, 4));
  for (int j = 0; j < A; ++j) logits[static_cast<size_t>(j)] = j == 1 || j == 3 ? 2.0f : 0.0f;
  const recur::policy::Categorical dist(B, A, logits);
  std::vector<float> mode(B), want(B);
  dist.mode(mode);
  const HeadRun det = run_head(true, logits, {}, B, A, 0, true);
  CHECK(det.actions == mode);  // row 0 ties at 1 and 3: the first wins on both sides
  CHECK(det.actions[0] == 1.0f);
  dist.log_prob(det.actions, want);
  for (int b = 0; b < B; ++b) CHECK(det.log_probs[b] == doctest::Approx(want[b]).epsilon(1e-6));

  const HeadRun s1 = run_head(true, logits, {}, B, A, 1234, false);
  const HeadRun s2 = run_head(true, logits, {}, B, A, 1234, false);
  CHECK(s1.actions == s2.actions);
  CHECK(s1.log_probs == s2.log_probs);
  dist.log_prob(s1.actions, want);  // also checks that each action is a valid index
  for (int b = 0; b < B; ++b) CHECK(s1.log_probs[b] == doctest::Approx(want[b]).epsilon(1e-6));
}

TEST_CASE("gaussian head kernel equals policy DiagGaussian") {
  if (!recur::test::gpu_or_skip("gaussian head kernel equals policy DiagGaussian")) return;
  const int B = 64, D = 3;
  recur::Rng rng(3);
  std::vector<float> mean(B * D), log_std = {-0.5f, 0.0f, 0.7f};
  for (auto& v : mean) v = static_cast<float>(rng.uniform(-2, 2));
  const recur::policy::DiagGaussian dist(B, D, mean, log_std);
  std::vector<float> want(B);
  const HeadRun det = run_head(false, mean, log_std, B, D, 0, true);
  CHECK(det.actions == mean);
  dist.log_prob(det.actions, want);
  for (int b = 0; b < B; ++b) CHECK(det.log_probs[b] == doctest::Approx(want[b]).epsilon(1e-6));

  const HeadRun s1 = run_head(false, mean, log_std, B, D, 99, false);
  const HeadRun s2 = run_head(false, mean, log_std, B, D, 99, false);
  CHECK(s1.actions == s2.actions);
  CHECK(s1.actions != mean);
  dist.log_prob(s1.actions, want);
  for (int b = 0; b < B; ++b) CHECK(s1.log_probs[b] == doctest::Approx(want[b]).epsilon(1e-6));
}

#endif  // RECUR_WITH_CUDA
