#include "agent/offpolicy/recurrent_tower.h"

#include "core/error.h"

namespace recur::agent::offpolicy {

RecurrentTower::RecurrentTower(const policy::MlpSpec* encoder, const policy::CoreSpec& core,
                               const policy::Placement& placement)
    : core_(policy::make_sequence_executor(core, placement)) {
  if (encoder != nullptr) {
    RECUR_CHECK_ARG(encoder->output() == core.input,
                    "recurrent tower: the encoder outputs {} features, the core takes {}",
                    encoder->output(), core.input);
    encoder_ = std::make_unique<policy::Mlp>(*encoder);
  }
}

void RecurrentTower::forward(int T, int B, std::span<const float> x,
                             std::span<const uint8_t> episode_start,
                             std::span<const float> initial_state) {
  t_ = T, b_ = B;
  const auto n = static_cast<size_t>(T) * B;
  std::span<const float> features = x;
  if (encoder_) {
    // Grows once to the largest batch, then reuses its buffers.
    if (encoder_->reserved_batch() < T * B) encoder_->reserve(T * B);
    features_.resize(n * encoder_->output());
    encoder_->forward(T * B, x, features_);
    features = features_;
  }
  y_.resize(n * hidden());
  core_->forward(T, B, features, episode_start, initial_state, y_);
}

void RecurrentTower::backward(std::span<const float> dy) {
  if (!encoder_) {
    core_->backward(dy, {}, {});
    return;
  }
  d_features_.resize(static_cast<size_t>(t_) * b_ * encoder_->output());
  core_->backward(dy, d_features_, {});
  encoder_->backward(d_features_, {});
}

void RecurrentTower::zero_gradients() {
  if (encoder_) encoder_->zero_gradients();
  core_->zero_gradients();
}

void RecurrentTower::append_groups(std::vector<policy::ParamGroup>& out, const std::string& name) {
  if (encoder_)
    out.push_back({name + ".encoder", encoder_->parameters(), encoder_->gradients(), nullptr});
  out.push_back({name + ".core", core_->parameters(), core_->parameter_gradients(),
                 &core_->parameter_layout()});
}

void RecurrentTower::load(const policy::TensorMap& tensors, const std::string& prefix) {
  if (encoder_) encoder_->load_tensors(tensors, prefix + "encoder.");
  core_->load(policy::CanonicalWeights::from_tensors(core_->spec(), tensors, prefix + "core."));
}

void RecurrentTower::to_tensors(policy::TensorMap& out, const std::string& prefix) const {
  if (encoder_) out.merge(encoder_->to_tensors(prefix + "encoder."));
  out.merge(core_->weights().to_tensors(prefix + "core."));
}

void RecurrentTower::gradient_tensors(policy::TensorMap& out, const std::string& prefix) const {
  if (encoder_) out.merge(encoder_->gradient_tensors(prefix + "encoder."));
  out.merge(core_->gradients().to_tensors(prefix + "core."));
}

void RecurrentTower::polyak_from(RecurrentTower& source, float tau) {
  RECUR_CHECK_ARG(core_->spec() == source.core_->spec() && !encoder_ == !source.encoder_,
                  "polyak: the towers differ in shape");
  if (encoder_) polyak(encoder_->parameters(), source.encoder_->parameters(), tau);
  polyak(core_->parameters(), source.core_->parameters(), tau);
}

void polyak(std::span<float> target, std::span<const float> source, float tau) {
  RECUR_CHECK_ARG(target.size() == source.size(), "polyak: {} vs {} parameters", target.size(),
                  source.size());
  for (size_t i = 0; i < target.size(); ++i) target[i] += tau * (source[i] - target[i]);
}

}  // namespace recur::agent::offpolicy
