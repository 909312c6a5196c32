// The typed configuration of a training job. Defaults live here, in code; a YAML file only
// overrides them, `--set section.key=value` overrides the file, and validate() checks every value
// once (see agent/config/yaml.h for loading, errors and the resolved-config writer, and
// docs/CONFIG.md for every key). Units and meanings are in the comments.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace recur::agent {

struct EnvConfig {
  std::string id = "CartPoleNoVel-v1";
  // Env plugins (shared libraries, envs/plugin.h) loaded before `id` is looked up. Relative paths
  // in a YAML file are relative to that file's directory, in --set to the working directory;
  // loading the config makes them absolute, which is what a run directory records.
  std::vector<std::string> plugin;
  int num_envs = 8;
  // Double-buffered env groups (agent/actor_loop.h): 2 = the policy acts on one half of the envs
  // while the other half steps on the worker threads.
  int groups = 1;
  // Before training, each env takes a uniformly random number of random actions in [0, this]
  // (rlpyt's decorrelating start; Sample Factory decorrelates too), so that envs started together
  // do not reset together: for episodes of one fixed length, shorter rollouts. Not counted as env
  // steps nor logged. 0: off.
  int decorrelate_steps = 0;
  std::map<std::string, std::string> options;  // env options (max_episode_steps, g, ...)
  bool normalize_obs = true;                   // running mean/var normalization of observations
  bool normalize_reward = false;  // scale rewards by a running return std (SB3 VecNormalize)
  float clip_obs = 10.0f;         // |normalized obs| <= clip_obs
  float clip_reward = 10.0f;      // |normalized reward| <= clip_reward
  // Where `options` came from ("configs/x.yaml:12", "--set", ...), so that the env registry, which
  // validates them, can name it; empty when they are the defaults. Not part of the config itself:
  // to_yaml leaves it out and operator== ignores it, so a round trip through a run directory
  // compares equal.
  std::string options_source;

  bool operator==(const EnvConfig& o) const {
    return id == o.id && plugin == o.plugin && num_envs == o.num_envs && groups == o.groups &&
           decorrelate_steps == o.decorrelate_steps && options == o.options &&
           normalize_obs == o.normalize_obs && normalize_reward == o.normalize_reward &&
           clip_obs == o.clip_obs && clip_reward == o.clip_reward;
  }
};

struct PolicyConfig {
  std::vector<int> encoder = {64};  // hidden widths of the encoder MLP ([] = none)
  std::string activation = "tanh";  // tanh | relu (encoder and head hidden layers)
  std::vector<int> head = {};       // hidden widths of the actor and critic heads ([] = linear)
  std::string core = "lstm";        // lstm | gru | rnn_tanh | rnn_relu
  int hidden = 64;
  int layers = 1;
  float cell_clip = 0.0f;     // LSTM only; 0 = off
  bool shared_core = false;   // false: the critic has its own encoder and core
  float log_std_init = 0.0f;  // continuous actions
  float forget_bias = 1.0f;   // LSTM initial forget-gate bias
  float actor_gain = 0.01f;   // orthogonal gain of the actor head
  float critic_gain = 1.0f;
  std::string init = "orthogonal";  // orthogonal | pytorch (encoder and heads)

  bool operator==(const PolicyConfig&) const = default;
};

struct AlgoConfig {
  std::string type = "ppo";
  int rollout_steps = 32;  // T: steps per env per update (unroll length)
  int epochs = 10;
  int num_minibatches = 4;  // minibatches of whole env sequences (num_envs % this == 0)
  // Steps per training sequence (truncated BPTT): 0 = the whole rollout; else rollout_steps is
  // cut into sequences of this many steps, each from the actor's stored state at its start
  // (agent/ppo/bptt.h), and minibatches take num_envs * rollout_steps / bptt_steps of them.
  int bptt_steps = 0;
  float learning_rate = 1e-3f;
  std::string lr_schedule = "linear";      // constant | linear (to 0 at the end of training)
  std::string clip_schedule = "constant";  // constant | linear (clip_range to 0, as SB3's lin_0.2)
  float gamma = 0.99f;
  float gae_lambda = 0.95f;
  float clip_range = 0.2f;
  float clip_range_vf = 0.0f;  // 0 = no value clipping
  float vf_coef = 0.5f;
  float ent_coef = 0.0f;
  float max_grad_norm = 0.5f;
  float target_kl = 0.0f;  // 0 = off; else stop the epochs when approx KL exceeds it
  bool normalize_advantage = true;
  float adam_eps = 1e-5f;
  // A minibatch whose loss or gradient norm is NaN or infinite: "stop" ends the run with an error
  // naming the update and the quantity (nothing non-finite reaches the weights or a checkpoint);
  // "skip" drops that minibatch's step with a warning and goes on, ending the run only after
  // max_nonfinite_updates updates in a row with such minibatches. Non-finite parameters always
  // stop the run.
  std::string on_nonfinite = "stop";
  int max_nonfinite_updates = 5;  // on_nonfinite: skip only
  // Pipelined actor-learner: the actor collects the next rollout (on its own thread, with the
  // weights of the previous update) while the learner trains on the last one. Policy lag is
  // exactly 1 update; PPO's ratio against the stored behaviour log-probs corrects it.
  bool async = false;
  // Async only: the PPO ratio is taken against the learner's policy at the start of the update
  // (one extra forward pass over the rollout) instead of the behaviour policy one update older,
  // and each sample's advantage is weighted by min(1, pi_start / pi_behaviour) (decoupled PPO,
  // Hilton et al. 2021, with IMPALA's rho-bar = 1). Measured: docs/PERFORMANCE.md.
  bool async_anchor = true;
  // With async_anchor: the advantages and returns are recomputed (GAE) from the learner's critic
  // at the start of the update too, instead of the behaviour critic's values one update older
  // (the bootstrap values of truncations and the value after the last step stay the actor's).
  // Not with algo.bptt_steps cutting the rollout (the cut pieces' GAE needs the whole rollout).
  // Measured: docs/PERFORMANCE.md, "Advantages from the learner's critic".
  bool async_anchor_values = true;

  bool operator==(const AlgoConfig&) const = default;
};

struct RunConfig {
  int64_t total_env_steps = 100000;
  uint64_t seed = 0;
  std::string output_dir = "runs";  // runs/<name>-<timestamp>/ is created under it
  std::string name = "";            // default: the config file's stem
  int64_t checkpoint_every = 0;     // env steps between periodic checkpoints (0 = only latest/best)
  int64_t eval_every = 20000;       // env steps between evaluations (0 = only at the end)
  int eval_episodes = 10;
  int final_eval_episodes = 100;
  int threads = 1;  // VectorEnv stepping threads
  // Host threads of the CPU learner: 2 runs the actor's and the critic's LSTM towers at once
  // (PPO: policy.shared_core false; SAC/TD3: also the target towers, two at a time); 1 runs them
  // one after the other. Same results either way.
  int learner_threads = 2;
  // Every K-th evaluation (and the final one) films its first episode into
  // <run>/videos/rl-video-eval-<env_steps>.mp4 (0 = no videos).
  int video_every_evals = 0;
  // TensorBoard event files in <run>/tb/: every progress.csv row as scalars under
  // Stable-Baselines3's tags, evaluations under eval/ (docs/CONFIG.md lists them).
  bool tensorboard = true;
  // The mean evaluation return that counts as solved: null = the env's registered reward threshold
  // (Gymnasium's, e.g. 200 for LunarLander-v3), where it has one. The first evaluation reaching
  // it is logged with its env steps and wall time (the time to target).
  std::optional<float> target_return;
  // Stop after the first periodic evaluation that reaches the target (the final evaluation still
  // runs), as Stable-Baselines3's StopTrainingOnRewardThreshold. Needs a target.
  bool stop_at_target = false;
  // Which time to target run.stop_at_target stops at (both are logged either way):
  //   eval        the first periodic evaluation (deterministic, run.eval_episodes) at the target;
  //   train_mean  the first update after which the mean return of the last 100 training episodes
  //               (progress.csv's return_mean, SB3's rollout/ep_rew_mean: sampled actions) is at
  //               the target: the criterion Sample Factory's and CleanRL's runs report, stricter
  //               than a 10-episode deterministic evaluation.
  std::string target_measure = "eval";
  // An evaluation of fewer episodes that reaches the target counts only once the same weights
  // score at least the target over this many fresh episodes (other reset seeds), run right after
  // it on the same thread; the time to target stays that of the evaluated weights. 0: off (a
  // 10-episode evaluation counts on its own, as Stable-Baselines3's callbacks do).
  int target_confirm_episodes = 0;
  // Periodic evaluations run on a thread of their own beside training, on a snapshot of the
  // weights (agent/run/background_eval.h); false: training waits for each. Synchronous anyway for
  // data-parallel runs and envs given from Python. The final evaluation is always synchronous.
  bool eval_async = true;
  // The Linux nice value of that thread (0-19; higher yields more readily): a step of the envs
  // waits for its slowest worker, so one more busy thread than cores can halve the stepping rate
  // (docs/PERFORMANCE.md, "The evaluation thread's priority").
  int eval_nice = 19;
  // Threads stepping each evaluation's envs (periodic, confirmation and final; at most its 8
  // envs), beside the training threads: the results are the same for any count. More shorten a
  // long evaluation (a 100-episode final one, or a confirmation that a periodic evaluation point
  // must wait for) where cores are spare.
  int eval_threads = 1;
  // A run directory of `recur train` (its best checkpoint, else its latest) or a policy
  // checkpoint to start from: its weights and observation-normalizer statistics replace the fresh
  // initialization. Everything else starts anew (the optimizer's moments, the reward normalizer,
  // the counters and the learning-rate schedule), and a resumed run keeps the value it started
  // with (its own checkpoint holds its weights). SAC/TD3: a run directory of the same algo.type,
  // whose latest state's critics load too. "" = a fresh policy. agent/run/init_from.h.
  std::string init_from = "";

  bool operator==(const RunConfig&) const = default;
};

struct DeviceConfig {
  std::string actor = "cpu";            // cpu | cuda | auto
  std::string learner = "cpu";          // cpu | cuda | auto
  int index = 0;                        // CUDA device ordinal used by both roles
  bool cuda_graph = true;               // CUDA actor: replay one captured graph per step
  std::string actor_io = "copy";        // copy | mapped (CUDA actor's host <-> device traffic)
  std::string cudnn_math = "fma";       // fma | tf32 | fp16 (cuDNN learner math for fp32 data)
  std::string cudnn_algo = "standard";  // standard | persist_small_h | auto
  std::string cudnn_data = "fp32";      // fp32 | fp16 | bf16 (cuDNN RNN data; master weights fp32)
  int tower_streams = 1;  // CUDA learner: 2 runs the critic's tower on its own stream (two towers)

  bool operator==(const DeviceConfig&) const = default;
};

// Data-parallel training across processes (agent/dist/): DD-PPO's decentralized scheme. Every
// rank collects its own rollouts and computes gradients on them; each minibatch's gradients are
// averaged across ranks in one all-reduce, so every rank takes the same Adam step and holds the
// same weights. Started as `mpirun -np N recur train CONFIG --set dist.backend=mpi`.
struct DistConfig {
  std::string backend = "none";  // none | mpi
  // Seconds a rank waits in one collective before it ends the whole job (a peer that hangs,
  // or stopped without MPI noticing). Rank 0's evaluations run while the others wait.
  float timeout_s = 600.0f;
  // DD-PPO's preemption threshold: once this fraction of the ranks has finished its rollout, the
  // others stop collecting after at least a quarter of theirs (habitat-lab's rule). 0 = off.
  float sync_frac = 0.0f;

  bool operator==(const DistConfig&) const = default;
};

// The replay-based algorithms (algo.type sac | td3): recurrent SAC (Box and Discrete actions) and
// TD3 with sequence replay (agent/offpolicy/). algo.gamma, algo.adam_eps, algo.on_nonfinite and
// algo.max_nonfinite_updates apply to them too; the other algo keys are PPO's.
struct OffPolicyConfig {
  int64_t buffer_size = 1000000;  // transitions kept (split evenly over env.num_envs rings)
  int batch_size = 32;            // sequences per gradient update
  int seq_len = 32;               // steps per sequence that carry a loss
  int burn_in = 0;                // steps replayed before them without a loss (stored_state)
  // true: each sequence starts from the recurrent states the actor and critic held there (R2D2),
  // refreshed by burn_in steps; false: from zero state (Ni et al.'s default).
  bool stored_state = false;
  // Env steps of uniform random actions before any update (with run.init_from: the loaded actor's).
  int64_t learning_starts = 1000;
  float updates_per_step = 1.0f;   // gradient updates per env step collected (update-to-data)
  int steps_per_iteration = 1000;  // env steps per progress row (rounded up to env.num_envs)
  float actor_lr = 3e-4f;
  float critic_lr = 3e-4f;
  float alpha_lr = 3e-4f;  // SAC temperature
  float tau = 0.005f;      // Polyak rate of the target networks
  float init_alpha = 1.0f;
  bool auto_alpha = true;  // SAC: tune the temperature towards target_entropy
  // SAC with run.init_from: start the temperature at init_alpha instead of the loaded run's
  // learned value (to explore anew on a harder task). With auto_alpha false it always starts
  // there: a fixed temperature is a setting of this run, not state of the loaded one.
  bool reset_alpha = false;
  // SAC's entropy target; absent = -action_dim (Box) or 0.7 * log(n) (Discrete).
  std::optional<float> target_entropy;
  int policy_delay = 2;            // TD3: critic updates per actor and target update
  float target_noise = 0.2f;       // TD3: target policy smoothing (normalized action units)
  float target_noise_clip = 0.5f;  // TD3
  float exploration_noise = 0.1f;  // TD3: Gaussian noise of the acting policy (normalized)
  float max_grad_norm = 0.0f;      // 0 = no clipping (per network)
  // Checkpoints hold the replay buffer (resume continues with it; its size is logged). false:
  // they do not, and a resumed run refills an empty buffer (no longer equal to an unbroken run).
  bool save_replay = true;

  bool operator==(const OffPolicyConfig&) const = default;
};

struct TrainConfig {
  EnvConfig env;
  PolicyConfig policy;
  AlgoConfig algo;
  OffPolicyConfig offpolicy;
  RunConfig run;
  DeviceConfig device;
  DistConfig dist;

  bool operator==(const TrainConfig&) const = default;
};

}  // namespace recur::agent
