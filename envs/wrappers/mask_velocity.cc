#include "envs/wrappers/mask_velocity.h"

#include "core/error.h"

namespace recur::envs {

MaskVelocity::MaskVelocity(std::unique_ptr<Env> inner, std::vector<int> masked_indices)
    : Env(inner->observation_space(), inner->action_space()),
      inner_(std::move(inner)),
      masked_(std::move(masked_indices)) {
  for (int i : masked_)
    RECUR_CHECK_ARG(i >= 0 && i < inner_->obs_dim(),
                    "MaskVelocity: index {} is outside the observation (size {})", i,
                    inner_->obs_dim());
}

void MaskVelocity::observe(std::span<float> obs) const {
  forward_observe(*inner_, obs);
  for (int i : masked_) obs[static_cast<size_t>(i)] = 0.0f;
}

void register_with_novel(Registry& r, EnvSpec spec, std::vector<int> velocity) {
  EnvSpec novel = spec;
  const auto dash = spec.id.rfind("-v");
  novel.id = spec.id.substr(0, dash) + "NoVel" + spec.id.substr(dash);
  novel.summary = spec.summary + "; velocities hidden (zeroed)";
  novel.factory = [inner = spec.factory, velocity](OptionReader& options) -> std::unique_ptr<Env> {
    return std::make_unique<MaskVelocity>(inner(options), velocity);
  };
  r.add(std::move(spec));
  r.add(std::move(novel));
}

}  // namespace recur::envs
