// validate(): every range and combination of a TrainConfig, each with its own message.
#include <cmath>
#include <string_view>

#include "agent/config/yaml.h"
#include "core/error.h"
#include "core/text.h"

namespace recur::agent {
namespace {

std::string shown(const std::string& v) {
  return "'" + v + "'";
}
std::string shown(const std::vector<int>& v) {
  std::vector<std::string> items;
  for (const int x : v) items.push_back(fmt::format("{}", x));
  return fmt::format("[{}]", join(items));
}
template <class T>
std::string shown(T v) {
  return fmt::format("{}", v);
}

// Builds the messages. Without sources (a config built in code) they name keys and values only.
class Checker {
 public:
  explicit Checker(const ConfigSources* sources) : sources_(sources) {}

  // "cfg.yaml:7: " when the key was set in a file or by --set; nothing otherwise.
  std::string lead(const std::string& path) const {
    const std::string* at = find(path);
    return at ? *at + ": " : "";
  }
  // How a second key in a message came to have its value.
  std::string origin(const std::string& path) const {
    if (!sources_) return "";
    const std::string* at = find(path);
    return at ? " (" + *at + ")" : " (the default)";
  }
  std::string default_note(const std::string& path) const {
    return sources_ && !find(path) ? " (the default)" : "";
  }

  // One key out of its range: names the key, its value and the allowed range.
  template <class T>
  void require(bool ok, const std::string& path, const T& value, std::string_view allowed) const {
    if (ok) return;
    throw Error(
        fmt::format("{}{} = {}{} is out of range: it must be {}. Set it with `{}: ...` in "
                    "section {} or --set {}=VALUE.",
                    lead(path), path, shown(value), default_note(path), allowed,
                    path.substr(path.find('.') + 1), path.substr(0, path.find('.')), path));
  }

  void require_choice(const std::string& path, const std::string& value,
                      const std::vector<std::string>& allowed) const {
    for (const auto& a : allowed)
      if (a == value) return;
    std::string hint;
    if (const auto m = closest_matches(value, allowed, 1); !m.empty())
      hint = fmt::format(" Did you mean '{}'?", m.front());
    throw Error(fmt::format("{}{} = '{}'{} is not allowed: it must be one of {}.{}", lead(path),
                            path, value, default_note(path), join(allowed), hint));
  }

 private:
  const std::string* find(const std::string& path) const {
    if (!sources_) return nullptr;
    const auto it = sources_->find(path);
    return it == sources_->end() ? nullptr : &it->second;
  }
  const ConfigSources* sources_;
};

void check_env(const Checker& c, const EnvConfig& e) {
  c.require(!e.id.empty(), "env.id", e.id, "an env id (`recur envs` lists them)");
  c.require(e.num_envs >= 1, "env.num_envs", e.num_envs, ">= 1");
  c.require(e.groups == 1 || e.groups == 2, "env.groups", e.groups,
            "1 (every env steps at once) or 2 (double-buffered: one half steps while the policy "
            "acts on the other)");
  c.require(e.groups <= e.num_envs, "env.groups", e.groups,
            fmt::format("<= env.num_envs = {} (each group needs an env)", e.num_envs));
  c.require(e.decorrelate_steps >= 0 && e.decorrelate_steps <= 1000000, "env.decorrelate_steps",
            e.decorrelate_steps,
            "0 to 1000000 (0 = off; e.g. the env's episode length: random actions per env before "
            "training, so that episodes do not end together)");
  c.require(e.clip_obs > 0, "env.clip_obs", e.clip_obs, "> 0");
  c.require(e.clip_reward > 0, "env.clip_reward", e.clip_reward, "> 0");
}

void check_policy(const Checker& c, const PolicyConfig& p) {
  for (const int width : p.encoder)
    c.require(width >= 1, "policy.encoder", p.encoder, "a list of widths >= 1 ([] for none)");
  for (const int width : p.head)
    c.require(width >= 1, "policy.head", p.head, "a list of widths >= 1 ([] for linear heads)");
  c.require_choice("policy.activation", p.activation, {"tanh", "relu"});
  c.require_choice("policy.core", p.core,
                   {"lstm", "gru", "rnn_tanh", "rnn_relu", "mingru", "mingru_highway", "lstm_ln"});
  c.require(p.hidden >= 1, "policy.hidden", p.hidden, ">= 1");
  c.require(p.layers >= 1 && p.layers <= 16, "policy.layers", p.layers, "in [1, 16]");
  c.require(p.cell_clip >= 0, "policy.cell_clip", p.cell_clip, ">= 0 (0 = off)");
  RECUR_CHECK(p.cell_clip == 0 || p.core == "lstm",
              "{}policy.cell_clip = {}{} clips LSTM cell states, but policy.core = '{}'{} has no "
              "cell state. Set policy.cell_clip to 0 or policy.core to lstm.",
              c.lead("policy.cell_clip"), p.cell_clip, c.default_note("policy.cell_clip"), p.core,
              c.origin("policy.core"));
  c.require(std::isfinite(p.log_std_init), "policy.log_std_init", p.log_std_init, "finite");
  c.require(std::isfinite(p.forget_bias), "policy.forget_bias", p.forget_bias, "finite");
  c.require(p.actor_gain >= 0 && std::isfinite(p.actor_gain), "policy.actor_gain", p.actor_gain,
            ">= 0");
  c.require(p.critic_gain >= 0 && std::isfinite(p.critic_gain), "policy.critic_gain", p.critic_gain,
            ">= 0");
  c.require_choice("policy.init", p.init, {"orthogonal", "pytorch"});
}

void check_algo(const Checker& c, const AlgoConfig& a, const EnvConfig& e) {
  c.require_choice("algo.type", a.type, {"ppo", "sac", "td3"});
  if (a.type != "ppo") return;  // the replay-based algorithms: check_offpolicy
  c.require(a.rollout_steps >= 1, "algo.rollout_steps", a.rollout_steps, ">= 1");
  c.require(a.epochs >= 1, "algo.epochs", a.epochs, ">= 1");
  c.require(a.num_minibatches >= 1, "algo.num_minibatches", a.num_minibatches, ">= 1");
  c.require(
      a.bptt_steps == 0 || (a.bptt_steps >= 1 && a.rollout_steps % a.bptt_steps == 0),
      "algo.bptt_steps", a.bptt_steps,
      fmt::format("0 (whole rollouts) or a divisor of algo.rollout_steps = {}", a.rollout_steps));
  const int pieces = a.bptt_steps > 0 ? a.rollout_steps / a.bptt_steps : 1;
  const int sequences = e.num_envs * pieces;
  if (sequences % a.num_minibatches != 0) {
    std::vector<std::string> divisors;
    for (int d = 1; d <= sequences && divisors.size() < 8; ++d)
      if (sequences % d == 0) divisors.push_back(std::to_string(d));
    if (pieces == 1)
      throw Error(fmt::format(
          "{}env.num_envs = {}{} is not a multiple of algo.num_minibatches = {}{}: each "
          "minibatch takes whole env sequences, num_envs / num_minibatches of them. Set "
          "algo.num_minibatches to one of {} or env.num_envs to a multiple of {}.",
          c.lead("env.num_envs"), e.num_envs, c.default_note("env.num_envs"), a.num_minibatches,
          c.origin("algo.num_minibatches"), join(divisors), a.num_minibatches));
    throw Error(fmt::format(
        "{}algo.num_minibatches = {}{} does not divide the {} training sequences of an update "
        "(env.num_envs = {} x algo.rollout_steps / algo.bptt_steps = {} / {}): each minibatch "
        "takes whole sequences. Set algo.num_minibatches to one of {}, or change env.num_envs "
        "or algo.bptt_steps.",
        c.lead("algo.num_minibatches"), a.num_minibatches, c.origin("algo.num_minibatches"),
        sequences, e.num_envs, a.rollout_steps, a.bptt_steps, join(divisors)));
  }
  c.require(a.learning_rate > 0 && std::isfinite(a.learning_rate), "algo.learning_rate",
            a.learning_rate, "> 0");
  c.require_choice("algo.lr_schedule", a.lr_schedule, {"constant", "linear"});
  c.require_choice("algo.clip_schedule", a.clip_schedule, {"constant", "linear"});
  c.require(a.gamma > 0 && a.gamma <= 1, "algo.gamma", a.gamma, "in (0, 1]");
  c.require(a.gae_lambda >= 0 && a.gae_lambda <= 1, "algo.gae_lambda", a.gae_lambda, "in [0, 1]");
  c.require(a.clip_range > 0 && std::isfinite(a.clip_range), "algo.clip_range", a.clip_range,
            "> 0");
  c.require(a.clip_range_vf >= 0 && std::isfinite(a.clip_range_vf), "algo.clip_range_vf",
            a.clip_range_vf, ">= 0 (0 = no value clipping)");
  c.require(a.vf_coef >= 0 && std::isfinite(a.vf_coef), "algo.vf_coef", a.vf_coef, ">= 0");
  c.require(a.ent_coef >= 0 && std::isfinite(a.ent_coef), "algo.ent_coef", a.ent_coef, ">= 0");
  c.require(a.max_grad_norm > 0 && std::isfinite(a.max_grad_norm), "algo.max_grad_norm",
            a.max_grad_norm, "> 0");
  c.require(a.target_kl >= 0 && std::isfinite(a.target_kl), "algo.target_kl", a.target_kl,
            ">= 0 (0 = off)");
  c.require(a.adam_eps > 0 && std::isfinite(a.adam_eps), "algo.adam_eps", a.adam_eps, "> 0");
  c.require_choice("algo.on_nonfinite", a.on_nonfinite, {"stop", "skip"});
  c.require(a.max_nonfinite_updates >= 1, "algo.max_nonfinite_updates", a.max_nonfinite_updates,
            ">= 1");
}

// A requirement of the replay-based algorithms on a key outside section offpolicy.
void require_for_offpolicy(const Checker& c, bool ok, const std::string& path,
                           const std::string& value, const AlgoConfig& a, std::string_view why) {
  if (ok) return;
  throw Error(fmt::format("{}{} = {}{} is not supported with algo.type = {}{}: {}.", c.lead(path),
                          path, value, c.default_note(path), a.type, c.origin("algo.type"), why));
}

void check_offpolicy(const Checker& c, const TrainConfig& t) {
  const OffPolicyConfig& o = t.offpolicy;
  const AlgoConfig& a = t.algo;
  c.require(o.batch_size >= 1, "offpolicy.batch_size", o.batch_size, ">= 1");
  c.require(o.seq_len >= 1, "offpolicy.seq_len", o.seq_len, ">= 1");
  c.require(o.burn_in >= 0 && o.burn_in < o.seq_len, "offpolicy.burn_in", o.burn_in,
            fmt::format(">= 0 and less than offpolicy.seq_len = {} (the steps that carry the loss; "
                        "R2D2 burns in 40 of 80)",
                        o.seq_len));
  const int64_t window = int64_t{o.burn_in} + o.seq_len;
  const int64_t one_batch = window * o.batch_size;
  c.require(o.buffer_size >= one_batch && o.buffer_size / t.env.num_envs >= window,
            "offpolicy.buffer_size", o.buffer_size,
            fmt::format("at least one batch, offpolicy.batch_size * (burn_in + seq_len) = {}, and "
                        "(burn_in + seq_len) = {} per env ring ({} envs: >= {})",
                        one_batch, window, t.env.num_envs, window * t.env.num_envs));
  c.require(o.learning_starts >= 0, "offpolicy.learning_starts", o.learning_starts, ">= 0");
  c.require(o.updates_per_step > 0 && o.updates_per_step <= 64 && std::isfinite(o.updates_per_step),
            "offpolicy.updates_per_step", o.updates_per_step, "in (0, 64]");
  c.require(o.steps_per_iteration >= 1, "offpolicy.steps_per_iteration", o.steps_per_iteration,
            ">= 1");
  for (const auto& [key, v] : {std::pair{"offpolicy.actor_lr", o.actor_lr},
                               {"offpolicy.critic_lr", o.critic_lr},
                               {"offpolicy.alpha_lr", o.alpha_lr},
                               {"offpolicy.init_alpha", o.init_alpha}})
    c.require(v > 0 && std::isfinite(v), key, v, "> 0");
  c.require(o.tau > 0 && o.tau <= 1, "offpolicy.tau", o.tau, "in (0, 1]");
  c.require(!o.target_entropy || std::isfinite(*o.target_entropy), "offpolicy.target_entropy",
            o.target_entropy ? *o.target_entropy : 0.0f, "finite (or absent: automatic)");
  c.require(o.policy_delay >= 1, "offpolicy.policy_delay", o.policy_delay, ">= 1");
  c.require(o.target_noise >= 0 && std::isfinite(o.target_noise), "offpolicy.target_noise",
            o.target_noise, ">= 0");
  c.require(o.target_noise_clip >= 0 && std::isfinite(o.target_noise_clip),
            "offpolicy.target_noise_clip", o.target_noise_clip, ">= 0");
  c.require(o.exploration_noise >= 0 && std::isfinite(o.exploration_noise),
            "offpolicy.exploration_noise", o.exploration_noise, ">= 0");
  c.require(o.max_grad_norm >= 0 && std::isfinite(o.max_grad_norm), "offpolicy.max_grad_norm",
            o.max_grad_norm, ">= 0 (0 = off)");
  require_for_offpolicy(c, !t.env.normalize_obs, "env.normalize_obs", "true", a,
                        "replayed observations are stored raw and the networks see them as "
                        "stored; set env.normalize_obs: false");
  require_for_offpolicy(c, !t.env.normalize_reward, "env.normalize_reward", "true", a,
                        "replayed rewards are stored raw; set env.normalize_reward: false");
  require_for_offpolicy(c, !t.policy.shared_core, "policy.shared_core", "true", a,
                        "the actor and the critics always have their own encoders and cores "
                        "(Ni et al.: sharing hurts); set policy.shared_core: false");
  require_for_offpolicy(c, !a.async, "algo.async", "true", a,
                        "the replay learner runs synchronously; set algo.async: false");
  require_for_offpolicy(c, t.dist.backend == "none", "dist.backend", "'" + t.dist.backend + "'", a,
                        "the replay learner runs in one process; set dist.backend: none");
}

void check_run(const Checker& c, const RunConfig& r, const EnvConfig& e, const AlgoConfig& a) {
  if (a.type != "ppo")
    c.require(r.total_env_steps >= e.num_envs, "run.total_env_steps", r.total_env_steps,
              fmt::format(">= env.num_envs = {} (one step of every env)", e.num_envs));
  const int64_t per_update = int64_t{e.num_envs} * (a.type == "ppo" ? a.rollout_steps : 1);
  RECUR_CHECK(r.total_env_steps >= per_update,
              "{}run.total_env_steps = {}{} is less than one update: env.num_envs * "
              "algo.rollout_steps = {} * {} = {} env steps. Set run.total_env_steps to at least "
              "{}, or lower env.num_envs or algo.rollout_steps.",
              c.lead("run.total_env_steps"), r.total_env_steps,
              c.default_note("run.total_env_steps"), e.num_envs, a.rollout_steps, per_update,
              per_update);
  c.require(!r.output_dir.empty(), "run.output_dir", r.output_dir, "a directory path");
  c.require(r.checkpoint_every >= 0, "run.checkpoint_every", r.checkpoint_every,
            ">= 0 (0 = only latest and best)");
  c.require(r.eval_every >= 0, "run.eval_every", r.eval_every, ">= 0 (0 = only at the end)");
  c.require(r.eval_episodes >= 1, "run.eval_episodes", r.eval_episodes, ">= 1");
  c.require(r.final_eval_episodes >= 1, "run.final_eval_episodes", r.final_eval_episodes, ">= 1");
  c.require(r.eval_nice >= 0 && r.eval_nice <= 19, "run.eval_nice", r.eval_nice,
            "0 to 19 (Linux nice values; 0 = the training threads' priority)");
  c.require(r.eval_threads >= 1 && r.eval_threads <= 256, "run.eval_threads", r.eval_threads,
            "1 to 256 (an evaluation steps at most 8 envs, so more than 8 add nothing)");
  c.require(r.threads >= 1, "run.threads", r.threads, ">= 1");
  c.require(r.learner_threads >= 1 && r.learner_threads <= 2, "run.learner_threads",
            r.learner_threads, "1 or 2 (one thread per LSTM tower)");
  c.require(r.video_every_evals >= 0, "run.video_every_evals", r.video_every_evals,
            ">= 0 (0 = no videos)");
  c.require_choice("run.target_measure", r.target_measure, {"eval", "train_mean"});
  c.require(r.target_confirm_episodes >= 0 && r.target_confirm_episodes <= 100000,
            "run.target_confirm_episodes", r.target_confirm_episodes,
            "0 to 100000 (0 = off; e.g. 100: an evaluation at the target counts once its weights "
            "also reach it over 100 fresh episodes)");
  RECUR_CHECK(!r.stop_at_target || r.eval_every > 0 || r.target_measure == "train_mean",
              "{}run.stop_at_target = true{} stops at a periodic evaluation, but run.eval_every = "
              "0{} evaluates only at the end. Set run.eval_every to the env steps between "
              "evaluations (e.g. 20000), run.target_measure to train_mean (stop on the mean of "
              "the last 100 training episodes), or run.stop_at_target to false.",
              c.lead("run.stop_at_target"), c.default_note("run.stop_at_target"),
              c.origin("run.eval_every"));
}

void check(const Checker& c, const TrainConfig& config) {
  check_env(c, config.env);
  check_policy(c, config.policy);
  check_algo(c, config.algo, config.env);
  if (config.algo.type != "ppo") check_offpolicy(c, config);
  check_run(c, config.run, config.env, config.algo);
  c.require_choice("device.actor", config.device.actor, {"cpu", "cuda", "auto"});
  c.require_choice("device.learner", config.device.learner, {"cpu", "cuda", "auto"});
  c.require(config.device.index >= 0, "device.index", config.device.index,
            ">= 0 (a CUDA device ordinal)");
  c.require_choice("device.actor_io", config.device.actor_io, {"copy", "mapped"});
  c.require_choice("device.cudnn_math", config.device.cudnn_math, {"fma", "tf32", "fp16"});
  c.require_choice("device.cudnn_algo", config.device.cudnn_algo,
                   {"standard", "persist_small_h", "auto"});
  c.require_choice("device.cudnn_data", config.device.cudnn_data, {"fp32", "fp16", "bf16"});
  if (config.device.cudnn_data != "fp32") {
    // 16-bit data runs tensor-core float math of its own: a math mode for fp32 data beside it
    // would be silently ignored.
    c.require(config.device.cudnn_math == "fma", "device.cudnn_math", config.device.cudnn_math,
              "fma (the default) when device.cudnn_data is fp16 or bf16: cudnn_math chooses the "
              "math for fp32 data only, 16-bit data always runs on tensor cores");
    const std::string& core = config.policy.core;
    c.require(core == "lstm" || core == "gru" || core == "rnn_tanh" || core == "rnn_relu",
              "device.cudnn_data", config.device.cudnn_data,
              "fp32 with policy.core " + core +
                  " (16-bit data is cuDNN's: policy.core lstm, gru, rnn_tanh or rnn_relu)");
    // fp16's loss scale comes down on an overflow in PPO's updater (agent/ppo/loss_scale.h);
    // the replay learner has no such scale, and bf16 needs none.
    c.require(config.device.cudnn_data != "fp16" || config.algo.type == "ppo", "device.cudnn_data",
              config.device.cudnn_data,
              "bf16 or fp32 with algo.type " + config.algo.type +
                  " (fp16 gradients need the dynamic loss scale of PPO's updater)");
  }
  c.require(config.device.tower_streams == 1 || config.device.tower_streams == 2,
            "device.tower_streams", config.device.tower_streams,
            "1 or 2 (2: the CUDA learner runs the critic's tower on a second stream)");
  c.require_choice("dist.backend", config.dist.backend, {"none", "mpi"});
  c.require(config.dist.timeout_s > 0 && std::isfinite(config.dist.timeout_s), "dist.timeout_s",
            config.dist.timeout_s, "> 0 (seconds one collective may wait)");
  c.require(config.dist.sync_frac >= 0 && config.dist.sync_frac <= 1, "dist.sync_frac",
            config.dist.sync_frac, "in [0, 1] (0 = no preemption; DD-PPO uses 0.6)");
  RECUR_CHECK(config.dist.sync_frac == 0 || config.algo.bptt_steps == 0,
              "{}dist.sync_frac = {} (DD-PPO's preemption, which ends rollouts at any step) "
              "cannot be combined with algo.bptt_steps = {} (sequences of a fixed length): set "
              "one of them to 0",
              c.lead("dist.sync_frac"), config.dist.sync_frac, config.algo.bptt_steps);
  c.require(
      config.env.groups == 1 || config.algo.type == "ppo", "env.groups", config.env.groups,
      fmt::format("1 with algo.type: {} (env groups are PPO's actor loop)", config.algo.type));
  c.require(config.env.decorrelate_steps == 0 || config.algo.type == "ppo", "env.decorrelate_steps",
            config.env.decorrelate_steps,
            fmt::format("0 with algo.type: {} (its random warm-up, offpolicy.learning_starts, "
                        "already spreads the episodes)",
                        config.algo.type));
  RECUR_CHECK(config.dist.sync_frac == 0 || config.env.groups == 1,
              "{}dist.sync_frac = {} (DD-PPO's preemption, which ends rollouts at any step) "
              "cannot be combined with env.groups = {} (one group is always a step ahead): set "
              "one of them back (dist.sync_frac: 0 or env.groups: 1)",
              c.lead("dist.sync_frac"), config.dist.sync_frac, config.env.groups);
  RECUR_CHECK(config.dist.sync_frac == 0 || !config.algo.async,
              "{}dist.sync_frac = {} (DD-PPO's preemption) needs algo.async: false: the actor "
              "thread of the async pipeline cannot count the other ranks; set one of them off",
              c.lead("dist.sync_frac"), config.dist.sync_frac);
}

}  // namespace

void validate(const TrainConfig& config, const ConfigSources& sources) {
  check(Checker(&sources), config);
}

void validate(const TrainConfig& config) {
  check(Checker(nullptr), config);
}

}  // namespace recur::agent
