#include "envs/box2d/bipedal_walker.h"

#include <numbers>
#include <vector>

namespace recur::envs {
namespace {

Space make_observation_space() {
  constexpr float kPi = std::numbers::pi_v<float>;
  std::vector<float> high = {kPi, 5, 5, 5, kPi, 5, kPi, 5, 5, kPi, 5, kPi, 5, 5};
  std::vector<float> low = {-kPi, -5, -5, -5, -kPi, -5, -kPi, -5, -0.0f, -kPi, -5, -kPi, -5, -0.0f};
  for (int i = 0; i < bipedal::kLidarRays; ++i) {
    low.push_back(-1);
    high.push_back(1);
  }
  return Space::box(low, high);
}

}  // namespace

BipedalWalkerConfig BipedalWalkerConfig::read(OptionReader& options, bool hardcore_default) {
  BipedalWalkerConfig c;
  c.hardcore = options.get_bool("hardcore", hardcore_default);
  return c;
}

BipedalWalker::BipedalWalker(const BipedalWalkerConfig& config)
    : Env(make_observation_space(), Space::box(-1.0f, 1.0f, {4})), config_(config) {}

void BipedalWalker::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  bipedal::RngDraws draws(rng);
  bipedal::generate_terrain(config_.hardcore, draws, terrain_);
  bipedal::generate_clouds(draws, terrain_);
  const double push = draws.uniform(-bipedal::kInitialRandom, bipedal::kInitialRandom);
  physics_.reset(terrain_, push);
  steps_ = 0;
}

Env::Outcome BipedalWalker::step_impl(std::span<const float> action) {
  const bipedal::StepReward r = physics_.step(action);
  ++steps_;
  return {r.reward, r.terminated};
}

void BipedalWalker::observe(std::span<float> obs) const {
  bipedal::observe(physics_.state(), obs);
}

RenderInfo BipedalWalker::render_info() const {
  return {static_cast<int>(bipedal::kViewportW), static_cast<int>(bipedal::kViewportH),
          static_cast<int>(bipedal::kFps)};
}

}  // namespace recur::envs
