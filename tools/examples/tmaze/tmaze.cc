// The T-maze (B. Bakker, "Reinforcement Learning with Long Short-Term Memory", NIPS 2001) as an
// env plugin: the example of README.md, "Your own environment", and the smallest task that a
// policy without memory cannot solve. Built by the 5-line CMakeLists.txt beside it; loaded with
// `recur ... --plugin libtmaze_plugin.so` or `env.plugin:` in a config (docs/ARCHITECTURE.md,
// "Users' envs", says how a plugin is loaded and checked).
//
//        N            The agent starts at the west end of a corridor of `length` cells and walks
//   S0 C C C ... J    east to the junction J, where it turns north or south into an arm; the arm
//        S            ends the episode. Only the start cell S0 says which arm pays.
//
//   obs     Box(0, 1, (3,)): start cell [0,1,1] (goal north) or [1,1,0] (goal south); corridor
//           [1,0,1]; junction [0,1,0]; an arm (after the last step only) [0,0,0]. The cue shows
//           whenever the agent stands on the start cell, as the cell's own pattern.
//   action  Discrete(4): 0 north, 1 east, 2 south, 3 west (Bakker's four; a smaller set would
//           spare the agent the walls but hide the exploration problem the task is known for).
//           A move into a wall leaves the agent where it is.
//   reward  +4 in the goal arm, -0.1 in the other (both terminal); `step_penalty` on every other
//           step (0 by default, as Bakker; a negative value makes dawdling cost).
//   ends    terminated in an arm; truncated by the time limit, 4 * length + 8 steps as registered.
//           The limit is the registry's (it is set after the factory runs), so a `length` option
//           needs a matching `max_episode_steps` option: at least length + 1, the shortest path.
//
// At the junction the observation is the same whatever the cue, so a policy that sees only the
// current observation turns the same way after either cue: it reaches the goal arm in exactly
// half the episodes (mean return at most 0.5 * 4 + 0.5 * -0.1 = 1.95). A policy that remembers
// the cue gets 4 every time.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/options.h"
#include "envs/plugin.h"
#include "envs/render/canvas.h"

namespace {

using recur::Rng;
using recur::envs::Env;
using recur::envs::RenderInfo;
using recur::envs::Space;
namespace render = recur::envs::render;

constexpr int kNorth = 0, kEast = 1, kSouth = 2, kWest = 3;
constexpr double kGoalReward = 4.0;
constexpr double kWrongArmReward = -0.1;

struct TMazeConfig {
  int length = 8;             // corridor cells from the start to the junction (>= 1)
  double step_penalty = 0.0;  // reward of every step that does not enter an arm

  static TMazeConfig read(recur::OptionReader& options, TMazeConfig defaults) {
    TMazeConfig c = defaults;
    c.length = static_cast<int>(options.get_int("length", c.length));
    c.step_penalty = options.get_double("step_penalty", c.step_penalty);
    RECUR_CHECK(c.length >= 1 && c.length <= 10000, "TMaze: length = {}; use 1..10000", c.length);
    RECUR_CHECK(std::isfinite(c.step_penalty) && c.step_penalty <= 0,
                "TMaze: step_penalty = {}; use a value <= 0 (0 = none)", c.step_penalty);
    return c;
  }
};

// Text formatted into a stack buffer (rendering allocates nothing), centred at a y-up pixel.
template <typename... Args>
void draw_text(render::Canvas& canvas, render::Vec2 at, double size,
               fmt::format_string<Args...> format, Args&&... args) {
  char buffer[128];
  const auto out = fmt::format_to_n(buffer, sizeof(buffer), format, std::forward<Args>(args)...);
  canvas.text(at, {buffer, std::min(out.size, sizeof(buffer))}, size, render::kBlack,
              render::TextAlign::kCenter);
}

// The time limit registered for a corridor: enough to wander, short enough to end lost episodes.
constexpr int time_limit(int length) {
  return 4 * length + 8;
}

class TMaze final : public Env {
 public:
  explicit TMaze(const TMazeConfig& config)
      : Env(Space::box(0.0f, 1.0f, {3}), Space::discrete(4)), config_(config) {}

  // State: x (0 start .. length junction), arm (0 corridor, +1 north, -1 south), goal (+1 north,
  // -1 south). Three numbers restore an episode exactly.
  int state_size() const override { return 3; }
  void get_state(std::span<double> out) const override {
    out[0] = x_;
    out[1] = arm_;
    out[2] = goal_;
  }

  // The maze from above, 600x300 at 4 fps: a picture for `recur render` and videos.
  RenderInfo render_info() const override { return {600, 300, 4}; }
  void draw(render::Canvas& canvas) const override;

 private:
  void reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) override {
    x_ = 0;
    arm_ = 0;
    goal_ = rng.uniform_int(2) == 0 ? +1 : -1;  // the cue: a fair coin from the env's RNG
  }

  Outcome step_impl(std::span<const float> action) override {
    const int a = static_cast<int>(action[0]);  // checked in [0, 4) by Env::step
    if (x_ == config_.length && (a == kNorth || a == kSouth)) {
      arm_ = a == kNorth ? +1 : -1;
      return {arm_ == goal_ ? kGoalReward : kWrongArmReward, true};
    }
    if (a == kEast) x_ = std::min(x_ + 1, config_.length);
    if (a == kWest) x_ = std::max(x_ - 1, 0);
    return {config_.step_penalty, false};
  }

  void observe(std::span<float> obs) const override {
    const auto put = [&](float a, float b, float c) {
      obs[0] = a;
      obs[1] = b;
      obs[2] = c;
    };
    if (arm_ != 0) return put(0, 0, 0);
    if (x_ == 0) return goal_ > 0 ? put(0, 1, 1) : put(1, 1, 0);
    if (x_ == config_.length) return put(0, 1, 0);
    put(1, 0, 1);
  }

  void set_state_impl(std::span<const double> state) override {
    const auto whole = [](double v, double lo, double hi) {
      return v >= lo && v <= hi && v == std::floor(v);
    };
    RECUR_CHECK_ARG(whole(state[0], 0, config_.length), "TMaze: x = {} outside [0, {}]", state[0],
                    config_.length);
    RECUR_CHECK_ARG(whole(state[1], -1, 1), "TMaze: arm = {}; use -1, 0 or 1", state[1]);
    RECUR_CHECK_ARG(state[2] == 1 || state[2] == -1, "TMaze: goal = {}; use 1 or -1", state[2]);
    RECUR_CHECK_ARG(state[1] == 0 || state[0] == config_.length,
                    "TMaze: an arm is entered only from the junction (x = {}), not x = {}",
                    config_.length, state[0]);
    x_ = static_cast<int>(state[0]);
    arm_ = static_cast<int>(state[1]);
    goal_ = static_cast<int>(state[2]);
  }

  TMazeConfig config_;
  int x_ = 0;     // cells east of the start
  int arm_ = 0;   // 0 in the corridor, +1 / -1 once in the north / south arm
  int goal_ = 1;  // the arm that pays: +1 north, -1 south
};

void TMaze::draw(render::Canvas& canvas) const {
  // World units are cells: cell (i, j) spans [i, i + 1] x [j, j + 1], the corridor is row 0, the
  // arms are (length, +1) and (length, -1). Long corridors shrink the cells to fit 560 px.
  const int n = config_.length;
  const double cell = std::min(80.0, 560.0 / (n + 1));
  canvas.set_transform(cell, {300 - cell * (n + 1) / 2, 150 - cell / 2});
  const auto box = [](double i, double j) {
    return std::array<render::Vec2, 4>{{{i, j}, {i, j + 1}, {i + 1, j + 1}, {i + 1, j}}};
  };
  const render::Color floor{235, 235, 225}, wall{60, 60, 60};
  const render::Color good{120, 200, 120}, bad{220, 130, 120}, cue{250, 210, 90};
  for (int i = 0; i <= n; ++i) canvas.fill_polygon(box(i, 0), i == 0 ? cue : floor);
  canvas.fill_polygon(box(n, 1), goal_ > 0 ? good : bad);
  canvas.fill_polygon(box(n, -1), goal_ < 0 ? good : bad);
  for (int i = 0; i <= n; ++i) canvas.stroke_polygon(box(i, 0), wall, 1);
  canvas.stroke_polygon(box(n, 1), wall, 2);
  canvas.stroke_polygon(box(n, -1), wall, 2);

  // The agent: a dark disc in its cell.
  const double ax = (arm_ != 0 ? n : x_) + 0.5, ay = arm_ + 0.5;
  canvas.fill_circle({ax, ay}, 0.3, {40, 70, 160});

  // Captions in pixels (identity transform).
  canvas.set_transform(1.0);
  draw_text(canvas, {300, 280}, 18, "T-maze, length {}: step {}, the cue says {}", n,
            elapsed_steps(), goal_ > 0 ? "north" : "south");
  draw_text(canvas, {300, 20}, 14,
            "green arm +4, red arm -0.1; the cue (yellow) shows at the start");
}

}  // namespace

// TMaze-v0 learns in seconds (the CI job, configs/tmaze.yaml); TMazeLong-v0 spans 32 steps
// between the cue and the turn, a test of memory length rather than of exploration.
RECUR_ENV_PLUGIN("tmaze", "1.0", registrar) {
  const auto add = [&](const char* id, int length, const char* summary) {
    registrar.add({.id = id,
                   .family = "memory",
                   .max_episode_steps = time_limit(length),
                   // Solved: the goal arm in 95% of episodes or more (4.1 p - 0.1 >= 3.8 with
                   // step_penalty 0; a penalty lowers the return and raises the bar).
                   .reward_threshold = 3.8,
                   .summary = summary,
                   .factory = [length](recur::OptionReader& options) -> std::unique_ptr<Env> {
                     TMazeConfig defaults;
                     defaults.length = length;
                     return std::make_unique<TMaze>(TMazeConfig::read(options, defaults));
                   }});
  };
  add("TMaze-v0", 8, "Bakker's T-maze, corridor 8: remember the cue, turn at the junction");
  add("TMazeLong-v0", 32, "Bakker's T-maze, corridor 32: the cue must be kept for 32 steps");
}
