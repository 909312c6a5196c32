// MultiarmedBandit, with POPGym's rules (popgym 1.0.7, popgym/envs/multiarmed_bandit.py): an
// episodic bandit whose arms are redrawn every episode, so the agent must explore, remember what
// each arm paid, and exploit.
//
// Reset draws each arm's payout probability uniformly from [0, 1) as a float32 (numpy's
// random(dtype=float32): 24 random bits). Each step pulls an arm: it pays when a uniform double
// in [0, 1) is below the arm's probability.
//   action  Discrete(num_bandits): the arm
//   obs     Box(0, 1, (2,)): one-hot of POPGym's Discrete(2) observation: index 1 when the last
//           pull paid, index 0 when it did not and at reset. POPGym sets obs_requires_prev_action
//           (the pulled arm is not in the observation); like POPGym, recur leaves adding it to a
//           wrapper or to the policy.
//   reward  +1/episode_length when the pull pays, -1/episode_length when it does not
//   ends    never terminated; truncated after episode_length steps (POPGym reports truncated=True
//           on that step). recur's base class owns truncation, so each id registers its
//           episode_length as its time limit; the option episode_length defaults to the time
//           limit (max_episode_steps) and must equal it. max_episode_steps = 0 (the form
//           gymnasium.make uses, wrapping its own TimeLimit) leaves truncation to the outer
//           limit: episode_length then defaults to the difficulty's, and a step past it throws.
// Difficulties as POPGym: Easy 10 arms / 200 steps, Medium 20 / 400, Hard 30 / 600 (options
// num_bandits, episode_length).
//
// Randomness inside steps: the payout draws of a whole episode are drawn at reset (the same
// uniform doubles POPGym draws one per step) and are part of the state, so a state resumes and
// replays exactly, and the parity test gives recur the draws POPGym's generator will make.
#pragma once

#include <cstdint>
#include <vector>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct MultiarmedBanditConfig {
  int num_bandits = 10;
  int episode_length = 200;  // steps; also the registered time limit

  // Reads num_bandits and episode_length; episode_length defaults to max_episode_steps (itself
  // defaulting to defaults.episode_length) and must equal it unless that is 0 (no limit).
  static MultiarmedBanditConfig read(OptionReader& options, MultiarmedBanditConfig defaults);
};

class MultiarmedBandit final : public Env {
 public:
  explicit MultiarmedBandit(const MultiarmedBanditConfig& config = {});

  // State: the arms' payout probabilities (num_bandits float32 values), the payout draws of
  // the episode (episode_length values in [0, 1), one per step), the steps taken
  // (0..episode_length) and the last observation (0 or 1; 0 before the first step).
  int state_size() const override { return config_.num_bandits + config_.episode_length + 2; }
  void get_state(std::span<double> out) const override;

  // A picture of the table, 600x400 at 4 fps (POPGym renders nothing; recur's choice): see
  // draw() in the .cc file for what it shows.
  RenderInfo render_info() const override { return {600, 400, 4}; }
  void draw(render::Canvas& canvas) const override;

 private:
  void set_state_impl(std::span<const double> state) override;
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  MultiarmedBanditConfig config_;
  std::vector<float> bandits_;  // payout probability of each arm
  std::vector<double> draws_;   // the uniform draw that decides step t's payout
  int steps_ = 0;
  int paid_ = 0;  // the observation: 1 when the last pull paid
};

}  // namespace recur::envs
