#include "agent/train_job.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <deque>
#include <fstream>
#include <optional>
#include <sstream>

#include "agent/dist/communicator.h"
#include "agent/dist/rank_checks.h"
#include "agent/env_plugins.h"
#include "agent/run/csv_log.h"
#include "agent/run/monitor_log.h"
#include "agent/run/progress_line.h"
#include "agent/run/run_dir.h"
#include "agent/run/tensorboard.h"
#include "agent/ppo/trainer.h"
#include "agent/ppo/trainer_state.h"
#include "core/error.h"
#include "core/version.h"
#include "envs/registry.h"
#include "policy/policy_checkpoint.h"

namespace recur::agent {
namespace {

const std::vector<std::string> kProgressColumns = {
    "env_steps",  "time_s",          "fps",           "episodes",           "return_mean",
    "return_min", "return_max",      "length_mean",   "policy_loss",        "value_loss",
    "entropy",    "approx_kl",       "clip_fraction", "explained_variance", "learning_rate",
    "grad_norm",  "skipped_updates", "act_time_s",    "learn_time_s",       "wait_time_s",
    "policy_lag"};
const std::vector<std::string> kEvalColumns = {"env_steps", "return_mean", "return_std",
                                               "length_mean", "episodes"};
constexpr size_t kReturnWindow = 100;  // episodes in the progress statistics (as SB3)

std::string join_options(const std::map<std::string, std::string>& options) {
  std::string s;
  for (const auto& [k, v] : options) s += (s.empty() ? "" : ";") + k + "=" + v;
  return s;
}

// TrainJobOptions::record_video, as Trainer::record_video: a failure is a warning.
void record_video_with(const decltype(TrainJobOptions::record_video)& record,
                       const Trainer& trainer, const std::filesystem::path& path,
                       uint64_t eval_seed) {
  try {
    std::filesystem::create_directories(path.parent_path());
    const double r = record(path.string(), trainer.spec(), trainer.policy_tensors(), eval_seed);
    spdlog::info("video {} (return {:.2f})", path.string(), r);
  } catch (const std::exception& e) {
    spdlog::warn("no video at {} env steps: {}", trainer.env_steps(), e.what());
  }
}

}  // namespace

TrainJobResult run_train_job(const TrainConfig& config, const std::string& config_yaml,
                             const TrainJobOptions& options) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  const bool resuming = !options.resume_dir.empty();
  // Plugins before anything looks the env up. A resumed run loads the files it trained with,
  // unchanged (the latest checkpoint records their hashes).
  if (resuming) {
    const auto latest = RunDir::open(options.resume_dir).latest_checkpoint();
    if (std::filesystem::exists(latest)) {
      const auto meta = policy::load_policy(latest).metadata;
      if (const auto it = meta.find(kMetaEnvPlugins); it != meta.end()) {
        load_recorded_plugins(it->second, options.resume_dir.string(), &config.env.plugin);
      }
    }
  }
  load_env_plugins(config.env.plugin);
  // The trainer first: a config it cannot honour (an env option, device.*=cuda without a GPU)
  // fails before a run directory is created.
  dist::Communicator* comm =
      options.comm != nullptr && options.comm->size() > 1 ? options.comm : nullptr;
  const bool lead = comm == nullptr || comm->rank() == 0;  // writes the run directory
  RECUR_CHECK(comm == nullptr || !options.make_env,
              "dist.backend = {}: data-parallel runs step recur's own envs (registry or plugin); "
              "envs from Python train on one process (dist.backend: none)",
              config.dist.backend);
  Trainer trainer(config, options.make_env ? options.make_env(config.env.num_envs, true) : nullptr,
                  comm);
  // The target (time to target, run.stop_at_target), also checked before the run directory.
  TrainJobResult result;
  if (config.run.target_return)
    result.target = *config.run.target_return;
  else if (options.make_env)
    result.target = options.reward_threshold;
  else
    result.target = envs::registry().at(config.env.id).reward_threshold;
  RECUR_CHECK(result.target || !config.run.stop_at_target,
              "run.stop_at_target = true, but {} has no registered reward threshold and "
              "run.target_return is null: set run.target_return to the mean evaluation return "
              "that counts as solved, or run.stop_at_target to false",
              config.env.id);
  // Rank 0 creates the run directory; on a resume every rank reads its own trainer state there.
  std::optional<RunDir> run_dir;
  if (resuming)
    run_dir = RunDir::open(options.resume_dir);
  else if (lead)
    run_dir = RunDir::create(config.run.output_dir, options.name);
  if (!resuming && lead) run_dir->write_config(config_yaml);
  if (lead)
    spdlog::info("{} run directory {}", resuming ? "resuming" : "new", run_dir->path().string());

  // Job counters: saved with the trainer state, so a resumed run continues them.
  std::deque<double> returns;
  std::deque<int> lengths;
  int64_t episodes = 0, progress_rows = 0, eval_rows = 0;
  int64_t next_eval = config.run.eval_every > 0 ? config.run.eval_every : -1;
  int64_t next_ckpt = config.run.checkpoint_every > 0 ? config.run.checkpoint_every : -1;
  std::optional<double> best;
  double elapsed_before = 0;
  int64_t saved_steps = -1;    // env steps of the latest checkpoint on disk (-1: none yet)
  nlohmann::json saved_state;  // the trainer state of the latest checkpoint on disk (save_latest)
  if (resuming) {
    RECUR_CHECK(std::filesystem::exists(run_dir->trainer_state()),
                "{} has no trainer state ({}): it never wrote a checkpoint with resume state; "
                "start a new run",
                run_dir->path().string(), run_dir->trainer_state().filename().string());
    std::ifstream in(run_dir->trainer_state(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string where = run_dir->trainer_state().string();
    ResumeState state = parse_resume_state(text.str(), where);
    RECUR_CHECK(std::filesystem::exists(run_dir->latest_checkpoint()),
                "{} has no latest checkpoint ({}): the run was stopped while writing its first "
                "one; start a new run",
                run_dir->path().string(), run_dir->latest_checkpoint().string());
    const auto ckpt = policy::load_policy(run_dir->latest_checkpoint());
    // The trainer state is written before the checkpoint and holds the previous generation too
    // (save_latest below): a run killed between the two writes resumes from the previous one.
    const std::string ckpt_steps = ckpt.metadata.at(kMetaEnvSteps);
    nlohmann::json generation = nlohmann::json::parse(text.str());  // parsed once above
    if (std::to_string(state.job.env_steps) != ckpt_steps && generation.contains("previous")) {
      nlohmann::json previous = generation["previous"];
      ResumeState older = parse_resume_state(previous.dump(), where + " (previous generation)");
      if (std::to_string(older.job.env_steps) == ckpt_steps) {
        spdlog::warn(
            "the run stopped while saving its checkpoint at {} env steps; resuming from the one "
            "before, at {}",
            state.job.env_steps, ckpt_steps);
        state = std::move(older);
        generation = std::move(previous);
      }
    }
    generation.erase("previous");
    saved_state = std::move(generation);
    const JobState& job = state.job;
    RECUR_CHECK(ckpt_steps == std::to_string(job.env_steps),
                "{}: the latest checkpoint ({} steps) and the trainer state ({} steps) differ; "
                "the run stopped while saving: start a new run",
                run_dir->path().string(), ckpt_steps, job.env_steps);
    // A data-parallel run saved every rank's state: rank 0's as "trainer", the others' in order
    // under "ranks".
    const int rank = comm ? comm->rank() : 0, world = comm ? comm->size() : 1;
    const size_t saved_ranks = state.trainer_states.size();
    RECUR_CHECK(saved_ranks == static_cast<size_t>(world),
                "{} was trained by {} rank(s) and this job has {}: resume it with the same "
                "number of ranks ({})",
                run_dir->path().string(), saved_ranks, world,
                saved_ranks == 1 ? "dist.backend: none, or mpirun -np 1"
                                 : fmt::format("mpirun -np {}", saved_ranks));
    trainer.restore_state(state.trainer_states.at(static_cast<size_t>(rank)), ckpt.tensors);
    returns = job.returns;
    lengths = job.lengths;
    episodes = job.episodes;
    progress_rows = job.progress_rows;
    eval_rows = job.eval_rows;
    next_eval = job.next_eval;
    next_ckpt = job.next_ckpt;
    best = job.best;
    elapsed_before = job.elapsed;
    saved_steps = job.env_steps;
    spdlog::info("resumed at {} env steps", trainer.env_steps());
  }
  // Before any rank trains: the same build, config, env and weights everywhere.
  if (comm) {
    dist::RankSummary summary;
    summary.version = fmt::format("{} ({})", RECUR_VERSION_STRING, comm->backend());
    summary.config = config_yaml;
    summary.env = fmt::format("{} {} -> {}", config.env.id, trainer.spec().obs_dim,
                              trainer.spec().action_dim);
    summary.weights = dist::fingerprint(trainer.policy_tensors());
    summary.env_steps = trainer.env_steps();
    dist::check_ranks_agree(*comm, summary, "at start-up");
    if (lead)
      spdlog::info("data-parallel: {} ranks over {}, {} envs each ({} in all)", comm->size(),
                   comm->backend(), config.env.num_envs, config.env.num_envs * comm->size());
  }
  std::optional<CsvLog> progress, eval_log;
  std::optional<MonitorLog> monitor;
  std::optional<TensorBoardWriter> tb;
  if (lead) {
    progress =
        resuming ? CsvLog::open_for_resume(run_dir->progress_csv(), kProgressColumns, progress_rows)
                 : CsvLog::create(run_dir->progress_csv(), kProgressColumns);
    eval_log = resuming ? CsvLog::open_for_resume(run_dir->eval_csv(), kEvalColumns, eval_rows)
                        : CsvLog::create(run_dir->eval_csv(), kEvalColumns);
    monitor = resuming ? MonitorLog::open_for_resume(run_dir->monitor_csv(), episodes)
                       : MonitorLog::create(run_dir->monitor_csv(), config.env.id);
    // A resume opens a new event file beside the old ones (TensorBoard merges them), after
    // dropping from the old ones what was logged after the checkpoint, as from the CSV logs.
    if (resuming && std::filesystem::is_directory(run_dir->path() / "tb"))
      trim_tensorboard_logs(run_dir->path() / "tb", trainer.env_steps());
    if (config.run.tensorboard) tb.emplace(run_dir->path() / "tb");
  }

  std::map<std::string, std::string> meta = {{kMetaEnvId, config.env.id},
                                             {kMetaEnvOptions, join_options(config.env.options)},
                                             {kMetaEnvPlugins, plugin_record(config.env.plugin)}};
  if (!options.env_source.empty()) meta[kMetaEnvSource] = options.env_source;
  auto save = [&](const std::filesystem::path& path) {
    auto m = meta;
    m[kMetaEnvSteps] = std::to_string(trainer.env_steps());
    policy::save_policy(path, trainer.spec(), trainer.policy_tensors(), m);
  };
  auto elapsed_now = [&] {
    return elapsed_before + std::chrono::duration<double>(Clock::now() - start).count();
  };
  // The latest checkpoint and, beside it, everything a resume needs. The trainer state goes first
  // and carries the previous generation as "previous": a process killed (or a disk full) between
  // the two writes leaves the previous checkpoint with a trainer state that still holds its
  // generation, and a resume picks the one that names the checkpoint's env step. A data-parallel
  // run gathers every rank's trainer state to rank 0 (every rank calls this at the same points)
  // and checks on the way that the ranks still hold the same weights.
  auto save_latest = [&] {
    const std::string mine = trainer.save_state();
    std::vector<std::string> rank_states;
    if (comm) {
      dist::RankSummary summary;
      summary.version = RECUR_VERSION_STRING;
      summary.weights = dist::fingerprint(trainer.policy_tensors());
      summary.env_steps = trainer.env_steps();
      dist::check_ranks_agree(*comm, summary, fmt::format("at env step {}", trainer.env_steps()));
      rank_states = comm->all_gather(mine, "the trainer states (checkpoint)");
    }
    if (!lead) return;
    nlohmann::json job = {{"env_steps", trainer.env_steps()},
                          {"returns", returns},
                          {"lengths", lengths},
                          {"episodes", episodes},
                          {"progress_rows", progress_rows},
                          {"eval_rows", eval_rows},
                          {"next_eval", next_eval},
                          {"next_ckpt", next_ckpt},
                          {"best", best ? nlohmann::json(*best) : nlohmann::json()},
                          {"elapsed", elapsed_now()}};
    nlohmann::json state = {{"trainer", mine}, {"job", job}};
    if (comm) state["ranks"] = std::vector<std::string>(rank_states.begin() + 1, rank_states.end());
    nlohmann::json on_disk = state;
    if (!saved_state.is_null()) on_disk["previous"] = saved_state;
    write_file_atomic(run_dir->trainer_state(), on_disk.dump());
    save(run_dir->latest_checkpoint());
    saved_steps = trainer.env_steps();
    saved_state = std::move(state);
  };
  EvalConfig eval_cfg;
  eval_cfg.env_id = config.env.id;
  eval_cfg.env_options.values = config.env.options;
  eval_cfg.seed = derive_seed(config.run.seed, 0xe7a1);  // envs unseen by training
  eval_cfg.deterministic = true;
  auto evaluate = [&](int n_episodes, bool final_eval) {
    eval_cfg.episodes = n_episodes;
    eval_cfg.num_envs = std::min(n_episodes, 8);
    EvalResult r;
    if (!lead) {
      // Rank 0 evaluates; the others hand it their trainer states and learn whether the target
      // was reached (run.stop_at_target must stop every rank).
      save_latest();
      std::array<int64_t, 1> reached = {0};
      comm->all_reduce_max(reached, "the evaluation's outcome");
      if (reached[0] != 0 && !result.target_env_steps) result.target_env_steps = reached[0];
      return r;
    }
    if (!options.make_env) {
      r = evaluate_policy(trainer.spec(), trainer.policy_tensors(), eval_cfg);
    } else if (auto env = options.make_env(eval_cfg.num_envs, false)) {
      r = evaluate_policy(trainer.spec(), trainer.policy_tensors(), eval_cfg, *env);
    } else {
      spdlog::warn("no evaluation at {} env steps: the envs given cannot build evaluation envs",
                   trainer.env_steps());
      save_latest();
      return r;
    }
    eval_log->row(trainer.env_steps(), r.mean_return(), r.std_return(), r.mean_length(),
                  static_cast<int64_t>(r.returns.size()));
    ++eval_rows;
    if (tb) {
      tb->scalar("eval/mean_reward", r.mean_return(), trainer.env_steps());
      tb->scalar("eval/std_reward", r.std_return(), trainer.env_steps());
      tb->scalar("eval/mean_ep_length", r.mean_length(), trainer.env_steps());
      tb->flush();
    }
    // run.video_every_evals: every K-th evaluation and the final one film an episode (own RNG).
    const int k = config.run.video_every_evals;
    const auto video =
        run_dir->path() / "videos" / fmt::format("rl-video-eval-{}.mp4", trainer.env_steps());
    if (k > 0 && (final_eval || eval_rows % k == 0) && !options.make_env)
      trainer.record_video(video, eval_cfg.seed);
    else if (k > 0 && (final_eval || eval_rows % k == 0) && options.record_video)
      record_video_with(options.record_video, trainer, video, eval_cfg.seed);
    if (!best || r.mean_return() > *best) {
      best = r.mean_return();
      save(run_dir->best_checkpoint());
    }
    save_latest();
    spdlog::info("eval at {} steps: return {:.2f} +- {:.2f} over {} episodes", trainer.env_steps(),
                 r.mean_return(), r.std_return(), r.returns.size());
    if (result.target && !result.target_env_steps && r.mean_return() >= *result.target) {
      result.target_env_steps = trainer.env_steps();
      result.target_seconds = elapsed_now();
      spdlog::info("target {:.2f} reached at {} env steps, {:.1f} s (first evaluation >= target)",
                   *result.target, *result.target_env_steps, result.target_seconds);
    }
    if (comm) {
      std::array<int64_t, 1> reached = {result.target_env_steps.value_or(0)};
      comm->all_reduce_max(reached, "the evaluation's outcome");
    }
    return r;
  };

  double last_print = -1;
  if (lead) result.run_dir = run_dir->path();
  const auto on_episode = [&](const EpisodeEnd& e) {
    if (!lead) return;  // rank 0 receives every rank's episodes
    monitor->episode(e.episode_return, e.length);
    returns.push_back(e.episode_return);
    lengths.push_back(e.length);
    if (returns.size() > kReturnWindow) returns.pop_front(), lengths.pop_front();
    ++episodes;
  };
  // One progress.csv row (and TensorBoard scalars, and now and then a progress line) per update.
  const auto log_iteration = [&](const IterationStats& it) {
    if (!lead) return;
    const double elapsed = elapsed_now();
    std::optional<double> rmean, rmin, rmax, lmean;
    if (!returns.empty()) {
      double s = 0, l = 0;
      rmin = returns.front(), rmax = returns.front();
      for (size_t i = 0; i < returns.size(); ++i) {
        s += returns[i], l += lengths[i];
        rmin = std::min(*rmin, returns[i]), rmax = std::max(*rmax, returns[i]);
      }
      rmean = s / static_cast<double>(returns.size());
      lmean = l / static_cast<double>(lengths.size());
    }
    const auto& u = it.update;
    const double fps = static_cast<double>(it.env_steps) / elapsed;
    progress->row(it.env_steps, elapsed, fps, episodes, rmean, rmin, rmax, lmean, u.policy_loss,
                  u.value_loss, u.entropy, u.approx_kl, u.clip_fraction, u.explained_variance,
                  u.learning_rate, u.grad_norm, static_cast<int64_t>(u.skipped), it.act_seconds,
                  it.learn_seconds, it.wait_seconds, static_cast<int64_t>(it.policy_lag));
    ++progress_rows;
    if (tb) {
      // progress.csv's row under Stable-Baselines3's tags (SB3's entropy_loss is -entropy).
      const int64_t s = it.env_steps;
      if (rmean) {
        tb->scalar("rollout/ep_rew_mean", *rmean, s);
        tb->scalar("rollout/ep_len_mean", *lmean, s);
        tb->scalar("recur/ep_rew_min", *rmin, s);
        tb->scalar("recur/ep_rew_max", *rmax, s);
      }
      tb->scalar("train/policy_gradient_loss", u.policy_loss, s);
      tb->scalar("train/value_loss", u.value_loss, s);
      tb->scalar("train/entropy_loss", -u.entropy, s);
      tb->scalar("train/approx_kl", u.approx_kl, s);
      tb->scalar("train/clip_fraction", u.clip_fraction, s);
      tb->scalar("train/explained_variance", u.explained_variance, s);
      tb->scalar("train/learning_rate", u.learning_rate, s);
      tb->scalar("time/fps", fps, s);
      tb->scalar("recur/grad_norm", u.grad_norm, s);
      tb->scalar("recur/skipped_minibatches", u.skipped, s);
      tb->scalar("recur/act_time_s", it.act_seconds, s);
      tb->scalar("recur/learn_time_s", it.learn_seconds, s);
      tb->scalar("recur/wait_time_s", it.wait_seconds, s);
      tb->scalar("recur/policy_lag", it.policy_lag, s);
      if (comm) tb->scalar("recur/all_reduce_time_s", trainer.all_reduce_seconds(), s);
      tb->flush();
    }
    if (elapsed - last_print >= 2.0 || trainer.done()) {
      spdlog::info("{}",
                   progress_line({it.env_steps, config.run.total_env_steps, fps, rmean, elapsed}));
      last_print = elapsed;
    }
  };
  // A non-finite loss, gradient or weight (agent/ppo/updater.h) ends the run without writing anything more: the
  // latest checkpoint on disk stays the last good one, and the message says how to go on.
  const auto explain_nonfinite = [&](const NonFiniteUpdate& e) {
    if (!lead) return Error(e.what());
    const auto latest = run_dir->latest_checkpoint();
    if (saved_steps < 0)
      return Error(fmt::format(
          "{}\nThe run stopped before its first checkpoint; nothing was saved in {}. Start it "
          "again with the changes above.",
          e.what(), run_dir->path().string()));
    return Error(fmt::format(
        "{}\nThe run stopped; nothing was written after the last good checkpoint, {} ({} env "
        "steps). Go on from it with: recur train --resume {} --set KEY=VALUE (e.g. "
        "algo.learning_rate)",
        e.what(), latest.string(), saved_steps, run_dir->path().string()));
  };
  // Async: the rollout collected during the last update is trained on before the trainer's
  // state is saved (evaluations save it too), so that a resume continues exactly.
  const auto settle = [&] {
    if (!trainer.pending()) return;
    try {
      log_iteration(trainer.settle());
    } catch (const NonFiniteUpdate& e) {
      throw explain_nonfinite(e);
    }
  };
  while (!trainer.done()) {
    IterationStats it;
    try {
      it = trainer.iterate(on_episode);
    } catch (const NonFiniteUpdate& e) {
      throw explain_nonfinite(e);
    }
    log_iteration(it);
    const bool collecting = trainer.env_steps() < config.run.total_env_steps;
    if (next_eval > 0 && it.env_steps >= next_eval && collecting) {
      settle();
      evaluate(config.run.eval_episodes, false);
      while (next_eval <= it.env_steps) next_eval += config.run.eval_every;
      if (config.run.stop_at_target && result.target_env_steps) {
        spdlog::info("run.stop_at_target: stopping at {} env steps", trainer.env_steps());
        result.stopped_at_target = true;
        break;
      }
    }
    if (next_ckpt > 0 && it.env_steps >= next_ckpt) {
      if (lead) save(run_dir->step_checkpoint(it.env_steps));
      while (next_ckpt <= it.env_steps) next_ckpt += config.run.checkpoint_every;
    }
    bool stop = (options.stop_requested && options.stop_requested->load()) ||
                (options.stop_at_env_steps > 0 && it.env_steps >= options.stop_at_env_steps);
    if (comm) {
      // A stop request (Ctrl-C or SIGTERM reach every rank through the launcher, but not on the
      // same update) stops every rank at the same one.
      std::array<int64_t, 1> any = {stop ? 1 : 0};
      comm->all_reduce_max(any, "the stop check");
      stop = any[0] != 0;
    }
    if (stop && !trainer.done()) {
      settle();
      save_latest();
      if (lead)
        spdlog::warn("interrupted at {} env steps: checkpoint written to {}", trainer.env_steps(),
                     run_dir->latest_checkpoint().string());
      result.interrupted = true;
      break;
    }
  }
  if (!result.interrupted) result.final_eval = evaluate(config.run.final_eval_episodes, true);
  result.env_steps = trainer.env_steps();
  result.seconds = elapsed_now();
  result.all_reduce_seconds = trainer.all_reduce_seconds();
  if (comm) {
    result.rank = comm->rank();
    result.world_size = comm->size();
    if (lead)
      spdlog::info("data-parallel: {:.2f} s of {:.1f} s in the gradient all-reduces ({:.1f}%)",
                   result.all_reduce_seconds, result.seconds,
                   100.0 * result.all_reduce_seconds / std::max(result.seconds, 1e-9));
  }
  return result;
}

}  // namespace recur::agent
