#include "envs/vector_env.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "envs/registry.h"

namespace recur::envs {
namespace {
std::vector<std::unique_ptr<Env>> make_envs(const std::string& id, int num_envs,
                                            const Options& options) {
  RECUR_CHECK(num_envs >= 1, "num_envs = {}; a VectorEnv needs at least 1 env", num_envs);
  std::vector<std::unique_ptr<Env>> envs;
  envs.reserve(static_cast<size_t>(num_envs));
  for (int i = 0; i < num_envs; ++i) envs.push_back(make(id, options));
  return envs;
}
}  // namespace

VectorEnv::VectorEnv(const std::string& id, int num_envs, const Options& options, int num_threads)
    : VectorEnv(make_envs(id, num_envs, options), num_threads) {}

VectorEnv::VectorEnv(std::vector<std::unique_ptr<Env>> envs, int num_threads)
    : envs_(std::move(envs)) {
  RECUR_CHECK_ARG(!envs_.empty(), "VectorEnv needs at least one env");
  RECUR_CHECK(num_threads >= 1, "num_threads = {}; use 1 or more", num_threads);
  obs_dim_ = envs_[0]->obs_dim();
  action_dim_ = envs_[0]->action_dim();
  for (const auto& e : envs_) {
    RECUR_CHECK_ARG(e->observation_space().to_string() == single_observation_space().to_string() &&
                        e->action_space().to_string() == single_action_space().to_string(),
                    "VectorEnv: {} has other spaces than {}", e->id(), id());
  }
  const auto n = envs_.size();
  obs_.assign(n * static_cast<size_t>(obs_dim_), 0.0f);
  final_obs_.assign(n * static_cast<size_t>(obs_dim_), 0.0f);
  rewards_.assign(n, 0.0f);
  terminated_.assign(n, 0);
  truncated_.assign(n, 0);
  episode_start_.assign(n, 1);
  final_return_.assign(n, 0.0);
  final_length_.assign(n, 0);

  const int threads = std::min(num_threads, num_envs());
  if (threads > 1) {
    pool_ = std::make_unique<WorkerPool>(threads);
    chunk_task_ = [this](int chunk) {
      const int64_t n_envs = num_envs();
      advance_range(static_cast<int>(chunk * n_envs / num_chunks_),
                    static_cast<int>((chunk + 1) * n_envs / num_chunks_), pending_actions_);
    };
    set_schedule(Schedule::kDynamic);
  }
  range_task_ = [this](int chunk) {
    const int64_t len = range_end_ - range_begin_;
    advance_range(range_begin_ + static_cast<int>(chunk * len / range_chunks_),
                  range_begin_ + static_cast<int>((chunk + 1) * len / range_chunks_),
                  pending_actions_);
  };
}

void VectorEnv::set_schedule(Schedule schedule, int chunks_per_thread) {
  RECUR_CHECK_ARG(chunks_per_thread >= 1, "VectorEnv: chunks_per_thread = {}; use 1 or more",
                  chunks_per_thread);
  schedule_ = schedule;
  const int threads = num_threads();
  const int64_t chunks =
      schedule == Schedule::kStatic ? threads : static_cast<int64_t>(threads) * chunks_per_thread;
  num_chunks_ = pool_ ? static_cast<int>(std::min<int64_t>(
                            {chunks, num_envs(), static_cast<int64_t>(WorkerPool::kMaxChunks)}))
                      : 1;
}

VectorEnv::~VectorEnv() {
  // The workers must not outlive a range they are stepping (its errors no longer matter).
  if (stepping_) try {
      finish_step();
    } catch (...) {
    }
}

void VectorEnv::reset(uint64_t seed, int first_index) {
  RECUR_CHECK(!stepping_, "VectorEnv({}): reset() while a start_step_range is not finished", id());
  for (int i = 0; i < num_envs(); ++i) {
    const auto obs = envs_[static_cast<size_t>(i)]->reset(
        derive_seed(seed, static_cast<uint64_t>(first_index) + static_cast<uint64_t>(i)));
    std::copy(obs.begin(), obs.end(), obs_.begin() + i * obs_dim_);
  }
  std::fill(rewards_.begin(), rewards_.end(), 0.0f);
  std::fill(terminated_.begin(), terminated_.end(), 0);
  std::fill(truncated_.begin(), truncated_.end(), 0);
  std::fill(episode_start_.begin(), episode_start_.end(), 1);
  reset_called_ = true;
}

void VectorEnv::decorrelate(int max_steps, uint64_t seed, int first_index) {
  RECUR_CHECK(reset_called_ && !stepping_,
              "VectorEnv({}): decorrelate() needs a reset() first and no step in flight", id());
  RECUR_CHECK_ARG(max_steps >= 0, "VectorEnv({}): decorrelate({}) needs max_steps >= 0", id(),
                  max_steps);
  // Once, before training: the action buffers are allocated per env here.
  auto one = [&](int i) {
    Env& e = *envs_[static_cast<size_t>(i)];
    Rng rng(derive_seed(seed, static_cast<uint64_t>(first_index) + static_cast<uint64_t>(i)));
    const auto steps = rng.uniform_int(static_cast<uint64_t>(max_steps) + 1);
    std::vector<float> action(static_cast<size_t>(action_dim_));
    for (uint64_t s = 0; s < steps; ++s) {
      e.action_space().sample(rng, action);
      if (e.advance(action).done()) e.reset();  // the env's RNG continues, as in step()
    }
    const auto obs = e.observation();
    std::copy(obs.begin(), obs.end(), obs_.begin() + static_cast<ptrdiff_t>(i) * obs_dim_);
    episode_start_[static_cast<size_t>(i)] = e.episode_start() ? 1 : 0;
  };
  if (pool_) {
    pool_->run(num_envs(), one);
  } else {
    for (int i = 0; i < num_envs(); ++i) one(i);
  }
}

VectorEnv::Snapshot VectorEnv::snapshot() const {
  RECUR_CHECK(!stepping_, "VectorEnv({}): snapshot() while a start_step_range is not finished",
              id());
  Snapshot s;
  for (const auto& e : envs_) s.envs.push_back(e->snapshot());
  s.episode_start = episode_start_;
  return s;
}

int VectorEnv::restore(const Snapshot& s) {
  RECUR_CHECK(!stepping_, "VectorEnv({}): restore() while a start_step_range is not finished",
              id());
  RECUR_CHECK_ARG(s.envs.size() == envs_.size() && s.episode_start.size() == envs_.size(),
                  "VectorEnv({}): snapshot of {} envs, this has {}", id(), s.envs.size(),
                  envs_.size());
  episode_start_ = s.episode_start;
  int restarted = 0;
  for (size_t i = 0; i < envs_.size(); ++i) {
    if (envs_[i]->restore(s.envs[i])) {
      episode_start_[i] = 1;
      ++restarted;
    }
    const auto obs = envs_[i]->observation();
    std::copy(obs.begin(), obs.end(), obs_.begin() + static_cast<long>(i) * obs_dim_);
  }
  reset_called_ = true;
  return restarted;
}

void VectorEnv::step(std::span<const float> actions) {
  RECUR_CHECK(!stepping_, "VectorEnv({}): step() while a start_step_range is not finished", id());
  // Validate every row first, so a bad action leaves all envs untouched.
  validate_range(0, num_envs(), actions);
  if (!pool_) {
    advance_range(0, num_envs(), actions);
    return;
  }
  pending_actions_ = actions;
  pool_->run(num_chunks_, chunk_task_);
}

void VectorEnv::step_range(int begin, int end, std::span<const float> actions) {
  RECUR_CHECK_ARG(begin >= 0 && begin <= end && end <= num_envs(),
                  "VectorEnv({}): step_range [{}, {}) outside [0, {})", id(), begin, end,
                  num_envs());
  validate_range(begin, end, actions);
  advance_range(begin, end, actions);
}

void VectorEnv::start_step_range(int begin, int end, std::span<const float> actions) {
  RECUR_CHECK(!stepping_, "VectorEnv({}): start_step_range while another is not finished", id());
  RECUR_CHECK_ARG(begin >= 0 && begin <= end && end <= num_envs(),
                  "VectorEnv({}): start_step_range [{}, {}) outside [0, {})", id(), begin, end,
                  num_envs());
  validate_range(begin, end, actions);
  pending_actions_ = actions;
  range_begin_ = begin;
  range_end_ = end;
  stepping_ = true;
  if (!pool_) return;  // finish_step() steps them
  // The range's share of one step's chunks, each cut kRangeChunksPerChunk times finer (1 to
  // one env per chunk).
  const int64_t n = num_envs();
  range_chunks_ = static_cast<int>(
      std::clamp<int64_t>(int64_t{kRangeChunksPerChunk} * num_chunks_ * (end - begin) / n, 1,
                          std::max(end - begin, 1)));
  pool_->start(range_chunks_, range_task_);
}

void VectorEnv::finish_step() {
  if (!stepping_) return;
  stepping_ = false;
  if (!pool_) return advance_range(range_begin_, range_end_, pending_actions_);
  pool_->finish();
}

void VectorEnv::validate_range(int begin, int end, std::span<const float> actions) const {
  RECUR_CHECK_ARG(actions.size() == static_cast<size_t>(num_envs()) * action_dim_,
                  "VectorEnv({}): actions hold {} floats; expected num_envs {} x action_dim {}",
                  id(), actions.size(), num_envs(), action_dim_);
  if (!reset_called_)
    throw std::logic_error("VectorEnv(" + id() + "): call reset(seed) before step()");
  // Fast pass over the flat batch with the shared action space (all envs have the same one);
  // only a failing row pays for the per-env check that builds the message.
  const Space& space = single_action_space();
  const auto first = static_cast<size_t>(begin) * action_dim_;
  const auto last = static_cast<size_t>(end) * action_dim_;
  bool ok = true;
  if (space.is_discrete()) {
    const auto n = static_cast<float>(space.n());
    for (size_t k = first; k < last; ++k) {
      const float a = actions[k];
      ok &= a >= 0.0f && a < n && a == static_cast<float>(static_cast<int32_t>(a));
    }
  } else {
    for (size_t k = first; k < last; ++k) ok &= std::isfinite(actions[k]);
  }
  if (ok) [[likely]]
    return;
  for (int i = begin; i < end; ++i) {
    try {
      envs_[static_cast<size_t>(i)]->validate_action(
          actions.subspan(static_cast<size_t>(i) * action_dim_, action_dim_));
    } catch (const std::invalid_argument& err) {
      throw std::invalid_argument(fmt::format("env index {}: {}", i, err.what()));
    }
  }
  RECUR_ASSERT(false);  // the fast pass and validate_action disagree
}

void VectorEnv::advance_range(int begin, int end, std::span<const float> actions) {
  for (int i = begin; i < end; ++i) {
    Env& e = *envs_[static_cast<size_t>(i)];
    const StepResult r =
        e.advance(actions.subspan(static_cast<size_t>(i) * action_dim_, action_dim_));
    rewards_[i] = static_cast<float>(r.reward);
    terminated_[i] = r.terminated;
    truncated_[i] = r.truncated;
    episode_start_[i] = r.done();
    float* row = obs_.data() + static_cast<size_t>(i) * obs_dim_;
    if (r.done()) {
      std::copy(r.obs.begin(), r.obs.end(), final_obs_.begin() + i * obs_dim_);
      final_return_[i] = e.episode_return();
      final_length_[i] = e.elapsed_steps();
      const auto first = e.reset();  // the env's RNG continues: no reseed
      std::copy(first.begin(), first.end(), row);
    } else {
      std::copy(r.obs.begin(), r.obs.end(), row);
    }
  }
}

}  // namespace recur::envs
