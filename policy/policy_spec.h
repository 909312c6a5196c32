// The policy network's shape: observation normalizer -> encoder MLP -> recurrent core -> actor
// head (categorical logits for a discrete action space; the mean of a diagonal Gaussian with a
// learned state-independent log-std for a continuous one) and critic head (value). Actor and
// critic share the core, or each has its own encoder and core (shared_core = false).
//
// A continuous actor may instead be tanh-squashed (squash != kNone, the off-policy algorithms'
// actor; the math is policy/squashed_action.h's): the head then outputs [mean, raw log-std] per
// row (kTanhGaussian, SAC) or the mean alone (kTanh, TD3), there is no "actor.log_std" tensor,
// and actions land inside the env's Box [action_low, action_high], which the spec carries.
//
// The normalizer clips to [-obs_clip, obs_clip] (env.clip_obs); the actor, the learner's
// rollouts, evaluation and the ONNX export all take the bound from the spec.
//
// Parameters travel as one TensorMap with PyTorch-style names:
//   obs_norm.mean/var/count           encoder.0.weight, encoder.0.bias, encoder.2.weight, ...
//   core.weight_ih_l0 ... (canonical)  actor.weight, actor.bias, actor.log_std (continuous,
//                                      unsquashed)
//   critic.weight, critic.bias         critic_encoder.*, critic_core.* (separate cores only)
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/rng.h"
#include "policy/aligned.h"
#include "policy/canonical_weights.h"
#include "policy/core_spec.h"
#include "policy/mlp.h"
#include "policy/obs_normalizer.h"
#include "policy/squashed_action.h"
#include "policy/tensor.h"

namespace recur::policy {

enum class ActionKind { kDiscrete, kContinuous };

struct PolicySpec {
  int obs_dim = 1;
  ActionKind action_kind = ActionKind::kDiscrete;
  int action_dim = 2;               // Discrete: n; continuous: d
  std::vector<int> encoder = {64};  // hidden widths of the encoder MLP (empty: none)
  Activation activation = Activation::kTanh;
  std::vector<int> head = {};  // hidden widths of both heads after the core (empty: linear)
  CellType cell = CellType::kLstm;
  int hidden = 64;
  int layers = 1;
  float cell_clip = 0;
  // lstm_ln: LayerNorm's eps. Metadata "core.norm_epsilon", written for lstm_ln only; absent means
  // the default (a TF-imported cell carries TF's 1e-12).
  float norm_epsilon = kDefaultNormEpsilon;
  static constexpr float kDefaultNormEpsilon = 1e-5f;
  bool shared_core = true;
  float log_std_init = 0;    // continuous actions: initial log standard deviation
  float forget_bias = 1;     // LSTM: initial forget-gate bias (sum of b_ih and b_hh)
  float actor_gain = 0.01f;  // orthogonal gain of the actor head (small: near-uniform start)
  float critic_gain = 1.0f;
  // The encoder's and heads' initializer. kOrthogonal: CleanRL's and SB3's default (hidden gain
  // sqrt 2, output layers actor_gain / critic_gain). kPyTorch: nn.Linear's default, the output
  // layers scaled by actor_gain / critic_gain (SB3's ortho_init=False with both gains 1).
  // Metadata "policy.init", written only for kPyTorch; absent means kOrthogonal.
  InitScheme init = InitScheme::kOrthogonal;
  // The observation normalizer's bound: |normalized obs| <= obs_clip (env.clip_obs). Checkpoint
  // metadata "policy.obs_clip", written only when it is not the default 10; a checkpoint without
  // it means 10.
  float obs_clip = kDefaultObsClip;
  static constexpr float kDefaultObsClip = 10.0f;
  // Tanh-squashed continuous actions (policy/squashed_action.h). Not kNone: action_kind must be
  // kContinuous and action_low/high the env's Box (action_dim finite values each, low < high);
  // kNone: both empty. Metadata "policy.squash", "policy.action_low", "policy.action_high",
  // "policy.exploration_noise" are written only when squash != kNone (so unsquashed checkpoints
  // stay byte-identical); a checkpoint without them is unsquashed.
  Squash squash = Squash::kNone;
  std::vector<float> action_low, action_high;  // env units
  // kTanh only: std of the Gaussian noise added to tanh(mean) when exploring, in normalized
  // action units (the Box mapped to [-1, 1]).
  float exploration_noise = 0.1f;

  int feature_dim() const { return encoder.empty() ? obs_dim : encoder.back(); }
  // Floats per action in the actor's outputs and the rollout: a Discrete action is its index.
  int action_width() const { return action_kind == ActionKind::kDiscrete ? 1 : action_dim; }
  CoreSpec core_spec() const {
    return {cell, feature_dim(), hidden, layers, cell_clip, norm_epsilon};
  }
  MlpSpec encoder_spec() const;
  // Output width: action_dim, or squash_head_width(squash, action_dim) (2 d for kTanhGaussian).
  MlpSpec actor_head_spec() const;
  MlpSpec critic_head_spec() const;
  // Recurrent state per env slot: the actor core's, plus the critic core's when separate.
  int state_size() const;
  void validate() const;
  // The observation normalizer's settings: {.clip = obs_clip}.
  ObsNormalizerConfig normalizer_config() const;

  // For checkpoint metadata ("policy.hidden" = "64", ...), and back (errors name the key).
  std::map<std::string, std::string> to_metadata() const;
  static PolicySpec from_metadata(const std::map<std::string, std::string>& metadata);
  bool operator==(const PolicySpec&) const = default;
};

// Fresh parameters for spec: MLPs by spec.init (orthogonal: encoder gain sqrt 2, heads actor_gain
// and critic_gain), PyTorch-default core with the forget bias, log_std = log_std_init (unsquashed
// continuous actors only), normalizer at mean 0 / var 1.
TensorMap init_policy(const PolicySpec& spec, Rng& rng);

// Whether spec's actor has the state-independent "actor.log_std" (continuous, unsquashed).
inline bool has_log_std(const PolicySpec& spec) {
  return spec.action_kind == ActionKind::kContinuous && spec.squash == Squash::kNone;
}

// The continuous actor's "actor.log_std" (action_dim); recur::Error when missing or misshapen.
// A squashed actor has none: an empty vector (its log-std is a head output).
std::vector<float> read_log_std(const PolicySpec& spec, const TensorMap& tensors);

// Loads the network's parameters (not the normalizer) into the parts of an actor or a learner,
// which name them identically. Tower c = 0 is the actor's, c = 1 the critic's (separate cores
// only); encoders[c] may be null (no encoder). Core is a StepExecutor or a SequenceExecutor.
template <typename Core>
void load_network(const PolicySpec& spec, const TensorMap& tensors, Mlp* const encoders[2],
                  Core* const cores[2], Mlp& actor_head, Mlp& critic_head,
                  AlignedVector<float>& log_std) {
  for (int c = 0; c < (spec.shared_core ? 1 : 2); ++c) {
    const std::string p = c == 0 ? "" : "critic_";
    if (encoders[c]) encoders[c]->load_tensors(tensors, p + "encoder.");
    cores[c]->load(CanonicalWeights::from_tensors(spec.core_spec(), tensors, p + "core."));
  }
  actor_head.load_tensors(tensors, "actor.");
  critic_head.load_tensors(tensors, "critic.");
  if (has_log_std(spec)) {
    const auto ls = read_log_std(spec, tensors);
    log_std.assign(ls.begin(), ls.end());
  }
}

}  // namespace recur::policy
