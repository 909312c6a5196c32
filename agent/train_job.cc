#include "agent/train_job.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <numeric>
#include <optional>
#include <utility>

#include "agent/algorithm.h"
#include "agent/dist/communicator.h"
#include "agent/dist/rank_checks.h"
#include "agent/env_plugins.h"
#include "agent/record/recorder.h"
#include "agent/run/background_eval.h"
#include "agent/run/csv_log.h"
#include "agent/run/init_from.h"
#include "agent/run/monitor_log.h"
#include "agent/run/progress_line.h"
#include "agent/run/progress_table.h"
#include "agent/run/resume_point.h"
#include "agent/run/resume_state.h"
#include "agent/run/run_dir.h"
#include "agent/run/tensorboard.h"
#include "core/error.h"
#include "core/version.h"
#include "envs/registry.h"
#include "policy/policy_checkpoint.h"

namespace recur::agent {
namespace {

const std::vector<std::string> kEvalColumns = {"env_steps", "return_mean", "return_std",
                                               "length_mean", "episodes"};
// confirm.csv: the evaluation's mean beside the confirmation's statistics.
const std::vector<std::string> kConfirmColumns = {"env_steps",  "eval_return_mean", "return_mean",
                                                  "return_std", "length_mean",      "episodes",
                                                  "confirmed"};

std::string join_options(const std::map<std::string, std::string>& options) {
  std::string s;
  for (const auto& [k, v] : options) s += (s.empty() ? "" : ";") + k + "=" + v;
  return s;
}

// The training job: what every algorithm shares (train_job.h), around one Algorithm. Rank 0 of a
// data-parallel run (`lead_`) writes the run directory and evaluates; every rank trains and
// saves its algorithm state through rank 0.
class TrainJob {
 public:
  TrainJob(const TrainConfig& config, const std::string& config_yaml,
           const TrainJobOptions& options);
  TrainJobResult run();

 private:
  using Clock = std::chrono::steady_clock;

  void find_target();
  void open_run_dir();
  void resume();
  void check_ranks_at_start();
  void open_logs();
  bool run_complete() const;
  // The loop's schedule after an iteration: periodic checkpoint, evaluation; true: stop here.
  bool after_iteration(const Iteration& it);
  bool stop_at_target();
  bool stop_requested(int64_t env_steps);
  void train_loop();

  double elapsed_now() const;
  std::vector<double> segments_now() const;
  void save_policy(const std::filesystem::path& path) const;
  void save_policy(const std::filesystem::path& path, const EvalSnapshot& s) const;
  void save_latest(std::optional<double> pending_eval_seconds = std::nullopt);
  EvalSnapshot snapshot_now(bool final_eval) const;
  EvalReport run_eval(const EvalSnapshot& s, int episodes) const;
  EvalResult run_episodes(const EvalSnapshot& s, int episodes, uint64_t seed) const;
  EvalResult evaluate(int episodes, bool final_eval);
  void start_background_eval();
  bool collect_background_eval(bool wait);
  void finish_background_eval_on_error() noexcept;
  void rerun_pending_eval();
  void log_evaluation(const EvalSnapshot& s, const EvalResult& r,
                      const std::optional<EvalResult>& confirmation, bool final_eval, double ready);
  bool confirm_target(const EvalSnapshot& s, const EvalResult& r,
                      const std::optional<EvalResult>& c);
  void film(const std::filesystem::path& path, const EvalSnapshot& s) const;
  void on_episode(const EpisodeEnd& e);
  void log_iteration(const Iteration& it);
  Error explain_nonfinite(const NonFiniteUpdate& e) const;
  void settle();
  void settle_for_save();

  const TrainConfig& config_;
  const std::string& config_yaml_;
  const TrainJobOptions& options_;
  const Clock::time_point start_ = Clock::now();
  const bool resuming_;
  dist::Communicator* comm_ = nullptr;  // null on one process
  bool lead_ = true;                    // writes the run directory
  std::unique_ptr<Algorithm> algo_;
  TrainJobResult result_;
  std::optional<RunDir> run_dir_;
  // The counters saved with every checkpoint (resume_state.h); job_.elapsed and job_.segments
  // are those before this process (a resume), the time to target is in result_.
  JobState job_;
  // The generation on disk (the next save's "previous"; none before the first checkpoint).
  std::optional<ResumeState> saved_;
  std::optional<ProgressTable> table_;
  std::optional<CsvLog> progress_, eval_log_, confirm_log_;
  std::optional<MonitorLog> monitor_;
  std::optional<TensorBoardWriter> tb_;
  std::map<std::string, std::string> meta_;
  EvalConfig eval_cfg_;  // set by the constructor, then read only (evaluation threads read it)
  double last_print_ = -1;
  // Wall seconds training waited for periodic evaluations (their whole time when synchronous;
  // beside training, the waits for the previous one), printed at the end.
  double eval_wait_ = 0;
  // Periodic evaluations beside training (run.eval_async; null: synchronous). Last, so that it is
  // destroyed first: its thread reads config_, options_, eval_cfg_ and run_dir_ until joined.
  std::unique_ptr<BackgroundEval> background_;
};

TrainJob::TrainJob(const TrainConfig& config, const std::string& config_yaml,
                   const TrainJobOptions& options)
    : config_(config),
      config_yaml_(config_yaml),
      options_(options),
      resuming_(!options.resume_dir.empty()) {
  // Plugins before anything looks the env up. A resumed run loads the files it trained with,
  // unchanged (the latest checkpoint records their hashes).
  if (resuming_) {
    const auto latest = RunDir::open(options.resume_dir).latest_checkpoint();
    if (std::filesystem::exists(latest)) {
      const auto meta = policy::load_policy(latest).metadata;
      if (const auto it = meta.find(kMetaEnvPlugins); it != meta.end())
        load_recorded_plugins(it->second, options.resume_dir.string(), &config.env.plugin);
      // A resumed run continues from its own weights: a run.init_from other than the one it
      // started with would be ignored, so it is refused rather than silently dropped.
      const auto init = meta.find(kMetaInitFrom);
      const std::string started_from = init == meta.end() ? "" : init->second;
      RECUR_CHECK(config.run.init_from == started_from,
                  "run.init_from = {}, but {} started from {}: a resumed run continues from its "
                  "own latest checkpoint; drop --set run.init_from, or start a new run with it",
                  config.run.init_from.empty() ? "\"\"" : config.run.init_from,
                  options.resume_dir.string(),
                  started_from.empty() ? "a fresh policy" : started_from);
    }
  }
  load_env_plugins(config.env.plugin);
  comm_ = options.comm != nullptr && options.comm->size() > 1 ? options.comm : nullptr;
  lead_ = comm_ == nullptr || comm_->rank() == 0;
  RECUR_CHECK(comm_ == nullptr || !options.make_env,
              "dist.backend = {}: data-parallel runs step recur's own envs (registry or plugin); "
              "envs from Python train on one process (dist.backend: none)",
              config.dist.backend);
  // The algorithm first: a config it cannot honour (an env option, device.*=cuda without a GPU)
  // fails before a run directory is created; so does the target.
  auto env = options.make_env ? options.make_env(config.env.num_envs, true) : nullptr;
  algo_ = options.make_algorithm ? options.make_algorithm(config, std::move(env), comm_)
                                 : make_algorithm(config, std::move(env), comm_);
  // A resumed run's own checkpoint holds its weights; a new one may start from a trained policy.
  if (!resuming_) start_from_policy(config, *algo_);
  table_.emplace(algo_->metric_columns());
  find_target();
  job_.next_eval = config.run.eval_every > 0 ? config.run.eval_every : -1;
  job_.next_ckpt = config.run.checkpoint_every > 0 ? config.run.checkpoint_every : -1;
  meta_ = {{kMetaEnvId, config.env.id},
           {kMetaEnvOptions, join_options(config.env.options)},
           {kMetaEnvPlugins, plugin_record(config.env.plugin)}};
  if (!options.env_source.empty()) meta_[kMetaEnvSource] = options.env_source;
  if (!config.run.init_from.empty()) meta_[kMetaInitFrom] = config.run.init_from;
  eval_cfg_.env_id = config.env.id;
  eval_cfg_.env_options.values = config.env.options;
  eval_cfg_.seed = derive_seed(config.run.seed, 0xe7a1);  // envs unseen by training
  eval_cfg_.deterministic = true;
  eval_cfg_.threads = config.run.eval_threads;
  // Synchronous where a thread beside training is wrong: every rank must agree at the same update
  // on run.stop_at_target, and envs from Python are built and stepped under the GIL.
  if (config.run.eval_async && config.run.eval_every > 0 && (comm_ || options.make_env))
    spdlog::info("run.eval_async: evaluations are synchronous in {}",
                 comm_ ? "data-parallel runs" : "runs on envs given from Python");
  if (config.run.eval_async && lead_ && !comm_ && !options.make_env)
    background_ = std::make_unique<BackgroundEval>(
        [this](const EvalSnapshot& s) { return run_eval(s, config_.run.eval_episodes); },
        config.run.eval_nice);
}

void TrainJob::find_target() {
  if (config_.run.target_return)
    result_.target = *config_.run.target_return;
  else if (options_.make_env)
    result_.target = options_.reward_threshold;
  else
    result_.target = envs::registry().at(config_.env.id).reward_threshold;
  RECUR_CHECK(result_.target || !config_.run.stop_at_target,
              "run.stop_at_target = true, but {} has no registered reward threshold and "
              "run.target_return is null: set run.target_return to the mean evaluation return "
              "that counts as solved, or run.stop_at_target to false",
              config_.env.id);
}

// Rank 0 creates the run directory; on a resume every rank reads its own state there.
void TrainJob::open_run_dir() {
  if (resuming_)
    run_dir_ = RunDir::open(options_.resume_dir);
  else if (lead_)
    run_dir_ = RunDir::create(config_.run.output_dir, options_.name);
  if (!resuming_ && lead_) run_dir_->write_config(config_yaml_);
  if (lead_)
    spdlog::info("{} run directory {}", resuming_ ? "resuming" : "new", run_dir_->path().string());
  if (lead_) result_.run_dir = run_dir_->path();
}

// The latest checkpoint and the resume file beside it; the file is written first and carries the
// generation before (resume_state.h), so a run killed between the two writes resumes from the
// older checkpoint.
void TrainJob::resume() {
  const RunDir& dir = *run_dir_;
  ResumePoint point = read_resume_point(dir, "start a new run");
  ResumeState state = std::move(point.state);
  // A data-parallel run saved every rank's state, rank 0's first.
  const int rank = comm_ ? comm_->rank() : 0, world = comm_ ? comm_->size() : 1;
  const size_t saved_ranks = state.trainer_states.size();
  RECUR_CHECK(saved_ranks == static_cast<size_t>(world),
              "{} was trained by {} rank(s) and this job has {}: resume it with the same "
              "number of ranks ({})",
              dir.path().string(), saved_ranks, world,
              saved_ranks == 1 ? "dist.backend: none, or mpirun -np 1"
                               : fmt::format("mpirun -np {}", saved_ranks));
  AlgorithmState algo_state{state.trainer_states.at(static_cast<size_t>(rank)), {}};
  algo_state.tensors = load_trainer_tensors(dir, state);
  algo_->restore_state(algo_state, point.checkpoint.tensors);
  job_ = state.job;
  result_.target_env_steps = job_.target_env_steps;
  result_.target_seconds = job_.target_seconds;
  result_.train_target_env_steps = job_.train_target_env_steps;
  result_.train_target_seconds = job_.train_target_seconds;
  saved_ = std::move(state);
  spdlog::info("resumed at {} env steps", algo_->env_steps());
}

// Before any rank trains: the same build, config, env and weights everywhere.
void TrainJob::check_ranks_at_start() {
  if (!comm_) return;
  dist::RankSummary summary;
  summary.version = fmt::format("{} ({})", RECUR_VERSION_STRING, comm_->backend());
  summary.config = config_yaml_;
  summary.env =
      fmt::format("{} {} -> {}", config_.env.id, algo_->spec().obs_dim, algo_->spec().action_dim);
  summary.weights = dist::fingerprint(algo_->policy_tensors());
  summary.env_steps = algo_->env_steps();
  dist::check_ranks_agree(*comm_, summary, "at start-up");
  if (lead_)
    spdlog::info("data-parallel: {} ranks over {}, {} envs each ({} in all)", comm_->size(),
                 comm_->backend(), config_.env.num_envs, config_.env.num_envs * comm_->size());
}

// A resume keeps what was logged up to the checkpoint and drops the rest (CSV rows, monitor
// episodes, TensorBoard events after its step); a resume also opens a new event file beside the
// old ones, which TensorBoard merges.
void TrainJob::open_logs() {
  if (!lead_) return;
  const RunDir& dir = *run_dir_;
  const auto header = table_->csv_header();
  progress_ = resuming_ ? CsvLog::open_for_resume(dir.progress_csv(), header, job_.progress_rows)
                        : CsvLog::create(dir.progress_csv(), header);
  eval_log_ = resuming_ ? CsvLog::open_for_resume(dir.eval_csv(), kEvalColumns, job_.eval_rows)
                        : CsvLog::create(dir.eval_csv(), kEvalColumns);
  if (config_.run.target_confirm_episodes > 0)
    confirm_log_ =
        resuming_ ? CsvLog::open_for_resume(dir.confirm_csv(), kConfirmColumns, job_.confirm_rows)
                  : CsvLog::create(dir.confirm_csv(), kConfirmColumns);
  monitor_ = resuming_ ? MonitorLog::open_for_resume(dir.monitor_csv(), job_.episodes)
                       : MonitorLog::create(dir.monitor_csv(), config_.env.id);
  if (resuming_ && std::filesystem::is_directory(dir.path() / "tb"))
    trim_tensorboard_logs(dir.path() / "tb", algo_->env_steps());
  if (config_.run.tensorboard) tb_.emplace(dir.path() / "tb");
}

// A resumed run whose final evaluation is written and whose budget is spent has nothing to do
// (a larger run.total_env_steps makes it go on).
bool TrainJob::run_complete() const {
  return resuming_ && job_.finished && algo_->env_steps() >= config_.run.total_env_steps;
}

double TrainJob::elapsed_now() const {
  return job_.elapsed + std::chrono::duration<double>(Clock::now() - start_).count();
}

std::vector<double> TrainJob::segments_now() const {
  std::vector<double> s = job_.segments;
  s.push_back(std::chrono::duration<double>(Clock::now() - start_).count());
  return s;
}

// The policy as it is now (a checkpoint) or as it was when `s` was taken (the best checkpoint).
void TrainJob::save_policy(const std::filesystem::path& path) const {
  auto m = meta_;
  m[kMetaEnvSteps] = std::to_string(algo_->env_steps());
  policy::save_policy(path, algo_->spec(), algo_->policy_tensors(), m);
}

void TrainJob::save_policy(const std::filesystem::path& path, const EvalSnapshot& s) const {
  auto m = meta_;
  m[kMetaEnvSteps] = std::to_string(s.env_steps);
  policy::save_policy(path, s.spec, s.tensors, m);
}

// The latest checkpoint and everything a resume needs (resume_state.h). A data-parallel run
// gathers every rank's algorithm state to rank 0 (every rank calls this at the same points) and
// checks on the way that the ranks still hold the same weights. `pending_eval_seconds`: the
// evaluation of these weights is about to run beside training (a resume runs it again); no
// other evaluation may be pending, as the state's eval rows, best and target must be final.
void TrainJob::save_latest(std::optional<double> pending_eval_seconds) {
  RECUR_ASSERT(!background_ || !background_->busy());
  AlgorithmState mine = algo_->save_state();
  std::vector<std::string> rank_states = {mine.json};
  if (comm_) {
    dist::RankSummary summary;
    summary.version = RECUR_VERSION_STRING;
    summary.weights = dist::fingerprint(algo_->policy_tensors());
    summary.env_steps = algo_->env_steps();
    dist::check_ranks_agree(*comm_, summary, fmt::format("at env step {}", algo_->env_steps()));
    rank_states = comm_->all_gather(mine.json, "the trainer states (checkpoint)");
    RECUR_CHECK(mine.tensors.empty(),
                "algo.type = {} keeps tensor state (e.g. a replay buffer), which data-parallel "
                "runs do not save yet: use dist.backend: none",
                config_.algo.type);
  }
  if (!lead_) return;
  ResumeState state;
  state.trainer_states = std::move(rank_states);
  if (!mine.tensors.empty()) {
    // Beside the checkpoints, one file per generation: the previous one stays until the next
    // save, as the resume file's "previous" may name it.
    state.trainer_tensors = fmt::format("algorithm_state-{}.safetensors", algo_->env_steps());
    policy::Checkpoint c;
    c.tensors = std::move(mine.tensors);
    policy::save_checkpoint(run_dir_->checkpoints_dir() / state.trainer_tensors, c);
  }
  state.job = job_;
  state.job.env_steps = algo_->env_steps();
  state.job.elapsed = elapsed_now();
  state.job.segments = segments_now();
  state.job.target_env_steps = result_.target_env_steps;
  state.job.target_seconds = result_.target_seconds;
  state.job.train_target_env_steps = result_.train_target_env_steps;
  state.job.train_target_seconds = result_.train_target_seconds;
  state.job.pending_eval_seconds = pending_eval_seconds;
  write_file_atomic(run_dir_->trainer_state(), resume_file_text(state, saved_));
  save_policy(run_dir_->latest_checkpoint());
  // Tensor files that no generation on disk names any more (also those of a killed process).
  if (!state.trainer_tensors.empty())
    for (const auto& entry : std::filesystem::directory_iterator(run_dir_->checkpoints_dir())) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("algorithm_state-") && name != state.trainer_tensors &&
          (!saved_ || name != saved_->trainer_tensors))
        std::filesystem::remove(entry.path());
    }
  saved_ = std::move(state);
}

// The policy now, with its env step and elapsed seconds, for an evaluation of these weights.
EvalSnapshot TrainJob::snapshot_now(bool final_eval) const {
  EvalSnapshot s;
  s.spec = algo_->spec();
  s.tensors = algo_->policy_tensors();
  s.env_steps = algo_->env_steps();
  s.seconds = elapsed_now();
  // run.video_every_evals: every K-th evaluation (counted by eval.csv's rows, this one included:
  // none is pending when a snapshot is taken) and the final one film an episode.
  const int k = config_.run.video_every_evals;
  s.film = k > 0 && (final_eval || (job_.eval_rows + 1) % k == 0);
  // No evaluation is pending either (see above), so the target's state is current.
  const int episodes = final_eval ? config_.run.final_eval_episodes : config_.run.eval_episodes;
  if (result_.target && !result_.target_env_steps && episodes < config_.run.target_confirm_episodes)
    s.confirm_target = result_.target;
  return s;
}

// One evaluation of `s` (then its video, when due; then, when it reaches a target to confirm,
// the confirmation's episodes) on envs and an actor of their own. Reads only what does not change
// during training: it also runs on the background evaluation's thread.
EvalReport TrainJob::run_eval(const EvalSnapshot& s, int episodes) const {
  EvalReport report = run_episodes(s, episodes, eval_cfg_.seed);
  const EvalResult& r = report.result;
  if (s.film && !r.returns.empty())
    film(run_dir_->path() / "videos" / fmt::format("rl-video-eval-{}.mp4", s.env_steps), s);
  // Reset seeds of their own: the evaluation's episodes were drawn to reach the target, so
  // counting them again would bias the confirmation upwards.
  if (s.confirm_target && !r.returns.empty() && r.mean_return() >= *s.confirm_target)
    report.confirmation =
        run_episodes(s, config_.run.target_confirm_episodes, derive_seed(config_.run.seed, 0xc0f1));
  return report;
}

// `episodes` deterministic episodes of `s`, envs reset from `seed`; none when the envs given from
// outside cannot build evaluation envs.
EvalResult TrainJob::run_episodes(const EvalSnapshot& s, int episodes, uint64_t seed) const {
  EvalConfig cfg = eval_cfg_;
  cfg.episodes = episodes;
  cfg.num_envs = std::min(episodes, 8);
  cfg.seed = seed;
  if (!options_.make_env) return evaluate_policy(s.spec, s.tensors, cfg);
  if (auto env = options_.make_env(cfg.num_envs, false))
    return evaluate_policy(s.spec, s.tensors, cfg, *env);
  spdlog::warn("no evaluation at {} env steps: the envs given cannot build evaluation envs",
               s.env_steps);
  return {};
}

// A synchronous evaluation on rank 0 (the others hand it their states and learn whether the
// target was reached: run.stop_at_target must stop every rank), then the latest checkpoint. The
// target and, for the final one, the run's end are recorded before that save, so a resume knows
// them.
EvalResult TrainJob::evaluate(int episodes, bool final_eval) {
  EvalResult r;
  if (!lead_) {
    save_latest();
    std::array<int64_t, 1> reached = {0};
    comm_->all_reduce_max(reached, "the evaluation's outcome");
    if (reached[0] != 0 && !result_.target_env_steps) result_.target_env_steps = reached[0];
    return r;
  }
  const EvalSnapshot s = snapshot_now(final_eval);
  const auto t0 = Clock::now();
  EvalReport report = run_eval(s, episodes);
  r = std::move(report.result);
  if (!final_eval) eval_wait_ += std::chrono::duration<double>(Clock::now() - t0).count();
  if (!r.returns.empty())  // empty: no envs
    log_evaluation(s, r, report.confirmation, final_eval, elapsed_now());
  job_.finished = final_eval;
  save_latest();
  if (comm_) {
    std::array<int64_t, 1> reached = {result_.target_env_steps.value_or(0)};
    comm_->all_reduce_max(reached, "the evaluation's outcome");
  }
  return r;
}

// A periodic evaluation beside training (run.eval_async): the previous one is waited for and
// logged first (one at a time, results in order; the only place training waits for an
// evaluation), then the latest checkpoint is saved with these very weights and the evaluation
// marked pending in its resume state, so that a run stopped before the result arrives runs it
// again on resume (rerun_pending_eval).
void TrainJob::start_background_eval() {
  collect_background_eval(true);
  EvalSnapshot s = snapshot_now(false);
  job_.finished = false;
  save_latest(s.seconds);
  background_->submit(std::move(s));
}

// The background evaluation's result, logged if it has arrived (or once it has, with `wait`);
// its exception, if it threw, is rethrown here. True: a result was logged.
bool TrainJob::collect_background_eval(bool wait) {
  if (!background_) return false;
  const auto t0 = Clock::now();
  const std::optional<EvalOutcome> out = wait ? background_->wait() : background_->poll();
  if (wait) eval_wait_ += std::chrono::duration<double>(Clock::now() - t0).count();
  if (!out || out->result.returns.empty()) return false;
  const double ready = job_.elapsed + std::chrono::duration<double>(out->finished - start_).count();
  log_evaluation(out->snapshot, out->result, out->confirmation, false, ready);
  return true;
}

// On the way out of a failed run: the pending evaluation is joined, its result only printed.
// The resume state on disk is the one saved when it started, with it pending (every other save
// waits for it), so a resume runs it again and logs it; logging it here too would log it twice.
// An error of its own is only warned of: the run's error is the one to report.
void TrainJob::finish_background_eval_on_error() noexcept {
  if (!background_) return;
  try {
    if (const auto out = background_->wait(); out && !out->result.returns.empty())
      spdlog::warn(
          "the evaluation at {} env steps returned {:.2f}; not logged, as the run "
          "failed: a resume runs it again",
          out->snapshot.env_steps, out->result.mean_return());
  } catch (const std::exception& e) {
    spdlog::warn("the evaluation running beside training failed too: {}", e.what());
  }
}

// A resumed run whose latest checkpoint was saved with its evaluation pending (run.eval_async)
// runs that evaluation now, on the checkpoint's weights (those the algorithm was restored to),
// with the seconds recorded when they were taken: as if the stopped run had logged it.
void TrainJob::rerun_pending_eval() {
  const std::optional<double> seconds = std::exchange(job_.pending_eval_seconds, std::nullopt);
  if (!seconds || !lead_) return;
  EvalSnapshot s = snapshot_now(false);
  s.seconds = *seconds;
  spdlog::info("evaluating the checkpoint at {} env steps again: its result was not logged",
               s.env_steps);
  if (background_) {
    background_->submit(std::move(s));
    return;
  }
  const EvalReport report = run_eval(s, config_.run.eval_episodes);
  if (!report.result.returns.empty())
    log_evaluation(s, report.result, report.confirmation, false, elapsed_now());
}

// eval.csv, TensorBoard, the best checkpoint and the time to target, all of the evaluated
// weights `s` (its env step; its seconds when taken). `ready`: the elapsed seconds when the
// result was ready (later than s.seconds by the evaluation, and by training beside it).
void TrainJob::log_evaluation(const EvalSnapshot& s, const EvalResult& r,
                              const std::optional<EvalResult>& confirmation, bool final_eval,
                              double ready) {
  const int64_t steps = s.env_steps;
  eval_log_->row(steps, r.mean_return(), r.std_return(), r.mean_length(),
                 static_cast<int64_t>(r.returns.size()));
  ++job_.eval_rows;
  if (tb_) {
    tb_->scalar("eval/mean_reward", r.mean_return(), steps);
    tb_->scalar("eval/std_reward", r.std_return(), steps);
    tb_->scalar("eval/mean_ep_length", r.mean_length(), steps);
    tb_->flush();
  }
  // Weights whose evaluation was confirmed (run.target_confirm_episodes) are judged for the best
  // checkpoint by the confirmation: the evaluation's episodes were the draw that reached the
  // target, the confirmation's are more and fresh.
  const double score = s.confirm_target && confirmation && !confirmation->returns.empty()
                           ? confirmation->mean_return()
                           : r.mean_return();
  if (!job_.best || score > *job_.best) {
    job_.best = score;
    save_policy(run_dir_->best_checkpoint(), s);
  }
  spdlog::info(
      "eval at {} steps{}: return {:.2f} +- {:.2f} over {} episodes (weights of {:.1f} s, "
      "result at {:.1f} s)",
      steps, final_eval ? " (final)" : "", r.mean_return(), r.std_return(), r.returns.size(),
      s.seconds, ready);
  if (!result_.target || result_.target_env_steps || r.mean_return() < *result_.target) return;
  if (s.confirm_target && !confirm_target(s, r, confirmation)) return;
  result_.target_env_steps = steps;
  result_.target_seconds = s.seconds;
  save_policy(run_dir_->target_checkpoint(), s);
  spdlog::info("target {:.2f} reached at {} env steps, {:.1f} s (first evaluation >= target{})",
               *result_.target, *result_.target_env_steps, result_.target_seconds,
               s.confirm_target ? ", confirmed" : "");
}

// run.target_confirm_episodes: the confirmation `c` of the evaluation `r` of `s`, which reached
// the target, in confirm.csv, TensorBoard and the log; true: the target counts at `s`.
bool TrainJob::confirm_target(const EvalSnapshot& s, const EvalResult& r,
                              const std::optional<EvalResult>& confirmation) {
  // No episodes: envs given from outside that cannot build evaluation envs (an empty row).
  static const EvalResult kNone;
  const EvalResult& c = confirmation ? *confirmation : kNone;
  std::optional<double> mean, sd, length;
  if (!c.returns.empty()) mean = c.mean_return(), sd = c.std_return(), length = c.mean_length();
  const bool confirmed = mean && *mean >= *s.confirm_target;
  confirm_log_->row(s.env_steps, r.mean_return(), mean, sd, length,
                    static_cast<int64_t>(c.returns.size()), confirmed);
  ++job_.confirm_rows;
  if (!mean) return false;
  if (tb_) {
    tb_->scalar("eval/confirm_mean_reward", *mean, s.env_steps);
    tb_->flush();
  }
  spdlog::info(
      "confirmation at {} steps: return {:.2f} +- {:.2f} over {} more episodes of the same "
      "weights: {}",
      s.env_steps, *mean, *sd, c.returns.size(),
      confirmed ? "the target holds" : "below the target, which does not count yet");
  return confirmed;
}

// The evaluation's first episode (reset seed derive_seed(eval seed, 0), deterministic), filmed
// with its own env, actor and RNG: training continues exactly as without it. A video that cannot
// be made is a warning, never the end of the run.
void TrainJob::film(const std::filesystem::path& path, const EvalSnapshot& s) const {
  if (options_.make_env && !options_.record_video) return;  // envs from outside, no filmer given
  try {
    std::filesystem::create_directories(path.parent_path());
    double r = 0;
    if (options_.make_env) {
      r = options_.record_video(path.string(), s.spec, s.tensors, eval_cfg_.seed);
    } else {
      Options env_options;
      env_options.values = config_.env.options;
      env_options.source =
          config_.env.options_source.empty() ? "env.options" : config_.env.options_source;
      r = record::record_eval_video(s.spec, s.tensors, config_.env.id, env_options, eval_cfg_.seed,
                                    true, path.string());
    }
    spdlog::info("video {} (return {:.2f})", path.string(), r);
  } catch (const std::exception& e) {
    spdlog::warn("no video at {} env steps: {}", s.env_steps, e.what());
  }
}

void TrainJob::on_episode(const EpisodeEnd& e) {
  if (!lead_) return;  // rank 0 receives every rank's episodes
  monitor_->episode(e.episode_return, e.length);
  job_.returns.push_back(e.episode_return);
  job_.lengths.push_back(e.length);
  if (job_.returns.size() > kReturnWindow) job_.returns.pop_front(), job_.lengths.pop_front();
  ++job_.episodes;
}

// One progress.csv row (and TensorBoard scalars, and now and then a progress line) per iteration.
void TrainJob::log_iteration(const Iteration& it) {
  if (!lead_) return;
  ProgressRow row;
  row.env_steps = it.env_steps;
  row.time_s = elapsed_now();
  row.fps = static_cast<double>(it.env_steps) / row.time_s;
  row.episodes = job_.episodes;
  if (!job_.returns.empty()) {
    double s = 0, l = 0, lo = job_.returns.front(), hi = job_.returns.front();
    for (size_t i = 0; i < job_.returns.size(); ++i) {
      s += job_.returns[i], l += job_.lengths[i];
      lo = std::min(lo, job_.returns[i]), hi = std::max(hi, job_.returns[i]);
    }
    row.return_mean = s / static_cast<double>(job_.returns.size());
    row.length_mean = l / static_cast<double>(job_.lengths.size());
    row.return_min = lo, row.return_max = hi;
    // The training time to target counts only once the window is full: the first few episodes
    // of a run are too few to say anything.
    if (result_.target && !result_.train_target_env_steps && job_.returns.size() >= kReturnWindow &&
        *row.return_mean >= *result_.target) {
      result_.train_target_env_steps = it.env_steps;
      result_.train_target_seconds = row.time_s;
      spdlog::info(
          "target {:.2f} reached by the mean of the last {} training episodes at {} env steps, "
          "{:.1f} s",
          *result_.target, kReturnWindow, it.env_steps, row.time_s);
    }
  }
  row.act_seconds = it.act_seconds, row.learn_seconds = it.learn_seconds;
  row.wait_seconds = it.wait_seconds, row.policy_lag = it.policy_lag;
  table_->write(row, it.metrics, *progress_, tb_ ? &*tb_ : nullptr);
  ++job_.progress_rows;
  if (tb_) {
    if (comm_) tb_->scalar("recur/all_reduce_time_s", algo_->all_reduce_seconds(), it.env_steps);
    tb_->flush();
  }
  if (row.time_s - last_print_ >= 2.0 || algo_->done()) {
    spdlog::info("{}", progress_line({it.env_steps, config_.run.total_env_steps, row.fps,
                                      row.return_mean, row.time_s}));
    last_print_ = row.time_s;
  }
}

// A non-finite loss, gradient or weight ends the run without writing anything more: the latest
// checkpoint on disk stays the last good one, and the message says how to go on.
Error TrainJob::explain_nonfinite(const NonFiniteUpdate& e) const {
  if (!lead_) return Error(e.what());
  if (!saved_)
    return Error(fmt::format(
        "{}\nThe run stopped before its first checkpoint; nothing was saved in {}. Start it "
        "again with the changes above.",
        e.what(), run_dir_->path().string()));
  return Error(fmt::format(
      "{}\nThe run stopped; nothing was written after the last good checkpoint, {} ({} env "
      "steps). Go on from it with: recur train --resume {} --set KEY=VALUE (e.g. "
      "algo.learning_rate)",
      e.what(), run_dir_->latest_checkpoint().string(), saved_->job.env_steps,
      run_dir_->path().string()));
}

// A pipelined algorithm trains on the data it holds: at every evaluation point (after_iteration
// says why), before the final evaluation, and before a stop's save where it cannot save that data
// (settle_for_save).
void TrainJob::settle() {
  if (!algo_->pending()) return;
  try {
    log_iteration(algo_->settle());
  } catch (const NonFiniteUpdate& e) {
    throw explain_nonfinite(e);
  }
}

// Before a stop's save: the pending data is trained on only where the algorithm cannot save it
// (Algorithm::saves_pending), so that a resumed run is the one that was not stopped.
void TrainJob::settle_for_save() {
  if (!algo_->saves_pending()) settle();
}

// The periodic checkpoint, then the evaluation. Both counters move on before the evaluation saves
// the resume state, so that a resume from it does not repeat them. A background evaluation's
// result is logged at the first boundary after it arrives (waited for at an evaluation point).
bool TrainJob::after_iteration(const Iteration& it) {
  if (job_.next_ckpt > 0 && it.env_steps >= job_.next_ckpt) {
    if (lead_) save_policy(run_dir_->step_checkpoint(it.env_steps));
    while (job_.next_ckpt <= it.env_steps) job_.next_ckpt += config_.run.checkpoint_every;
  }
  // The counter moves on at the last update too, where the final evaluation stands in for the
  // periodic one: a run resumed with a larger budget then evaluates on schedule, not at once.
  const bool collecting = algo_->env_steps() < config_.run.total_env_steps;
  const bool reached = job_.next_eval > 0 && it.env_steps >= job_.next_eval;
  if (reached)
    while (job_.next_eval <= it.env_steps) job_.next_eval += config_.run.eval_every;
  const bool due = reached && collecting;
  if (config_.run.stop_at_target && config_.run.target_measure == "train_mean") {
    // Only rank 0 sees the episodes; every rank must stop on the same update.
    if (comm_) {
      std::array<int64_t, 1> reached_at = {result_.train_target_env_steps.value_or(0)};
      comm_->all_reduce_max(reached_at, "the training mean's target");
      if (reached_at[0] != 0) result_.train_target_env_steps = reached_at[0];
    }
    if (stop_at_target()) return true;
  }
  if (collect_background_eval(due) && stop_at_target()) return true;
  if (!due) return false;
  // An async run drains its pipeline here even though its state could hold the pending rollout:
  // the rollout after the evaluation is then collected at lag 0, and the async configs learn
  // faster with it. Without these drains cartpole_novel_gpu_fast (async) needed 2.1-5.1M env
  // steps to its target instead of 2.1-2.6M with the actor's values, 2.10M against 1.99M with
  // the learner's (algo.async_anchor_values; docs/PERFORMANCE.md, "Saving at an evaluation").
  settle();
  if (background_) {
    start_background_eval();
    return false;
  }
  evaluate(config_.run.eval_episodes, false);
  return stop_at_target();
}

// run.stop_at_target, after an evaluation was logged: true once the target is reached. With
// evaluations beside training the run stops at the first update after the result arrived,
// later than the target's own env step.
bool TrainJob::stop_at_target() {
  const bool by_training = config_.run.target_measure == "train_mean";
  const auto& at = by_training ? result_.train_target_env_steps : result_.target_env_steps;
  if (!config_.run.stop_at_target || !at) return false;
  spdlog::info("run.stop_at_target: target reached at {} env steps ({}); stopping at {} env steps",
               *at, by_training ? "mean of the last training episodes" : "evaluation",
               algo_->env_steps());
  result_.stopped_at_target = true;
  return true;
}

// Ctrl-C or SIGTERM reach every rank through the launcher, but not on the same update: every
// rank stops at the same one.
bool TrainJob::stop_requested(int64_t env_steps) {
  bool stop = (options_.stop_requested && options_.stop_requested->load()) ||
              (options_.stop_at_env_steps > 0 && env_steps >= options_.stop_at_env_steps);
  if (comm_) {
    std::array<int64_t, 1> any = {stop ? 1 : 0};
    comm_->all_reduce_max(any, "the stop check");
    stop = any[0] != 0;
  }
  return stop;
}

// Updates until the budget, a stop request or the target (run.stop_at_target); then, unless
// interrupted, the final evaluation. Every way out waits for the evaluation beside training.
void TrainJob::train_loop() {
  rerun_pending_eval();
  while (!algo_->done()) {
    Iteration it;
    try {
      it = algo_->iterate([this](const EpisodeEnd& e) { on_episode(e); });
    } catch (const NonFiniteUpdate& e) {
      throw explain_nonfinite(e);
    }
    log_iteration(it);
    if (after_iteration(it)) break;
    if (stop_requested(it.env_steps) && !algo_->done()) {
      settle_for_save();
      collect_background_eval(true);
      save_latest();
      if (lead_)
        spdlog::warn("interrupted at {} env steps: checkpoint written to {}", algo_->env_steps(),
                     run_dir_->latest_checkpoint().string());
      result_.interrupted = true;
      return;
    }
  }
  settle();  // a stop at the target may come between evaluation points
  collect_background_eval(true);
  result_.final_eval = evaluate(config_.run.final_eval_episodes, true);
}

TrainJobResult TrainJob::run() {
  open_run_dir();
  if (resuming_) resume();
  check_ranks_at_start();
  if (run_complete()) {
    spdlog::info(
        "{} is complete ({} env steps, final evaluation written); nothing to do. Set a "
        "larger run.total_env_steps to train on",
        run_dir_->path().string(), algo_->env_steps());
    result_.already_complete = true;
  } else {
    job_.finished = false;  // a complete run given a larger budget goes on
    open_logs();
    try {
      train_loop();
    } catch (...) {
      finish_background_eval_on_error();
      throw;
    }
    if (lead_ && job_.eval_rows > 1)
      spdlog::info("training waited {:.2f} s for its periodic evaluations ({})", eval_wait_,
                   background_ ? "run beside it: run.eval_async" : "synchronous");
  }
  result_.env_steps = algo_->env_steps();
  result_.seconds = result_.already_complete ? job_.elapsed : elapsed_now();
  result_.segments = result_.already_complete ? job_.segments : segments_now();
  result_.all_reduce_seconds = algo_->all_reduce_seconds();
  if (comm_) {
    result_.rank = comm_->rank();
    result_.world_size = comm_->size();
    if (lead_)
      spdlog::info("data-parallel: {:.2f} s of {:.1f} s in the gradient all-reduces ({:.1f}%)",
                   result_.all_reduce_seconds, result_.seconds,
                   100.0 * result_.all_reduce_seconds / std::max(result_.seconds, 1e-9));
  }
  return result_;
}

}  // namespace

TrainJobResult run_train_job(const TrainConfig& config, const std::string& config_yaml,
                             const TrainJobOptions& options) {
  return TrainJob(config, config_yaml, options).run();
}

}  // namespace recur::agent
