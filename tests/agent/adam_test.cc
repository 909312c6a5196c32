#include "agent/adam.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace recur;

TEST_CASE("Adam matches torch.optim.Adam on hand-computed steps") {
  std::vector<float> p = {1.0f, -2.0f}, g = {0.5f, -0.1f};
  std::vector<policy::ParamGroup> groups = {{"w", p, g}};
  agent::Adam adam(groups, {0.9f, 0.999f, 1e-8f});
  adam.step(groups, 0.1f);
  // Step 1: m_hat = g, v_hat = g^2, so p -= lr * g / (|g| + eps) = lr * sign(g).
  CHECK(p[0] == doctest::Approx(0.9).epsilon(1e-6));
  CHECK(p[1] == doctest::Approx(-1.9).epsilon(1e-6));
  g[0] = 0.25f;
  adam.step(groups, 0.1f);
  // Step 2 by hand: m = .9*.05 + .1*.25 = .07, v = .999*.00025 + .001*.0625 = .00031225
  // m_hat = .07/.19, v_hat = .00031225/.001999; p -= .1 * m_hat / sqrt(v_hat)
  const double mh = 0.07 / 0.19, vh = 0.00031225 / (1 - 0.999 * 0.999);
  CHECK(p[0] == doctest::Approx(0.9 - 0.1 * mh / std::sqrt(vh)).epsilon(1e-5));
  // State round trip.
  const auto saved = adam.to_tensors();
  agent::Adam other(groups);
  other.load_tensors(saved);
  CHECK(other.steps() == 2);
  CHECK(other.to_tensors() == saved);
}

TEST_CASE("global gradient norm clipping scales all groups together") {
  std::vector<float> a = {0, 0}, ga = {3, 0}, b = {0}, gb = {4};
  std::vector<policy::ParamGroup> groups = {{"a", a, ga}, {"b", b, gb}};
  CHECK(agent::clip_grad_norm(groups, 1.0) == doctest::Approx(5.0));
  CHECK(ga[0] == doctest::Approx(0.6).epsilon(1e-5));
  CHECK(gb[0] == doctest::Approx(0.8).epsilon(1e-5));
  CHECK(agent::clip_grad_norm(groups, 10.0) == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(ga[0] == doctest::Approx(0.6).epsilon(1e-5));  // under the limit: unchanged
}

TEST_CASE("the global gradient norm over long groups equals a plain double sum") {
  // Group sizes around the 8-double lanes of policy/lane_sum.h: tails alone, whole lanes, both.
  std::vector<std::vector<float>> params, grads;
  double sq = 0;
  float v = 0.37f;
  for (size_t n : {1u, 7u, 8u, 9u, 64u, 1001u}) {
    params.emplace_back(n, 0.0f);
    grads.emplace_back(n);
    for (float& x : grads.back()) {
      v = std::fmod(v * 7.31f + 0.11f, 2.0f) - 1.0f;  // scattered values of both signs
      x = v;
      sq += double{x} * x;
    }
  }
  std::vector<policy::ParamGroup> groups;
  for (size_t i = 0; i < params.size(); ++i)
    groups.push_back({std::to_string(i), params[i], grads[i]});
  CHECK(agent::global_grad_norm(groups) == doctest::Approx(std::sqrt(sq)).epsilon(1e-14));
}

// A core group in a non-canonical layout (as cuDNN's opaque buffer): moments are saved in
// canonical order and restored into any other layout of the same core, so a run checkpointed on
// one device resumes on another.
TEST_CASE("Adam moments of a laid-out group are saved in canonical order") {
  using namespace recur::policy;
  const CoreSpec spec{CellType::kGru, 2, 3, 1, 0};
  const FlatLayout step = step_layout(spec);  // has zero blocks: positions no weight maps to
  const FlatLayout canon = canonical_layout(spec);
  std::vector<float> p(static_cast<size_t>(step.size), 0.0f), g(p.size(), 0.0f);
  std::vector<float> canon_grad(step.position.size());
  for (size_t i = 0; i < canon_grad.size(); ++i) canon_grad[i] = 0.01f * static_cast<float>(i + 1);
  scatter_canonical(step, canon_grad, g);
  std::vector<ParamGroup> groups{{"core", p, g, &step}};
  recur::agent::Adam adam(groups);
  adam.step(groups, 0.1f);
  const TensorMap saved = adam.to_tensors();
  const auto& m = saved.at("optim.adam.m.core").data;
  REQUIRE(m.size() == canon_grad.size());
  for (size_t i = 0; i < m.size(); ++i) CHECK(m[i] == doctest::Approx(0.1 * canon_grad[i]));

  // Restore into the canonical layout (the CPU learner) and step both with the same gradients:
  // the parameters agree position by position.
  std::vector<float> p2(canon_grad.size(), 0.0f), g2 = canon_grad;
  gather_canonical(step, p, p2);
  std::vector<ParamGroup> groups2{{"core", p2, g2, &canon}};
  recur::agent::Adam adam2(groups2);
  adam2.load_tensors(saved);
  adam.step(groups, 0.1f);
  adam2.step(groups2, 0.1f);
  std::vector<float> p_canon(canon_grad.size());
  gather_canonical(step, p, p_canon);
  CHECK(p_canon == p2);
  // Zero blocks got no update.
  std::vector<int> mapped(p.size(), 0);
  for (int64_t pos : step.position) mapped[static_cast<size_t>(pos)] = 1;
  for (size_t i = 0; i < p.size(); ++i)
    if (!mapped[i]) CHECK(p[i] == 0.0f);
}
