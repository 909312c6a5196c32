#include "agent/training.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <memory>
#include <system_error>

#include "agent/config/yaml.h"
#include "agent/dist/communicator.h"
#include "agent/env_plugins.h"
#include "agent/policy_target.h"
#include "agent/record/background_sink.h"
#include "agent/record/minari_writer.h"
#include "agent/record/output_dir.h"
#include "agent/train_job.h"
#include "core/error.h"
#include "envs/registry.h"
#include "policy/devices.h"

namespace recur::agent {
namespace {

namespace fs = std::filesystem;

// The flag the SIGINT handler sets (a lock-free atomic store is async-signal-safe). The first
// SIGINT stops the run cleanly; the handler then gives the signal back to the default action, so
// a second one ends the process. A data-parallel rank handles SIGTERM the same way: mpirun turns
// a Ctrl-C into SIGTERM to every rank (then SIGKILL a few seconds later).
std::atomic<std::atomic<bool>*> g_sigint_flag{nullptr};
extern "C" void on_sigint(int signal) {
  if (std::atomic<bool>* flag = g_sigint_flag.load()) flag->store(true);
  std::signal(signal, SIG_DFL);
}

// Installs on_sigint for `signal` for the lifetime of the object and puts the previous handler
// back.
class SigintScope {
 public:
  explicit SigintScope(std::atomic<bool>* flag, int signal = SIGINT) : signal_(signal) {
    g_sigint_flag = flag;
    previous_ = std::signal(signal_, on_sigint);
  }
  ~SigintScope() {
    std::signal(signal_, previous_ == SIG_ERR ? SIG_DFL : previous_);
    g_sigint_flag = nullptr;
  }
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;

 private:
  int signal_;
  void (*previous_)(int) = SIG_DFL;
};

// A data-parallel rank's config: ranks on one host take consecutive GPUs from device.index (one
// GPU per rank: NCCL refuses two ranks on one device).
TrainConfig config_for_rank(const TrainConfig& config, const dist::Communicator& comm,
                            bool* cuda_learner) {
  TrainConfig c = config;
  const auto report = policy::query_devices();
  const bool actor_gpu =
      policy::resolve_device("device.actor", config.device.actor, report) == policy::Device::kCuda;
  *cuda_learner = policy::resolve_device("device.learner", config.device.learner, report) ==
                  policy::Device::kCuda;
  if (!actor_gpu && !*cuda_learner) return c;
  const int gpus = static_cast<int>(report.gpus.size());
  c.device.index = config.device.index + comm.local_rank();
  RECUR_CHECK(c.device.index < gpus,
              "{} ranks on this host take one GPU each from device.index = {}, but this host has "
              "{} GPU(s): start at most {} ranks per host (mpirun --map-by ppr:N:node), or put "
              "the roles on the CPU (device.actor / device.learner: cpu)",
              comm.local_size(), config.device.index, gpus,
              std::max(0, gpus - config.device.index));
  return c;
}

// options.plugins appended to config->env.plugin: absolute, each file once.
void add_plugins(const std::vector<std::string>& plugins, TrainConfig* config) {
  for (const auto& p : plugins) {
    RECUR_CHECK(!p.empty(), "an env plugin path is empty (--plugin PATH)");
    const std::string path = fs::absolute(p).lexically_normal().string();
    auto& list = config->env.plugin;
    if (std::find(list.begin(), list.end(), path) == list.end()) list.push_back(path);
  }
}

fs::path config_file_of(const fs::path& config_file, const TrainOptions& options) {
  if (options.resume_dir.empty()) {
    RECUR_CHECK(!config_file.empty(),
                "train needs a config file (e.g. configs/cartpole_novel.yaml) or a run "
                "directory to resume (recur train --resume RUN_DIR)");
    return config_file;
  }
  RECUR_CHECK(config_file.empty(),
              "train got both a config file ({}) and a run directory to resume ({}): a resumed "
              "run uses its own config.yaml (change it with overrides); give one",
              config_file.string(), options.resume_dir.string());
  return options.resume_dir / "config.yaml";
}

TrainResult run(const TrainConfig& config, const std::string& name, const TrainOptions& options) {
  TrainJobOptions job;
  job.name = !options.name.empty()      ? options.name
             : !config.run.name.empty() ? config.run.name
             : !name.empty()            ? name
                                        : "run";
  job.resume_dir = options.resume_dir;
  job.stop_at_env_steps = options.stop_at_env_steps;
  job.make_env = options.make_env;
  job.env_source = options.env_source;
  job.reward_threshold = options.reward_threshold;
  job.record_video = options.record_video;
  std::atomic<bool> own_stop{false};
  std::atomic<bool>* stop = options.stop_requested ? options.stop_requested : &own_stop;
  job.stop_requested = stop;
  std::unique_ptr<SigintScope> sigint, sigterm;
  if (options.handle_sigint) sigint = std::make_unique<SigintScope>(stop);
  // dist.backend: this process is one rank of a data-parallel job (agent/dist/).
  std::unique_ptr<dist::Communicator> comm = dist::make_communicator(config.dist);
  TrainConfig rank_config = config;
  if (comm && comm->size() > 1) {
    if (comm->rank() != 0) {
      // Rank 0 tells the story; the others speak up for warnings and errors only.
      spdlog::set_level(std::max(spdlog::get_level(), spdlog::level::warn));
    }
    spdlog::set_pattern(fmt::format("[%H:%M:%S.%e] [rank {}] [%^%l%$] %v", comm->rank()));
    if (options.handle_sigint) sigterm = std::make_unique<SigintScope>(stop, SIGTERM);
    bool cuda_learner = false;
    rank_config = config_for_rank(config, *comm, &cuda_learner);
    if (cuda_learner)
      comm = dist::with_device_path(std::move(comm), rank_config.device.index, config.dist);
    job.comm = comm.get();
  }
  TrainJobResult r;
  try {
    // The config the ranks compare is the one the user gave (device.index is the first GPU).
    r = run_train_job(rank_config, to_yaml(config), job);
  } catch (const std::exception& e) {
    if (!comm || comm->size() <= 1) throw;
    // The other ranks may be waiting in a collective for this one: end them all now, with this
    // rank's reason on record. Exit status 2 as for any recur::Error (3 for anything else).
    spdlog::error("rank {} of {} failed: {}; ending the job", comm->rank(), comm->size(), e.what());
    comm->abort(dynamic_cast<const Error*>(&e) != nullptr ? 2 : 3);
  }
  TrainResult result;
  static_cast<TrainJobResult&>(result) = std::move(r);
  result.config = config;
  return result;
}

// The policy a target names, with its env's plugins loaded: `plugins` when given, else the ones
// its checkpoint recorded (checked unchanged).
PolicyTarget open_target(const std::string& target, const std::string& env_id,
                         const std::vector<std::string>& plugins) {
  PolicyTarget t = load_policy_target(target, env_id);
  if (!plugins.empty()) {
    load_env_plugins(plugins);
  } else {
    const auto& meta = t.checkpoint.metadata;
    if (const auto it = meta.find(kMetaEnvPlugins); it != meta.end())
      load_recorded_plugins(it->second, t.path.string());
  }
  RECUR_CHECK(!t.env_id.empty(), "{} does not record its env; pass an env id", t.path.string());
  return t;
}

policy::Placement placement_on(policy::Device device) {
  policy::Placement p;
  p.device = device;
  return p;
}

void check_schedule(const record::VideoSchedule& schedule, int episodes) {
  for (const int e : schedule.episodes)
    RECUR_CHECK(e >= 0 && e < episodes,
                "video episode {} is not recorded: there are {} episodes (0..{})", e, episodes,
                episodes - 1);
}

void make_video_dir(const std::string& dir) {
  record::prepare_output_dir(dir, "video directory");
}

}  // namespace

TrainConfig resolve_train_config(const fs::path& config_file, const TrainOptions& options) {
  TrainConfig config = load_config(config_file_of(config_file, options), options.overrides);
  add_plugins(options.plugins, &config);
  return config;
}

TrainResult train(const fs::path& config_file, const TrainOptions& options) {
  const fs::path file = config_file_of(config_file, options);
  TrainConfig config = load_config(file, options.overrides);
  add_plugins(options.plugins, &config);
  return run(config, file.stem().string(), options);
}

TrainResult train(const TrainConfig& config, const TrainOptions& options) {
  RECUR_CHECK(options.overrides.empty(),
              "train(TrainConfig): overrides ({} given) apply to a config file; set the "
              "TrainConfig's fields instead",
              options.overrides.size());
  TrainConfig c = config;
  add_plugins(options.plugins, &c);
  validate(c);
  return run(c, "", options);
}

EvaluateResult evaluate(const std::string& target, const EvaluateOptions& options) {
  if (options.make_env) {
    // Envs from outside the registry: the policy's own env is not needed, nor its plugins.
    return evaluate(load_policy_target(target, "", /*foreign_env_ok=*/true), options);
  }
  return evaluate(open_target(target, options.env_id, options.plugins), options);
}

EvaluateResult evaluate(const PolicyTarget& t, const EvaluateOptions& options) {
  EvalConfig cfg;
  cfg.env_id = t.env_id;
  cfg.env_options = layered(t.env_options, options.env_options);
  cfg.episodes = options.episodes;
  cfg.num_envs = options.num_envs;
  cfg.threads = options.threads;
  cfg.seed = options.seed;
  cfg.deterministic = options.deterministic;
  cfg.placement = placement_on(options.device);
  std::unique_ptr<envs::BatchEnv> outside;
  if (options.make_env) {
    RECUR_CHECK(options.video_dir.empty(),
                "evaluate: videos of envs from make_env are not made here; film them with "
                "record::film_episode (agent/record/film.h)");
    RECUR_CHECK(options.env_options.values.empty(),
                "evaluate: env options ({}) apply to recur's registered envs; configure the "
                "envs make_env builds instead",
                options.env_options.values.size());
    outside = options.make_env(options.num_envs);
    RECUR_CHECK(outside != nullptr, "evaluate: make_env built no envs");
    cfg.env_id = outside->id();
  }
  // The filming recorder first: a video directory that cannot be written fails before the
  // evaluation runs.
  std::unique_ptr<record::Recorder> recorder;
  if (!options.video_dir.empty()) {
    record::RecordConfig rc;
    rc.env_id = cfg.env_id;
    rc.env_options = cfg.env_options;
    rc.episodes = options.episodes;
    rc.seed = options.seed;
    rc.deterministic = options.deterministic;
    rc.placement = cfg.placement;
    rc.policy_name = t.path.string();
    rc.video_dir = options.video_dir;
    rc.video = options.video;
    rc.name_prefix = options.name_prefix;
    recorder = std::make_unique<record::Recorder>(rc, t.checkpoint.spec, t.checkpoint.tensors);
    check_schedule(options.video, options.episodes);
    make_video_dir(options.video_dir);
  }
  EvaluateResult result;
  result.checkpoint = t.path;
  result.env_id = cfg.env_id;
  result.eval = outside ? evaluate_policy(t.checkpoint.spec, t.checkpoint.tensors, cfg, *outside)
                        : evaluate_policy(t.checkpoint.spec, t.checkpoint.tensors, cfg);
  if (recorder) {
    try {
      for (int i = 0; i < options.episodes; ++i) {
        if (!options.video.films(i)) continue;
        result.videos.push_back(recorder->video_path(i));
        recorder->record_episode(i, result.videos.back());
      }
    } catch (...) {
      std::error_code ec;
      for (const auto& v : result.videos) fs::remove(v, ec);
      throw;
    }
  }
  return result;
}

RecordResult record_dataset(const std::string& target, const RecordOptions& options) {
  const OutsideEnv& outside = options.outside_env;
  // Every check before anything is written.
  RECUR_CHECK(options.episodes >= 1, "record {} episodes: record at least 1", options.episodes);
  RECUR_CHECK(!target.empty() || !options.env_id.empty() || outside.make,
              "recording the random policy (no target) needs an env id");
  RECUR_CHECK(!outside.make || (options.env_id.empty() && options.env_options.values.empty() &&
                                options.plugins.empty()),
              "record: outside_env gives the env; env_id, env options and plugins are for "
              "registered envs");
  RECUR_CHECK(options.write_minari || options.write_d4rl,
              "record: write_minari and write_d4rl are both false; nothing would be written");
  record::check_dataset_id(options.dataset_id);
  check_schedule(options.video_dir.empty() ? record::VideoSchedule{} : options.video,
                 options.episodes);

  record::RecordConfig rc;
  rc.episodes = options.episodes;
  rc.seed = options.seed;
  rc.deterministic = options.deterministic;
  rc.record_state = options.record_state;
  rc.video_dir = options.video_dir;
  if (!options.video_dir.empty()) rc.video = options.video;
  rc.name_prefix = options.name_prefix;
  std::unique_ptr<record::Recorder> recorder;
  // The env: outside_env's, else the registry's (made by the Recorder).
  auto outside_env = [&]() -> std::unique_ptr<envs::Env> {
    std::unique_ptr<envs::Env> env = outside.make();
    RECUR_CHECK(env != nullptr, "record: outside_env.make built no env");
    rc.env_id = env->id();
    return env;
  };
  if (target.empty()) {
    rc.policy_name = "the random policy";
    if (outside.make) {
      recorder = std::make_unique<record::Recorder>(rc, outside_env());
    } else {
      if (!options.plugins.empty()) load_env_plugins(options.plugins);
      rc.env_id = options.env_id;
      rc.env_options = options.env_options;
      recorder = std::make_unique<record::Recorder>(rc);
    }
  } else {
    rc.placement = placement_on(options.device);
    if (outside.make) {
      const PolicyTarget t = load_policy_target(target, "", /*foreign_env_ok=*/true);
      rc.policy_name = t.path.string();
      recorder = std::make_unique<record::Recorder>(rc, outside_env(), t.checkpoint.spec,
                                                    t.checkpoint.tensors);
    } else {
      const PolicyTarget t = open_target(target, options.env_id, options.plugins);
      rc.env_id = t.env_id;
      rc.env_options = layered(t.env_options, options.env_options);
      rc.policy_name = t.path.string();
      recorder = std::make_unique<record::Recorder>(rc, t.checkpoint.spec, t.checkpoint.tensors);
    }
  }
  const envs::Env& env = recorder->env();

  record::DatasetInfo info;
  info.dataset_id = options.dataset_id;
  info.env_id = outside.make ? outside.name : env.id();
  info.observation_space = env.observation_space();
  info.action_space = env.action_space();
  if (outside.make) {
    info.max_episode_steps = outside.max_episode_steps;
    info.reward_threshold = outside.reward_threshold;
    info.env_spec_json = outside.env_spec_json;
  } else {
    info.max_episode_steps = env.max_episode_steps();
    info.reward_threshold = envs::registry().at(env.id()).reward_threshold;
    info.env_entry_point = record::gymnasium_entry_point(env.id());
    // recur's own built-in envs: the recur Python package's Gymnasium registration (a plugin's
    // env needs its plugin loaded first, which an env_spec cannot say: none then).
    if (info.env_entry_point.empty() && envs::registry().at(env.id()).source.empty())
      info.env_spec_json = record::recur_env_spec_json(info, rc.env_options.values);
  }
  info.algorithm_name = recorder->algorithm_name();
  info.description =
      !options.description.empty()
          ? options.description
          : fmt::format("{} episodes of {} on {}{} recorded by recur ({}, seed {})",
                        options.episodes, rc.policy_name, info.env_id,
                        outside.kind.empty() ? "" : " (" + outside.kind + ")",
                        target.empty() ? "uniform actions"
                                       : (rc.deterministic ? "deterministic" : "stochastic"),
                        options.seed);
  info.author = "recur";
  info.recur_policy_json = recorder->policy_json();
  info.overwrite = options.overwrite;
  info.write_minari = options.write_minari;
  info.write_d4rl = options.write_d4rl;
  const std::string root = options.out.empty() ? record::default_datasets_root() : options.out;

  // From here on files appear: on any failure, what this call created goes again (the writer
  // removes its temporary dataset, this the videos and the directories it made).
  const fs::path made_root = record::first_missing(fs::path(root) / options.dataset_id);
  const fs::path made_video =
      options.video_dir.empty() ? fs::path() : record::first_missing(options.video_dir);
  RecordResult result;
  result.env_id = env.id();
  std::unique_ptr<record::MinariWriter> writer;
  try {
    if (!options.video_dir.empty()) make_video_dir(options.video_dir);
    writer = std::make_unique<record::MinariWriter>(root, info);  // refuses an existing id
    {
      // HDF5 writes on their own thread, overlapping the next episode's recording.
      record::BackgroundSink sink([&](const record::Episode& e) { writer->add(e); });
      result.summary = recorder->run([&](const record::Episode& e) { sink.push(e); });
      sink.finish();
    }
    result.dataset = writer->commit();
  } catch (...) {
    std::error_code ec;
    for (const auto& v : result.summary.videos) fs::remove(v, ec);
    writer.reset();  // removes its temporary dataset directory
    record::remove_if_only_directories(made_root);
    record::remove_if_only_directories(made_video);
    throw;
  }
  if (options.write_d4rl) result.d4rl = writer->dataset_dir() / "d4rl.hdf5";
  return result;
}

}  // namespace recur::agent
