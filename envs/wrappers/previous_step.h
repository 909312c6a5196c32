// PreviousStep: the previous action and/or reward appended to the observation, the inputs that
// memory-based RL feeds its recurrent cores (POPGym's baselines wrap every env in
// Antialias(PreviousAction(env)); Ni et al. 2022's recurrent SAC/TD3 take "oa" / "oar" inputs).
// Any env gets it through two options every registered id takes (envs/registry.h):
//   prev_action: true   appends the previous action: a one-hot of n floats for Discrete(n), the
//                       action clipped to its bounds for a Box
//   prev_reward: true   appends the previous reward (one float)
// With either, one more float follows: 1 on the first observation of an episode, else 0 (POPGym's
// Antialias flag). On that first observation the previous action and reward are zeros, so a
// Discrete action 0 is not confused with "no action yet", and the flag tells a Box's zero apart.
//
//   observation = [inner observation, prev action (if set), prev reward (if set), first flag]
//
// The inner env keeps its dynamics, reward, termination and rendering; the wrapper's state is the
// inner state followed by the appended values, so snapshots resume exactly (an inner env without
// a flat state, state_size() 0, stays so: restore() then starts a new episode, as for the inner).
#pragma once

#include <memory>
#include <vector>

#include "envs/env.h"

namespace recur::envs {

class PreviousStep final : public Env {
 public:
  PreviousStep(std::unique_ptr<Env> inner, bool prev_action, bool prev_reward);

  const Env& inner() const { return *inner_; }
  // Floats appended after the inner observation (action, reward, flag).
  int appended_size() const { return action_size_ + (prev_reward_ ? 1 : 0) + 1; }

  int state_size() const override;
  void get_state(std::span<double> out) const override;

  RenderInfo render_info() const override { return inner_->render_info(); }
  void draw(render::Canvas& canvas) const override { inner_->draw(canvas); }

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;
  void set_state_impl(std::span<const double> state) override;

  std::unique_ptr<Env> inner_;
  bool prev_reward_;
  int inner_obs_;                // floats of the inner observation
  int action_size_;              // floats the previous action takes (0 when not appended)
  std::vector<float> appended_;  // (appended_size(),) the values after the inner observation
};

// Wraps `env` when either option is set; returns it unchanged otherwise.
std::unique_ptr<Env> with_previous_step(std::unique_ptr<Env> env, bool prev_action,
                                        bool prev_reward);

}  // namespace recur::envs
