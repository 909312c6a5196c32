// kernels/learner_math.h on the host (no GPU needed; runs in CI): ppo_element against an
// independent float64 formula of the clipped PPO objective and against central differences of
// the minibatch loss built from its own loss terms; adam_element against torch.optim.Adam's
// formula in float64.
#include "kernels/learner_math.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.h"

namespace {

namespace k = recur::kernels;

struct Minibatch {
  std::vector<float> logp, old_logp, adv, value, old_value, ret;
};

// log-ratios in [-0.6, 0.6] (clip range 0.2: ratios inside and on both sides outside), values
// within and beyond clip_range_vf of the old values.
Minibatch random_minibatch(recur::Rng& rng, int m) {
  Minibatch b;
  for (int i = 0; i < m; ++i) {
    const auto old_logp = static_cast<float>(rng.uniform(-3, -0.1));
    b.old_logp.push_back(old_logp);
    b.logp.push_back(static_cast<float>(old_logp + rng.uniform(-0.6, 0.6)));
    b.adv.push_back(static_cast<float>(rng.uniform(-2, 2)));
    const auto old_value = static_cast<float>(rng.uniform(-1, 1));
    b.old_value.push_back(old_value);
    b.value.push_back(static_cast<float>(old_value + rng.uniform(-0.5, 0.5)));
    b.ret.push_back(static_cast<float>(rng.uniform(-1.5, 1.5)));
  }
  return b;
}

// The clipped objective written independently of ppo_element (min form of the surrogate, expm1
// for the KL), float64 throughout.
struct Reference {
  double policy_loss = 0, value_loss = 0, approx_kl = 0, clipped = 0;
};
Reference reference_element(double logp, double old_logp, double adv, double v, double v_old,
                            double ret, const k::PpoLossConfig& c) {
  Reference r;
  const double lr = logp - old_logp, ratio = std::exp(lr);
  const double clamped = std::clamp(ratio, 1.0 - c.clip_range, 1.0 + c.clip_range);
  r.policy_loss = -std::min(ratio * adv, clamped * adv);
  r.approx_kl = std::expm1(lr) - lr;
  r.clipped = ratio < 1.0 - c.clip_range || ratio > 1.0 + c.clip_range ? 1.0 : 0.0;
  if (c.clip_range_vf > 0) {
    const double vc = v_old + std::clamp(v - v_old, -c.clip_range_vf, c.clip_range_vf);
    r.value_loss = 0.5 * std::max((v - ret) * (v - ret), (vc - ret) * (vc - ret));
  } else {
    r.value_loss = 0.5 * (v - ret) * (v - ret);
  }
  return r;
}

// The mean minibatch loss as ppo_element's terms make it (without the entropy term, whose
// gradient is a constant the kernels do not derive): pg / m + vf_coef vl / m.
double element_loss(const Minibatch& b, int i, float logp, float value, const k::PpoLossConfig& c,
                    double inv_m) {
  const auto u = static_cast<size_t>(i);
  const k::PpoElement e =
      k::ppo_element(logp, b.old_logp[u], b.adv[u], value, b.old_value[u], b.ret[u], c, inv_m);
  return e.policy_loss * inv_m + c.vf_coef * e.value_loss * inv_m;
}

// Whether [x - h, x + h] holds a kink of the loss (there central differences are meaningless).
bool near(double x, double kink, double h) {
  return std::abs(x - kink) < 2 * h;
}

}  // namespace

TEST_CASE("ppo_element sums equal a float64 reference of the clipped objective") {
  recur::Rng rng(21);
  for (double clip_vf : {0.0, 0.2}) {
    CAPTURE(clip_vf);
    const k::PpoLossConfig c{0.2, clip_vf, 0.5, 0.01};
    for (int m : {1, 7, 256}) {
      CAPTURE(m);
      const Minibatch b = random_minibatch(rng, m);
      const double inv_m = 1.0 / m;
      double pg = 0, vl = 0, kl = 0, clipped = 0;
      double ref_pg = 0, ref_vl = 0, ref_kl = 0, ref_clipped = 0, abs_pg = 0, abs_kl = 0;
      for (int i = 0; i < m; ++i) {
        const auto u = static_cast<size_t>(i);
        const k::PpoElement e = k::ppo_element(b.logp[u], b.old_logp[u], b.adv[u], b.value[u],
                                               b.old_value[u], b.ret[u], c, inv_m);
        const Reference r = reference_element(b.logp[u], b.old_logp[u], b.adv[u], b.value[u],
                                              b.old_value[u], b.ret[u], c);
        pg += e.policy_loss, vl += e.value_loss, kl += e.approx_kl, clipped += e.clipped;
        ref_pg += r.policy_loss, ref_vl += r.value_loss, ref_kl += r.approx_kl;
        ref_clipped += r.clipped;
        abs_pg += std::abs(r.policy_loss), abs_kl += std::abs(r.approx_kl);
      }
      // Float64 formulas that differ in form: ~1e-16 per term, 1e-12 of the sum of |terms|
      // leaves room for the cancellation in (r - 1) - log r vs expm1.
      CHECK(std::abs(pg - ref_pg) <= 1e-12 * abs_pg);
      CHECK(vl == doctest::Approx(ref_vl).epsilon(1e-12));
      CHECK(std::abs(kl - ref_kl) <= 1e-12 * abs_kl + 1e-300);
      CHECK(clipped == ref_clipped);
      if (m == 256) {  // the batch covers both clip regimes
        CHECK(clipped > 0.1 * m);
        CHECK(clipped < 0.9 * m);
      }
    }
  }
}

TEST_CASE("ppo_element gradients equal central differences of its loss") {
  recur::Rng rng(22);
  // h = 2^-14: truncation ~h^2/6 |f'''| ~ 1e-9 relative, float64 rounding of the loss over 2h
  // ~1e-12; the gradients themselves are float32 (~6e-8 relative). Hence 1e-6 relative.
  const double h = 0x1.0p-14;
  for (double clip_vf : {0.0, 0.2}) {
    CAPTURE(clip_vf);
    const k::PpoLossConfig c{0.2, clip_vf, 0.5, 0.0};
    const int m = 200;
    const Minibatch b = random_minibatch(rng, m);
    const double inv_m = 1.0 / m;
    int checked_logp = 0, checked_value = 0, outside = 0;
    for (int i = 0; i < m; ++i) {
      CAPTURE(i);
      const auto u = static_cast<size_t>(i);
      const k::PpoElement e = k::ppo_element(b.logp[u], b.old_logp[u], b.adv[u], b.value[u],
                                             b.old_value[u], b.ret[u], c, inv_m);
      // d / d logp: skip the two kinks of the clip (log-ratio at log(1 -+ eps)).
      const double lr = double{b.logp[u]} - b.old_logp[u];
      outside += e.clipped > 0 ? 1 : 0;
      if (!near(lr, std::log(1.0 - c.clip_range), h) &&
          !near(lr, std::log(1.0 + c.clip_range), h)) {
        const auto plus = static_cast<float>(b.logp[u] + h),
                   minus = static_cast<float>(b.logp[u] - h);
        const double fd = (element_loss(b, i, plus, b.value[u], c, inv_m) -
                           element_loss(b, i, minus, b.value[u], c, inv_m)) /
                          (double{plus} - double{minus});
        CHECK(e.d_logp == doctest::Approx(fd).epsilon(1e-6).scale(1e-9));
        ++checked_logp;
      }
      // d / d value: skip the kinks of the clipped value loss (|v - v_old| = clip, and where the
      // two squared errors cross outside the range, v = 2 R - v_clipped).
      const double v = b.value[u], v_old = b.old_value[u], ret = b.ret[u];
      const bool kink = clip_vf > 0 && (near(std::abs(v - v_old), clip_vf, h) ||
                                        near(v, 2 * ret - (v_old + clip_vf), h) ||
                                        near(v, 2 * ret - (v_old - clip_vf), h));
      if (!kink) {
        const auto plus = static_cast<float>(v + h), minus = static_cast<float>(v - h);
        const double fd = (element_loss(b, i, b.logp[u], plus, c, inv_m) -
                           element_loss(b, i, b.logp[u], minus, c, inv_m)) /
                          (double{plus} - double{minus});
        CHECK(e.d_value == doctest::Approx(fd).epsilon(1e-6).scale(1e-9));
        ++checked_value;
      }
    }
    // Kinks are rare: nearly every sample was checked, and some had a clipped ratio (gradient 0).
    CHECK(checked_logp > m - 10);
    CHECK(checked_value > m - 10);
    CHECK(outside > 20);
  }
}

TEST_CASE("adam_element over five steps equals torch Adam in float64") {
  recur::Rng rng(23);
  for (float eps : {1e-5f, 1e-8f}) {
    CAPTURE(eps);
    const float beta1 = 0.9f, beta2 = 0.999f;
    const double lr = 3e-3;
    const int n = 64;
    std::vector<float> p(n), m(n, 0.0f), v(n, 0.0f);
    for (auto& x : p)  // |p| in [0.5, 1.5): five steps of ~lr never bring it near 0
      x = static_cast<float>((rng.uniform() < 0.5 ? -1 : 1) * rng.uniform(0.5, 1.5));
    const std::vector<float> p0 = p;
    std::vector<double> pd(p.begin(), p.end()), md(n, 0.0), vd(n, 0.0), max_g(n, 0.0), path(n, 0.0);
    for (int t = 1; t <= 5; ++t) {
      const k::AdamCoefficients a = k::adam_coefficients(beta1, beta2, eps, lr, t);
      // torch.optim.Adam (no weight decay, no amsgrad), in float64 from the same float inputs.
      const double b1 = beta1, b2 = beta2, bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
      for (int i = 0; i < n; ++i) {
        const auto u = static_cast<size_t>(i);
        // Gradients over several magnitudes, some exactly 0 (there eps shapes the step).
        const double scale = std::pow(10.0, -(i % 6));
        const auto g = i % 9 == 0 ? 0.0f : static_cast<float>(rng.uniform(-1, 1) * scale);
        max_g[u] = std::max(max_g[u], std::abs(double{g}));
        k::adam_element(p[u], g, m[u], v[u], a);
        md[u] = b1 * md[u] + (1 - b1) * g;
        vd[u] = b2 * vd[u] + (1 - b2) * double{g} * g;
        const double step = lr / bc1 * md[u] / (std::sqrt(vd[u]) / std::sqrt(bc2) + double{eps});
        pd[u] -= step;
        path[u] += std::abs(step);
      }
    }
    // Float32 state: a few roundings (~6e-8 each) per step, far below 1e-6 relative for p and v
    // (v >= 0 never cancels); m may cancel towards 0, so it is held to 1e-6 of its gradients'
    // scale. The update itself (p - p0) is held tighter than p's 1e-6: five roundings of p
    // (<= 2.5 ulp) plus 1e-5 of the steps' total length (each step's float32 arithmetic).
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      const auto u = static_cast<size_t>(i);
      CHECK(std::abs(p[u] - pd[u]) <= 1e-6 * std::abs(pd[u]));
      const double ulp = std::nextafter(std::abs(p[u]), 2.0f) - std::abs(p[u]);
      CHECK(std::abs((p[u] - p0[u]) - (pd[u] - p0[u])) <= 3 * ulp + 1e-5 * path[u]);
      CHECK(std::abs(m[u] - md[u]) <= 1e-6 * max_g[u]);
      CHECK(std::abs(v[u] - vd[u]) <= 1e-6 * vd[u]);
    }
  }
}
