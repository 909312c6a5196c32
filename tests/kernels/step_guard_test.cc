// The minibatch step's device-side decisions (kernels/step_guard_math.h, kernels/step_guard.h)
// against the host path they replace: agent/ppo/cuda_engine.cc forms MinibatchResult from the
// six sums, agent/ppo/updater.cc skips (or stops) on `!isfinite(loss) || !isfinite(grad_norm)`
// and clips by kernels::clip_scale. The reference must agree exactly (same double operations);
// the kernel must equal the reference bit for bit (tolerance 0: one thread of IEEE double
// arithmetic without FMA contraction, and sqrt is correctly rounded on both devices). The guarded
// Adam must equal the host-factor Adam bit for bit, and leave everything untouched on a skip.
// GPU cases skip (with a message) without a usable GPU.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "kernels/learner_math.h"
#include "kernels/step_guard_math.h"

#ifdef RECUR_WITH_CUDA
#include "kernels/cuda_memory.h"
#include "kernels/optimizer.h"
#include "kernels/step_guard.h"
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"
#endif

namespace {

namespace k = recur::kernels;
using Sums = std::array<double, 6>;

// The host path: cuda_engine.cc's MinibatchResult, the updater's skip test and clip.
k::StepGuard host_decision(const Sums& h, int m, const k::PpoLossConfig& c, double max_norm) {
  const double inv_m = 1.0 / static_cast<double>(m);
  const double policy_loss = h[0] * inv_m, value_loss = h[1] * inv_m, entropy = h[2] * inv_m;
  const double loss = policy_loss + c.vf_coef * value_loss - c.ent_coef * entropy;
  const double grad_norm = std::sqrt(h[5]);
  k::StepGuard g;
  if (!std::isfinite(loss) || !std::isfinite(grad_norm)) {
    g.skip = 1;
    return g;
  }
  g.scale = k::clip_scale(grad_norm, max_norm);
  return g;
}

// Random sums (norms around max_norm, so some clip and some do not) and non-finite variants:
// NaN or +-inf in each slot (slots 3 and 4, approx_kl and the clip count, do not decide).
std::vector<Sums> cases() {
  recur::Rng rng(404);
  std::vector<Sums> out;
  for (int i = 0; i < 200; ++i) {
    Sums s;
    for (int q = 0; q < 5; ++q) s[static_cast<size_t>(q)] = rng.uniform(-500, 500);
    s[4] = std::abs(s[4]);
    s[5] = rng.uniform(0, 4) * rng.uniform(0, 4);
    out.push_back(s);
  }
  out.push_back({0, 0, 0, 0, 0, 0});  // a zero gradient: no clip
  const double bad[] = {std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity()};
  for (int q = 0; q < 6; ++q)
    for (const double b : bad) {
      Sums s = out[static_cast<size_t>(q)];
      s[static_cast<size_t>(q)] = b;
      out.push_back(s);
    }
  // A finite loss whose terms overflow when combined.
  out.push_back({1e308, -1e308, 0, 0, 0, 1});
  return out;
}

k::PpoLossConfig loss_config() {
  k::PpoLossConfig c;
  c.vf_coef = 0.5;
  c.ent_coef = 0.01;
  return c;
}

}  // namespace

TEST_CASE("step guard reference decides as the host updater") {
  const k::PpoLossConfig c = loss_config();
  int skips = 0, clips = 0;
  for (const Sums& s : cases()) {
    const k::StepGuard want = host_decision(s, 8192, c, 0.5);
    const k::StepGuard got = k::step_guard(s.data(), 8192, c, 0.5);
    CHECK(got.skip == want.skip);
    CHECK(got.scale == want.scale);
    skips += got.skip;
    clips += got.scale != 1.0f ? 1 : 0;
  }
  // The cases cover both decisions and both sides of the clip.
  CHECK(skips > 5);
  CHECK(clips > 10);
}

// The deferred run as the updater's per-minibatch flow decides it: skip a non-finite minibatch,
// and with on_nonfinite: stop skip every later one too (the updater throws there); Adam's count
// advances only for steps taken.
TEST_CASE("deferred step guard: skips do not count, and a stop skips the rest of the run") {
  const k::PpoLossConfig c = loss_config();
  const std::vector<Sums> all = cases();
  const Sums good = all[0], bad = all[all.size() - 2];
  REQUIRE(host_decision(bad, 64, c, 0.5).skip == 1);
  REQUIRE(host_decision(good, 64, c, 0.5).skip == 0);
  const std::vector<Sums> run = {good, bad, good, good, bad, good};
  for (const bool stop : {false, true}) {
    CAPTURE(stop);
    k::StepCounter counter;
    int want_applied = 0;
    bool stopped = false;
    for (const Sums& s : run) {
      const int before = counter.applied;
      const k::StepGuard g = k::deferred_step_guard(s.data(), 64, c, 0.5, stop, false, counter);
      const k::StepGuard want = host_decision(s, 64, c, 0.5);
      if (stopped) {
        CHECK(g.skip == 1);
        CHECK(counter.applied == before);
        continue;
      }
      CHECK(g.skip == want.skip);
      CHECK(g.scale == want.scale);
      want_applied += 1 - want.skip;
      if (want.skip && stop) stopped = true;
      CHECK(counter.applied == want_applied);
      CHECK(counter.stopped == (stopped ? 1 : 0));
    }
    CHECK(counter.applied == (stop ? 1 : 4));
  }
}

// An fp16 loss scale's overflow (finite loss, non-finite gradient norm) skips its minibatch
// without stopping the run when tolerated; a non-finite loss still stops it, and without the
// tolerance an overflow stops it as any non-finite minibatch does.
TEST_CASE("deferred step guard: a tolerated gradient overflow skips without stopping") {
  const k::PpoLossConfig c = loss_config();
  const Sums good = cases()[0];
  Sums overflow = good, bad_loss = good;
  overflow[5] = std::numeric_limits<double>::infinity();
  bad_loss[1] = std::numeric_limits<double>::quiet_NaN();
  REQUIRE(std::isfinite(k::minibatch_loss(overflow.data(), 64, c)));
  for (const bool tolerate : {false, true}) {
    CAPTURE(tolerate);
    k::StepCounter counter;
    const std::vector<Sums> run = {good, overflow, good};
    std::vector<int> skips;
    for (const Sums& s : run)
      skips.push_back(k::deferred_step_guard(s.data(), 64, c, 0.5, true, tolerate, counter).skip);
    CHECK(skips == std::vector<int>{0, 1, tolerate ? 0 : 1});
    CHECK(counter.applied == (tolerate ? 2 : 1));
    CHECK(counter.stopped == (tolerate ? 0 : 1));
    // A non-finite loss is no overflow: it stops the run either way.
    const k::StepGuard g =
        k::deferred_step_guard(bad_loss.data(), 64, c, 0.5, true, tolerate, counter);
    CHECK(g.skip == 1);
    CHECK(counter.stopped == 1);
  }
}

#ifdef RECUR_WITH_CUDA
TEST_CASE("step guard kernel equals the CPU reference bit for bit and counts skips") {
  if (!recur::test::gpu_or_skip("step guard kernel")) return;
  const k::PpoLossConfig c = loss_config();
  k::DeviceBuffer<double> sums(6);
  k::DeviceBuffer<k::StepGuard> guard(1);
  k::DeviceBuffer<int> count(1);
  count.zero(nullptr);
  int want_count = 0;
  for (const Sums& s : cases()) {
    sums.upload(s, nullptr);
    k::launch_step_guard(sums.data(), 8192, c, 0.5, guard.data(), count.data(), nullptr);
    const k::StepGuard want = k::step_guard(s.data(), 8192, c, 0.5);
    const k::StepGuard got = recur::test::to_host(guard)[0];
    CHECK(got.skip == want.skip);
    CHECK(got.scale == want.scale);
    want_count += want.skip;
  }
  CHECK(recur::test::to_host(count)[0] == want_count);
}

TEST_CASE("guarded Adam equals host-factor Adam, and a skip leaves everything unchanged") {
  if (!recur::test::gpu_or_skip("guarded Adam")) return;
  using recur::test::to_device;
  using recur::test::to_host;
  recur::Rng rng(9);
  const size_t n = 70000;  // more than one block per segment
  auto random = [&](double lo, double hi) {
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>(rng.uniform(lo, hi));
    return v;
  };
  const std::vector<float> p0 = random(-1, 1), g0 = random(-2, 2), m0 = random(-0.1, 0.1),
                           v0 = random(0, 0.01);
  const k::AdamCoefficients a = k::adam_coefficients(0.9f, 0.999f, 1e-5f, 3e-4, 7);
  for (const float scale : {1.0f, 0.37f}) {
    for (const int skip : {0, 1}) {
      CAPTURE(scale);
      CAPTURE(skip);
      // Two identical copies: one stepped with the host factor, one with the guard.
      auto p1 = to_device(p0), g1 = to_device(g0), m1 = to_device(m0), v1 = to_device(v0);
      auto p2 = to_device(p0), g2 = to_device(g0), m2 = to_device(m0), v2 = to_device(v0);
      k::ParamSegments s1, s2;
      s1.segment[0] = {p1.data(), g1.data(), m1.data(), v1.data(), static_cast<long long>(n)};
      s2.segment[0] = {p2.data(), g2.data(), m2.data(), v2.data(), static_cast<long long>(n)};
      s1.count = s2.count = 1;
      k::StepGuard host_guard;
      host_guard.scale = scale;
      host_guard.skip = skip;
      auto guard = to_device(std::vector<k::StepGuard>{host_guard});
      if (!skip) k::launch_scale_and_adam(s1, scale, a, nullptr);
      k::launch_scale_and_adam(s2, guard.data(), a, nullptr);
      CHECK(to_host(p2) == to_host(p1));
      CHECK(to_host(g2) == to_host(g1));
      CHECK(to_host(m2) == to_host(m1));
      CHECK(to_host(v2) == to_host(v1));
      if (skip) CHECK(to_host(p2) == p0);
    }
  }
}
TEST_CASE("deferred step guard kernel: records, counter and Adam coefficients as the reference") {
  if (!recur::test::gpu_or_skip("deferred step guard kernel")) return;
  using recur::test::to_host;
  const k::PpoLossConfig c = loss_config();
  const std::vector<Sums> all = cases();
  const std::vector<Sums> run = {all[0], all[all.size() - 2], all[1], all[2], all[all.size() - 5]};
  const int count = static_cast<int>(run.size());
  std::vector<k::AdamCoefficients> table;
  for (int i = 0; i < count; ++i)
    table.push_back(k::adam_coefficients(0.9f, 0.999f, 1e-5f, 3e-4, 11 + i));
  for (const auto& [stop, tolerate] :
       {std::pair{false, false}, std::pair{true, false}, std::pair{true, true}}) {
    CAPTURE(stop);
    CAPTURE(tolerate);
    auto coefficients = recur::test::to_device(table);
    k::DeviceBuffer<double> sums(6), records(run.size() * 6);
    k::DeviceBuffer<k::StepCounter> counter(1);
    counter.zero(nullptr);
    k::DeviceBuffer<k::StepGuard> guard(1);
    k::DeviceBuffer<k::AdamCoefficients> chosen(1);
    k::StepCounter want_counter;
    for (size_t i = 0; i < run.size(); ++i) {
      sums.upload(run[i], nullptr);
      k::launch_deferred_step_guard(sums.data(), 64, c, 0.5, stop, tolerate, coefficients.data(),
                                    count, counter.data(), guard.data(), chosen.data(),
                                    records.data() + i * 6, nullptr);
      const int index = want_counter.applied;
      const k::StepGuard want =
          k::deferred_step_guard(run[i].data(), 64, c, 0.5, stop, tolerate, want_counter);
      const k::StepGuard got = to_host(guard)[0];
      CHECK(got.skip == want.skip);
      CHECK(got.scale == want.scale);
      if (!want.skip) {
        const k::AdamCoefficients a = to_host(chosen)[0];
        CHECK(a.step_size == table[static_cast<size_t>(index)].step_size);
        CHECK(a.inv_sqrt_bc2 == table[static_cast<size_t>(index)].inv_sqrt_bc2);
      }
      const k::StepCounter got_counter = to_host(counter)[0];
      CHECK(got_counter.applied == want_counter.applied);
      CHECK(got_counter.stopped == want_counter.stopped);
    }
    const std::vector<double> rec = to_host(records);
    for (size_t i = 0; i < run.size(); ++i)
      for (size_t q = 0; q < 6; ++q) {
        const double a = rec[i * 6 + q], b = run[i][q];
        CHECK((a == b || (std::isnan(a) && std::isnan(b))));
      }
  }
}

TEST_CASE("Adam with device coefficients equals Adam with host coefficients") {
  if (!recur::test::gpu_or_skip("Adam with device coefficients")) return;
  using recur::test::to_device;
  using recur::test::to_host;
  recur::Rng rng(19);
  const size_t n = 5000;
  std::vector<float> p0(n), g0(n), m0(n), v0(n);
  for (size_t i = 0; i < n; ++i) {
    p0[i] = static_cast<float>(rng.uniform(-1, 1));
    g0[i] = static_cast<float>(rng.uniform(-2, 2));
    m0[i] = static_cast<float>(rng.uniform(-0.1, 0.1));
    v0[i] = static_cast<float>(rng.uniform(0, 0.01));
  }
  const k::AdamCoefficients a = k::adam_coefficients(0.9f, 0.999f, 1e-5f, 3e-4, 3);
  k::StepGuard host_guard;
  host_guard.scale = 0.6f;
  auto guard = to_device(std::vector<k::StepGuard>{host_guard});
  auto coefficients = to_device(std::vector<k::AdamCoefficients>{a});
  auto p1 = to_device(p0), g1 = to_device(g0), m1 = to_device(m0), v1 = to_device(v0);
  auto p2 = to_device(p0), g2 = to_device(g0), m2 = to_device(m0), v2 = to_device(v0);
  k::ParamSegments s1, s2;
  s1.segment[0] = {p1.data(), g1.data(), m1.data(), v1.data(), static_cast<long long>(n)};
  s2.segment[0] = {p2.data(), g2.data(), m2.data(), v2.data(), static_cast<long long>(n)};
  s1.count = s2.count = 1;
  k::launch_scale_and_adam(s1, guard.data(), a, nullptr);
  k::launch_scale_and_adam(s2, guard.data(), coefficients.data(), nullptr);
  CHECK(to_host(p2) == to_host(p1));
  CHECK(to_host(g2) == to_host(g1));
  CHECK(to_host(m2) == to_host(m1));
  CHECK(to_host(v2) == to_host(v1));
}
#endif
