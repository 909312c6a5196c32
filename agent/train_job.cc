#include "agent/train_job.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <deque>
#include <optional>

#include "agent/run/csv_log.h"
#include "agent/run/monitor_log.h"
#include "agent/run/progress_line.h"
#include "agent/run/run_dir.h"
#include "agent/trainer.h"
#include "policy/policy_checkpoint.h"

namespace recur::agent {
namespace {

const std::vector<std::string> kProgressColumns = {
    "env_steps",  "time_s",          "fps",           "episodes",           "return_mean",
    "return_min", "return_max",      "length_mean",   "policy_loss",        "value_loss",
    "entropy",    "approx_kl",       "clip_fraction", "explained_variance", "learning_rate",
    "grad_norm",  "skipped_updates", "act_time_s",    "learn_time_s"};
const std::vector<std::string> kEvalColumns = {"env_steps", "return_mean", "return_std",
                                               "length_mean", "episodes"};
constexpr size_t kReturnWindow = 100;  // episodes in the progress statistics (as SB3)

std::string join_options(const std::map<std::string, std::string>& options) {
  std::string s;
  for (const auto& [k, v] : options) s += (s.empty() ? "" : ";") + k + "=" + v;
  return s;
}

}  // namespace

TrainJobResult run_train_job(const TrainConfig& config, const std::string& config_yaml,
                             const std::string& name, const std::atomic<bool>* stop_requested) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const RunDir dir = RunDir::create(config.run.output_dir, name);
  dir.write_config(config_yaml);
  spdlog::info("run directory {}", dir.path().string());

  Trainer trainer(config);
  CsvLog progress = CsvLog::create(dir.progress_csv(), kProgressColumns);
  CsvLog eval_log = CsvLog::create(dir.eval_csv(), kEvalColumns);
  MonitorLog monitor = MonitorLog::create(dir.monitor_csv(), config.env.id);

  const std::map<std::string, std::string> meta = {
      {kMetaEnvId, config.env.id}, {kMetaEnvOptions, join_options(config.env.options)}};
  auto save = [&](const std::filesystem::path& path) {
    auto m = meta;
    m[kMetaEnvSteps] = std::to_string(trainer.env_steps());
    policy::save_policy(path, trainer.spec(), trainer.policy_tensors(), m);
  };
  EvalConfig eval_cfg;
  eval_cfg.env_id = config.env.id;
  eval_cfg.env_options.values = config.env.options;
  eval_cfg.seed = derive_seed(config.run.seed, 0xe7a1);  // envs unseen by training
  eval_cfg.deterministic = true;
  std::optional<double> best;
  auto evaluate = [&](int episodes) {
    eval_cfg.episodes = episodes;
    eval_cfg.num_envs = std::min(episodes, 8);
    EvalResult r = evaluate_policy(trainer.spec(), trainer.policy_tensors(), eval_cfg);
    eval_log.row(trainer.env_steps(), r.mean_return(), r.std_return(), r.mean_length(),
                 static_cast<int64_t>(r.returns.size()));
    save(dir.latest_checkpoint());
    if (!best || r.mean_return() > *best) {
      best = r.mean_return();
      save(dir.best_checkpoint());
    }
    spdlog::info("eval at {} steps: return {:.2f} +- {:.2f} over {} episodes", trainer.env_steps(),
                 r.mean_return(), r.std_return(), r.returns.size());
    return r;
  };

  std::deque<double> returns;
  std::deque<int> lengths;
  int64_t episodes = 0;
  int64_t next_eval = config.run.eval_every > 0 ? config.run.eval_every : -1;
  int64_t next_ckpt = config.run.checkpoint_every > 0 ? config.run.checkpoint_every : -1;
  double last_print = -1;
  TrainJobResult result;
  result.run_dir = dir.path();
  while (!trainer.done()) {
    const IterationStats it = trainer.iterate([&](const EpisodeEnd& e) {
      monitor.episode(e.episode_return, e.length);
      returns.push_back(e.episode_return);
      lengths.push_back(e.length);
      if (returns.size() > kReturnWindow) returns.pop_front(), lengths.pop_front();
      ++episodes;
    });
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
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
    progress.row(it.env_steps, elapsed, fps, episodes, rmean, rmin, rmax, lmean, u.policy_loss,
                 u.value_loss, u.entropy, u.approx_kl, u.clip_fraction, u.explained_variance,
                 u.learning_rate, u.grad_norm, static_cast<int64_t>(u.skipped), it.act_seconds,
                 it.learn_seconds);
    if (elapsed - last_print >= 2.0 || trainer.done()) {
      spdlog::info("{}",
                   progress_line({it.env_steps, config.run.total_env_steps, fps, rmean, elapsed}));
      last_print = elapsed;
    }
    if (next_eval > 0 && it.env_steps >= next_eval && !trainer.done()) {
      evaluate(config.run.eval_episodes);
      while (next_eval <= it.env_steps) next_eval += config.run.eval_every;
    }
    if (next_ckpt > 0 && it.env_steps >= next_ckpt) {
      save(dir.step_checkpoint(it.env_steps));
      while (next_ckpt <= it.env_steps) next_ckpt += config.run.checkpoint_every;
    }
    if (stop_requested && stop_requested->load()) {
      save(dir.latest_checkpoint());
      spdlog::warn("interrupted at {} env steps: checkpoint written to {}", trainer.env_steps(),
                   dir.latest_checkpoint().string());
      result.interrupted = true;
      break;
    }
  }
  if (!result.interrupted) result.final_eval = evaluate(config.run.final_eval_episodes);
  result.env_steps = trainer.env_steps();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace recur::agent
