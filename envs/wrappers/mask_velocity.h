// MaskVelocity: partial observability as rl-baselines3-zoo's MaskVelocityWrapper. The velocity
// entries of the observation are set to zero (not removed), so shapes and spaces are unchanged
// and a policy must infer velocities from memory. Registered as {Base}NoVel-v{N}, with the base
// env's time limit. Index lists per env live with the registrations.
#pragma once

#include <memory>
#include <vector>

#include "envs/env.h"
#include "envs/registry.h"

namespace recur::envs {

class MaskVelocity final : public Env {
 public:
  MaskVelocity(std::unique_ptr<Env> inner, std::vector<int> masked_indices);

  const Env& inner() const { return *inner_; }
  const std::vector<int>& masked_indices() const { return masked_; }

  int state_size() const override { return inner_->state_size(); }
  void get_state(std::span<double> out) const override { inner_->get_state(out); }

  // Masking hides observations only: the picture is the inner env's.
  RenderInfo render_info() const override { return inner_->render_info(); }
  void draw(render::Canvas& canvas) const override { inner_->draw(canvas); }

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override {
    forward_reset(*inner_, rng, seed);
  }
  Outcome step_impl(std::span<const float> action) override {
    return forward_step(*inner_, action);
  }
  void observe(std::span<float> obs) const override;
  void set_state_impl(std::span<const double> s) override { forward_set_state(*inner_, s); }

  std::unique_ptr<Env> inner_;
  std::vector<int> masked_;
};

// Adds `spec` and its {Name}NoVel-v{N} twin (same time limit and threshold) that zeroes the
// observation entries `velocity`.
void register_with_novel(Registry& registry, EnvSpec spec, std::vector<int> velocity);

}  // namespace recur::envs
