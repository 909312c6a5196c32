#include "agent/offpolicy/trainer.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "agent/env_output_checks.h"
#include "agent/run/env_snapshot_json.h"
#include "agent/run/json_read.h"
#include "core/error.h"
#include "envs/vector_env.h"
#include "policy/squashed_action.h"

namespace recur::agent::offpolicy {

namespace {
using nlohmann::json;
using Clock = std::chrono::steady_clock;
// The format tag of save_state()'s text, which restore_state() and load_trained() check.
constexpr const char* kStateFormat = "recur.offpolicy_state/1";

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Method method_of(const TrainConfig& c, const policy::PolicySpec& spec, const envs::Space& action) {
  const bool discrete = spec.action_kind == policy::ActionKind::kDiscrete;
  if (c.algo.type == "td3") {
    RECUR_CHECK(!discrete,
                "algo.type = td3 needs a Box action space, but {} acts in {}: TD3's actor is "
                "deterministic and its critic takes the action as input. Use algo.type: sac (its "
                "Discrete form takes exact expectations over the actions).",
                c.env.id, action.to_string());
    return Method::kTd3;
  }
  return discrete ? Method::kSacDiscrete : Method::kSac;
}

LearnerConfig learner_config(const TrainConfig& c, Method method, const policy::PolicySpec& s) {
  const OffPolicyConfig& o = c.offpolicy;
  LearnerConfig l;
  l.method = method;
  l.gamma = c.algo.gamma;
  l.tau = o.tau;
  l.actor_lr = o.actor_lr;
  l.critic_lr = o.critic_lr;
  l.alpha_lr = o.alpha_lr;
  l.init_alpha = o.init_alpha;
  l.auto_alpha = o.auto_alpha;
  l.target_entropy = o.target_entropy ? *o.target_entropy
                     : method == Method::kSacDiscrete
                         ? 0.7f * std::log(static_cast<float>(s.action_dim))
                         : -static_cast<float>(s.action_dim);
  l.policy_delay = o.policy_delay;
  l.target_noise = o.target_noise;
  l.target_noise_clip = o.target_noise_clip;
  l.max_grad_norm = o.max_grad_norm;
  l.adam_eps = c.algo.adam_eps;
  return l;
}

}  // namespace

OffPolicyTrainer::OffPolicyTrainer(const TrainConfig& config, std::unique_ptr<envs::BatchEnv> env)
    : config_(config),
      venv_(std::move(env)),
      act_rng_(config.run.seed),
      sample_rng_(derive_seed(config.run.seed, 0x5e9)),
      learn_rng_(derive_seed(config.run.seed, 0x1ea)) {
  const auto report = policy::query_devices();
  const policy::Placement actor_place = resolve_placement(
      "device.actor", config.device.actor, config.device, report, config.policy.core);
  const policy::Placement learner_place = resolve_placement(
      "device.learner", config.device.learner, config.device, report, config.policy.core);
  actor_device_ = actor_place.device;
  learner_device_ = learner_place.device;
  venv_ = make_batch_env(config, std::move(venv_));
  const envs::Space& action = venv_->single_action_space();
  PolicyConfig pc = config.policy;
  pc.shared_core = true;  // the acting policy is the actor alone; the critics live in the learner
  spec_ = make_policy_spec(pc, venv_->single_observation_space(), action);
  spec_.obs_clip = config.env.clip_obs;
  const Method method = method_of(config, spec_, action);
  if (method != Method::kSacDiscrete) {
    for (size_t j = 0; j < action.low().size(); ++j)
      RECUR_CHECK(std::isfinite(action.low()[j]) && std::isfinite(action.high()[j]),
                  "algo.type = {} squashes actions into the action space's bounds, but {}'s "
                  "action space {} is unbounded in dimension {}: use an env with a bounded Box",
                  config.algo.type, config.env.id, action.to_string(), j);
    spec_.squash = method == Method::kTd3 ? policy::Squash::kTanh : policy::Squash::kTanhGaussian;
    spec_.action_low = action.low();
    spec_.action_high = action.high();
    spec_.exploration_noise = config.offpolicy.exploration_noise;
    spec_.validate();
  }
  N_ = config.env.num_envs;
  d_ = method == Method::kSacDiscrete ? 1 : spec_.action_dim;
  Rng init_rng(derive_seed(config.run.seed, 0x1417));
  base_ = policy::init_policy(spec_, init_rng);
  // The acting policy's value head is not trained here: it reads 0.
  for (auto& [name, t] : base_)
    if (name.starts_with("critic.")) std::fill(t.data.begin(), t.data.end(), 0.0f);
  learner_ = std::make_unique<ReplayLearner>(spec_, learner_config(config, method, spec_),
                                             learner_place, init_rng, config.run.learner_threads);
  actor_ = std::make_unique<policy::PolicyActor>(spec_, N_, actor_place);
  actor_->load(policy_tensors());
  actor_->normalizer().set_frozen(true);
  const OffPolicyConfig& o = config.offpolicy;
  ReplaySpec rs;
  rs.num_envs = N_;
  rs.obs_dim = spec_.obs_dim;
  rs.action_dim = d_;
  rs.state_size = o.stored_state ? learner_->state_size() : 0;
  rs.capacity = o.buffer_size;
  rs.seq_len = o.seq_len;
  rs.burn_in = o.burn_in;
  rs.state_stride = std::max(1, o.seq_len / 2);  // R2D2: sequences overlap by half
  replay_ = std::make_unique<SequenceReplay>(rs);
  replay_->reserve_batch(o.batch_size, batch_);
  spdlog::info(
      "{}: replay of {} transitions in {} rings, {:.1f} MiB; sequences of {} + {} burn-in "
      "steps, {} state",
      config.algo.type, o.buffer_size, N_, static_cast<double>(rs.bytes()) / (1 << 20), o.seq_len,
      o.burn_in, o.stored_state ? "stored" : "zero");
  if (o.stored_state) {
    if (!spec_.encoder.empty())
      critic_encoder_ = std::make_unique<policy::Mlp>(spec_.encoder_spec());
    critic_core_ = policy::make_step_executor(spec_.core_spec(), N_, {});
    if (critic_encoder_) critic_encoder_->reserve(N_);
    critic_features_.assign(static_cast<size_t>(N_) * spec_.feature_dim(), 0.0f);
    critic_h_.assign(static_cast<size_t>(N_) * spec_.hidden, 0.0f);
    critic_states_.assign(static_cast<size_t>(N_) * critic_core_->spec().state_size(), 0.0f);
    states_.assign(static_cast<size_t>(N_) * rs.state_size, 0.0f);
    actor_states_.assign(static_cast<size_t>(N_) * spec_.state_size(), 0.0f);
  }
  publish();
  const auto n = static_cast<size_t>(N_);
  obs_.assign(n * spec_.obs_dim, 0.0f);
  next_obs_.assign(n * spec_.obs_dim, 0.0f);
  raw_next_.assign(n * spec_.obs_dim, 0.0f);
  actions_.assign(n * venv_->action_dim(), 0.0f);
  stored_actions_.assign(n * d_, 0.0f);
  log_probs_.assign(n, 0.0f);
  values_.assign(n, 0.0f);
  starts_.assign(n, 1);
  if (auto* vector = dynamic_cast<envs::VectorEnv*>(venv_.get()))
    vector->reset(config.run.seed, 0);
  else
    venv_->reset(config.run.seed);
  columns_ = {{"critic_loss", "train/critic_loss"},
              {"actor_loss", "train/actor_loss"},
              {"ent_coef", "train/ent_coef"},
              {"ent_coef_loss", "train/ent_coef_loss"},
              {"entropy", "train/entropy"},
              {"q_mean", "train/q_mean"},
              {"n_updates", "train/n_updates", 1, true},
              {"replay_size", "train/replay_size", 1, true}};
}

OffPolicyTrainer::~OffPolicyTrainer() = default;

policy::TensorMap OffPolicyTrainer::policy_tensors() const {
  policy::TensorMap out = base_;
  for (auto& [name, t] : learner_->actor_tensors()) out[name] = std::move(t);
  return out;
}

void OffPolicyTrainer::publish() {
  // The weights travel as tensors (one small map per vector step; the updates dominate).
  actor_->load_weights(policy_tensors());
  if (!critic_core_) return;
  const policy::TensorMap all = learner_->parameter_tensors();
  if (critic_encoder_) critic_encoder_->load_tensors(all, "critic_encoder.");
  critic_core_->load(
      policy::CanonicalWeights::from_tensors(spec_.core_spec(), all, "critic_core."));
}

// The states before this step's reset, per env: actor core, then critic core.
void OffPolicyTrainer::read_states() {
  if (!critic_core_) return;
  const auto sa = static_cast<size_t>(spec_.state_size());
  const auto sc = static_cast<size_t>(critic_core_->spec().state_size());
  actor_->get_states(actor_states_);
  critic_core_->get_states(critic_states_);
  for (size_t n = 0; n < static_cast<size_t>(N_); ++n) {
    float* row = states_.data() + n * (sa + sc);
    std::copy_n(actor_states_.data() + n * sa, sa, row);
    std::copy_n(critic_states_.data() + n * sc, sc, row + sa);
  }
}

void OffPolicyTrainer::step_envs(const std::function<void(const EpisodeEnd&)>& on_episode,
                                 Iteration& it) {
  const auto n = static_cast<size_t>(N_);
  const int O = spec_.obs_dim;
  check_env_obs(*venv_, env_steps_);
  std::copy(venv_->episode_start().begin(), venv_->episode_start().end(), starts_.begin());
  read_states();
  actor_->act(venv_->obs(), starts_, act_rng_, false, actions_, log_probs_, values_);
  std::copy(actor_->normalized_obs().begin(), actor_->normalized_obs().end(), obs_.begin());
  if (critic_core_) {  // the critic's state advances on the same observations
    std::span<const float> x = obs_;
    if (critic_encoder_) {
      critic_encoder_->forward(N_, obs_, critic_features_);
      x = critic_features_;
    }
    critic_core_->step(x, starts_, critic_h_);
  }
  // Uniform actions before learning starts (the states above still advance), unless the run
  // started from a trained actor (run.init_from): its own actions fill the replay then.
  const bool random =
      env_steps_ < config_.offpolicy.learning_starts && config_.run.init_from.empty();
  const envs::Space& space = venv_->single_action_space();
  if (random) {
    const int A = venv_->action_dim();
    for (size_t i = 0; i < n; ++i)
      space.sample(act_rng_, std::span<float>(actions_).subspan(i * A, static_cast<size_t>(A)));
  }
  // What the replay stores: Discrete indices, Box actions in normalized units.
  for (size_t i = 0; i < n; ++i)
    for (int j = 0; j < d_; ++j) {
      const size_t k = i * d_ + j;
      stored_actions_[k] =
          space.is_discrete() ? actions_[k]
                              : std::clamp(policy::from_env_action(actions_[k], spec_.action_low[j],
                                                                   spec_.action_high[j]),
                                           -1.0f, 1.0f);
    }
  venv_->step(actions_);
  env_steps_ += N_;
  check_env_step(*venv_, env_steps_);
  // The observation after the step: the final one where an episode ended.
  const auto term = venv_->terminated(), trunc = venv_->truncated();
  for (size_t i = 0; i < n; ++i) {
    const auto src = term[i] || trunc[i] ? venv_->final_obs() : venv_->obs();
    std::copy_n(src.data() + i * O, O, raw_next_.data() + i * O);
  }
  actor_->normalizer().normalize(N_, raw_next_, next_obs_);
  replay_->add(obs_, stored_actions_, venv_->rewards(), term, trunc, next_obs_, starts_,
               critic_core_ ? std::span<const float>(states_) : std::span<const float>{},
               venv_->transition());
  for (int i = 0; i < N_; ++i)
    if (venv_->episode_start()[static_cast<size_t>(i)]) {
      ++it.episodes;
      if (on_episode) on_episode({i, venv_->final_return()[i], venv_->final_length()[i]});
    }
}

void OffPolicyTrainer::train(double& learn_seconds) {
  const OffPolicyConfig& o = config_.offpolicy;
  if (env_steps_ < o.learning_starts || replay_->size() == 0) return;
  update_credit_ += N_ * static_cast<double>(o.updates_per_step);
  if (update_credit_ < 1) return;
  const auto t0 = Clock::now();
  while (update_credit_ >= 1) {
    update_credit_ -= 1;
    replay_->sample(o.batch_size, sample_rng_, batch_);
    UpdateReport r;
    try {
      r = learner_->update(batch_, learn_rng_);
      nonfinite_streak_ = 0;
    } catch (const NonFiniteUpdate& e) {
      if (config_.algo.on_nonfinite != "skip" ||
          ++nonfinite_streak_ > config_.algo.max_nonfinite_updates)
        throw;
      spdlog::warn("{} (skipped: {} in a row)", e.what(), nonfinite_streak_);
      continue;
    }
    ++n_updates_;
    sum_critic_ += r.critic_loss;
    sum_q_ += r.q_mean;
    if (r.actor_updated) {
      ++n_actor_updates_;
      sum_actor_ += r.actor_loss;
      sum_alpha_loss_ += r.alpha_loss;
      sum_entropy_ += r.entropy;
    }
  }
  publish();
  learn_seconds += seconds_since(t0);
}

Iteration OffPolicyTrainer::iterate(const std::function<void(const EpisodeEnd&)>& on_episode) {
  Iteration it;
  n_updates_ = n_actor_updates_ = 0;
  sum_critic_ = sum_actor_ = sum_alpha_loss_ = sum_q_ = sum_entropy_ = 0;
  const int64_t target = std::min<int64_t>(config_.run.total_env_steps,
                                           env_steps_ + config_.offpolicy.steps_per_iteration);
  double act = 0, learn = 0;
  do {
    const auto t0 = Clock::now();
    step_envs(on_episode, it);
    act += seconds_since(t0);
    train(learn);
  } while (env_steps_ < target);
  it.env_steps = env_steps_;
  it.act_seconds = act;
  it.learn_seconds = learn;
  it.policy_version = learner_->updates();
  const auto nu = static_cast<double>(std::max<int64_t>(1, n_updates_));
  const auto na = static_cast<double>(std::max<int64_t>(1, n_actor_updates_));
  const double nan = std::nan("");
  it.metrics = {n_updates_ ? sum_critic_ / nu : nan,
                n_actor_updates_ ? sum_actor_ / na : nan,
                learner_->alpha(),
                n_actor_updates_ ? sum_alpha_loss_ / na : nan,
                n_actor_updates_ ? sum_entropy_ / na : nan,
                n_updates_ ? sum_q_ / nu : nan,
                static_cast<double>(learner_->updates()),
                static_cast<double>(replay_->size())};
  return it;
}

AlgorithmState OffPolicyTrainer::save_state() const {
  json j;
  j["format"] = kStateFormat;
  j["algo"] = config_.algo.type;
  j["env_steps"] = env_steps_;
  j["updates"] = learner_->updates();
  j["update_credit"] = update_credit_;
  j["nonfinite_streak"] = nonfinite_streak_;
  j["rng"] = {{"act", rng_json(act_rng_.state())},
              {"sample", rng_json(sample_rng_.state())},
              {"learn", rng_json(learn_rng_.state())}};
  write_env_snapshot(*venv_, j);
  std::vector<float> states(static_cast<size_t>(N_) * spec_.state_size());
  actor_->get_states(states);
  j["actor_states"] = states;
  if (critic_core_) {
    std::vector<float> cs(critic_states_.size());
    critic_core_->get_states(cs);
    j["critic_states"] = cs;
  }
  AlgorithmState out;
  out.tensors = learner_->state_tensors();
  json replay_meta = json::object();
  if (config_.offpolicy.save_replay) {
    replay_->save(out.tensors, replay_meta, "replay.");
    spdlog::info("checkpoint: replay buffer of {} transitions ({:.1f} MiB)", replay_->size(),
                 static_cast<double>(replay_->spec().bytes()) / (1 << 20));
  }
  j["replay"] = replay_meta;
  out.json = j.dump();
  return out;
}

void OffPolicyTrainer::load_trained(const AlgorithmState& state) {
  RECUR_CHECK(env_steps_ == 0 && learner_->updates() == 0,
              "{}: a trained state loads before the first env step, not after {}",
              config_.algo.type, env_steps_);
  std::string format, algo;
  try {
    const json j = json::parse(state.json);
    format = j.at("format").get<std::string>();
    algo = j.value("algo", std::string());
  } catch (const json::exception& e) {
    throw Error(fmt::format("its algorithm state is malformed: {}", e.what()));
  }
  RECUR_CHECK(format == kStateFormat,
              "it is not an off-policy run (its algorithm state is {}); start from a run of "
              "algo.type {}",
              format, config_.algo.type);
  RECUR_CHECK(algo == config_.algo.type,
              "it is a run of algo.type {} and this run is algo.type {}: start from a {} run", algo,
              config_.algo.type, config_.algo.type);
  learner_->load_parameters(state.tensors);
  // SAC's temperature: the loaded run's learned value goes on, unless this run fixes it
  // (auto_alpha false: init_alpha is this run's setting) or asks to explore anew (reset_alpha).
  if (config_.algo.type == "sac") {
    const OffPolicyConfig& o = config_.offpolicy;
    if (!o.auto_alpha || o.reset_alpha) {
      if (std::abs(learner_->alpha() / o.init_alpha - 1) > 1e-6)  // say so only if it changes
        spdlog::info(
            "sac: the temperature starts at offpolicy.init_alpha = {:.4g}, not the loaded "
            "run's {:.4g} ({})",
            o.init_alpha, learner_->alpha(),
            o.auto_alpha ? "offpolicy.reset_alpha" : "offpolicy.auto_alpha is false");
      learner_->set_alpha(o.init_alpha);
    } else {
      spdlog::info(
          "sac: the temperature goes on from the loaded run's {:.4g} "
          "(--set offpolicy.reset_alpha=true starts it at init_alpha = {:.4g})",
          learner_->alpha(), o.init_alpha);
    }
  }
  publish();
}

void OffPolicyTrainer::restore_state(const AlgorithmState& state,
                                     const policy::TensorMap& policy_tensors) {
  (void)policy_tensors;  // the actor is the learner's: restored from the state's tensors
  json j;
  try {
    j = json::parse(state.json);
    RECUR_CHECK(j.at("format") == kStateFormat && j.at("algo") == config_.algo.type,
                "the checkpoint's algorithm state is {} of algo.type {}; this run is algo.type {}: "
                "resume with the config the run was started with",
                j.at("format").dump(), j.value("algo", std::string("?")), config_.algo.type);
    learner_->load_state(state.tensors);
    using namespace json_read;
    learner_->set_updates(integer(j.at("updates"), "updates", 0));
    env_steps_ = integer(j.at("env_steps"), "env_steps", 0);
    update_credit_ = real(j.at("update_credit"), "update_credit");
    nonfinite_streak_ = static_cast<int>(
        integer(j.at("nonfinite_streak"), "nonfinite_streak", 0, std::numeric_limits<int>::max()));
    act_rng_.set_state(rng_state(j.at("rng").at("act"), "rng.act"));
    sample_rng_.set_state(rng_state(j.at("rng").at("sample"), "rng.sample"));
    learn_rng_.set_state(rng_state(j.at("rng").at("learn"), "rng.learn"));
    if (!j.at("replay").empty()) {
      replay_->restore(state.tensors, j.at("replay"), "replay.");
    } else {
      spdlog::warn(
          "{}: the checkpoint holds no replay buffer (offpolicy.save_replay was false): "
          "the resumed run refills an empty one",
          config_.algo.type);
    }
    int restarted = N_;
    const auto snap = read_env_snapshot(j);
    if (snap && venv_->can_snapshot()) {
      RECUR_CHECK(snap->envs.size() == static_cast<size_t>(N_),
                  "the checkpoint's algorithm state holds {} envs; this run has env.num_envs = {}",
                  snap->envs.size(), N_);
      restarted = venv_->restore(*snap);
    } else {
      venv_->reset(derive_seed(config_.run.seed, static_cast<uint64_t>(env_steps_)));
    }
    publish();
    const auto states = floats(j.at("actor_states"), "actor_states");
    RECUR_CHECK(states.size() == static_cast<size_t>(N_) * spec_.state_size(),
                "the checkpoint's actor states hold {} floats; this run's policy needs {} ({} "
                "envs x {}): resume with the same env.num_envs and policy",
                states.size(), static_cast<size_t>(N_) * spec_.state_size(), N_,
                spec_.state_size());
    actor_->set_states(states);
    if (critic_core_) {
      const auto cs = floats(j.at("critic_states"), "critic_states");
      RECUR_CHECK(cs.size() == critic_states_.size(),
                  "the checkpoint's critic states hold {} floats; this run needs {}", cs.size(),
                  critic_states_.size());
      critic_core_->set_states(cs);
    }
    if (restarted > 0)
      spdlog::warn(
          "{}: {} of {} in-flight episodes cannot be rebuilt from a checkpoint; they "
          "start anew on resume",
          config_.env.id, restarted, N_);
  } catch (const json::exception& e) {
    throw Error(fmt::format("the checkpoint's algorithm state ({}) is malformed: {}",
                            config_.algo.type, e.what()));
  }
}

}  // namespace recur::agent::offpolicy
