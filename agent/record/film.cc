#include "agent/record/film.h"

#include <memory>
#include <optional>
#include <vector>

#include "agent/record/recorder.h"
#include "agent/record/video_writer.h"
#include "core/error.h"
#include "core/rng.h"
#include "envs/render/renderer.h"
#include "policy/policy_actor.h"

namespace recur::agent::record {
namespace {

constexpr uint64_t kActionStream = 77;  // Rng(derive_seed(seed, 77)), as the evaluator's

// One envs::Env as a batch of one without autoreset: reset(seed) resets it with derive_seed(seed,
// 0) (as VectorEnv resets its env 0), and after the step that ends an episode obs() is that
// episode's last observation and the env shows its final state. Enough for one episode.
class OneEnvBatch final : public envs::BatchEnv {
 public:
  explicit OneEnvBatch(envs::Env& env) : env_(env), id_(env.id()) {
    obs_.assign(static_cast<size_t>(env.obs_dim()), 0.0f);
  }
  int num_envs() const override { return 1; }
  const envs::Space& single_observation_space() const override { return env_.observation_space(); }
  const envs::Space& single_action_space() const override { return env_.action_space(); }
  const std::string& id() const override { return id_; }
  void reset(uint64_t seed) override {
    const std::span<const float> o = env_.reset(derive_seed(seed, 0));
    obs_.assign(o.begin(), o.end());
    reward_[0] = 0;
    terminated_[0] = truncated_[0] = 0;
    start_[0] = 1;
    return_[0] = 0;
    length_[0] = 0;
  }
  void step(std::span<const float> actions) override {
    const envs::StepResult r = env_.step(actions);
    obs_.assign(r.obs.begin(), r.obs.end());
    reward_[0] = static_cast<float>(r.reward);
    terminated_[0] = r.terminated ? 1 : 0;
    truncated_[0] = r.truncated ? 1 : 0;
    start_[0] = r.done() ? 1 : 0;
    return_[0] += r.reward;
    length_[0] += 1;
  }
  std::span<const float> obs() const override { return obs_; }
  std::span<const float> rewards() const override { return reward_; }
  std::span<const uint8_t> terminated() const override { return terminated_; }
  std::span<const uint8_t> truncated() const override { return truncated_; }
  std::span<const uint8_t> episode_start() const override { return start_; }
  std::span<const float> final_obs() const override { return obs_; }
  std::span<const double> final_return() const override { return return_; }
  std::span<const int> final_length() const override { return length_; }

 private:
  envs::Env& env_;
  std::string id_;
  std::vector<float> obs_;
  float reward_[1] = {0};
  uint8_t terminated_[1] = {0}, truncated_[1] = {0}, start_[1] = {1};
  double return_[1] = {0};
  int length_[1] = {0};
};

}  // namespace

double film_episode(envs::BatchEnv& env, const FrameSource& frame, int fps,
                    const policy::PolicySpec& spec, const policy::TensorMap& tensors, uint64_t seed,
                    bool deterministic, const std::string& path,
                    const policy::Placement& placement) {
  RECUR_CHECK_ARG(env.num_envs() == 1, "film_episode: a batch of one env, got {}", env.num_envs());
  check_policy_fits(spec, "the policy", env.id(), env.single_observation_space(),
                    env.single_action_space());
  policy::PolicyActor actor(spec, 1, placement);
  actor.load(tensors);
  Rng rng(derive_seed(seed, kActionStream));
  const int width = spec.action_width();
  std::vector<float> action(static_cast<size_t>(width)), log_prob(1), value(1);
  std::vector<uint8_t> start(1, 1);
  env.reset(seed);
  // The writer takes its size from the first frame (the env's, which the caller may not know).
  std::optional<VideoWriter> video;
  auto write = [&] {
    const envs::render::Frame& f = frame();
    if (!video) video.emplace(path, f.width, f.height, fps);
    video->write(f);
  };
  write();
  double total = 0;
  for (;;) {
    actor.act(env.obs(), start, rng, deterministic, action, log_prob, value);
    start[0] = 0;
    env.step(action);
    total += env.rewards()[0];
    write();
    if (env.terminated()[0] || env.truncated()[0]) break;
  }
  video->close();
  return total;
}

double film_episode(envs::Env& env, const policy::PolicySpec& spec,
                    const policy::TensorMap& tensors, uint64_t seed, bool deterministic,
                    const std::string& path, const policy::Placement& placement) {
  RECUR_CHECK(env.render_info().renders(),
              "env {} does not render, so it cannot be filmed (drop --video)", env.id());
  envs::render::Renderer renderer(env);
  OneEnvBatch batch(env);
  return film_episode(
      batch, [&]() -> const envs::render::Frame& { return renderer.render(env); },
      renderer.info().fps, spec, tensors, seed, deterministic, path, placement);
}

}  // namespace recur::agent::record
