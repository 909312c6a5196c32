#include "envs/mujoco/inverted_pendulum.h"

#include <cmath>

#include <mujoco/mujoco.h>

namespace recur::envs {
namespace {

constexpr MujocoLayout kLayout{"InvertedPendulum", "inverted_pendulum.xml", 2, 2, 1, 3};

}  // namespace

InvertedPendulumConfig InvertedPendulumConfig::read(OptionReader& options, const std::string& env,
                                                    bool v5) {
  InvertedPendulumConfig c;
  c.v5 = v5;
  c.mujoco = MujocoConfig::read(options, env, c.mujoco);
  return c;
}

InvertedPendulum::InvertedPendulum(const InvertedPendulumConfig& config)
    : MujocoEnv(kLayout, config.mujoco, {kLayout.nq, kLayout.nv, 0}), config_(config) {}

void InvertedPendulum::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  begin_reset();
  add_uniform_noise(rng, data()->qpos, model()->nq, reset_noise_scale());
  add_uniform_noise(rng, data()->qvel, model()->nv, reset_noise_scale());
  finish_reset();
}

Env::Outcome InvertedPendulum::step_impl(std::span<const float> action) {
  simulate(action);
  const mjData* d = data();
  bool finite = true;
  for (int i = 0; i < model()->nq; ++i) finite = finite && std::isfinite(d->qpos[i]);
  for (int i = 0; i < model()->nv; ++i) finite = finite && std::isfinite(d->qvel[i]);
  Outcome out;
  out.terminated = !finite || std::abs(d->qpos[1]) > 0.2;
  out.reward = config_.v5 && out.terminated ? 0.0 : 1.0;
  return out;
}

void InvertedPendulum::observe(std::span<float> obs) const {
  ObsWriter out(obs, ObsPart::kFull);
  out.positions(data()->qpos, model()->nq);
  out.velocities(data()->qvel, model()->nv);
}

}  // namespace recur::envs
