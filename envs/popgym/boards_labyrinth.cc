#include "envs/popgym/boards_labyrinth.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "envs/popgym/boards_checks.h"
#include "envs/popgym/boards_render.h"
#include "envs/render/canvas.h"

namespace recur::envs {
namespace {
constexpr int kCellKinds = 5;    // POPGym's Cell, HIDDEN included
constexpr int kActionKinds = 5;  // POPGym's Actions, NONE included
}  // namespace

LabyrinthConfig LabyrinthConfig::read(OptionReader& options, LabyrinthConfig defaults,
                                      const char* env) {
  LabyrinthConfig c = defaults;
  c.maze_height = static_cast<int>(options.get_int("maze_height", c.maze_height));
  c.maze_width = static_cast<int>(options.get_int("maze_width", c.maze_width));
  c.episode_length = static_cast<int>(options.get_int("episode_length", c.episode_length));
  for (auto [key, value] :
       {std::pair{"maze_height", c.maze_height}, std::pair{"maze_width", c.maze_width}})
    RECUR_CHECK(value >= 6 && value <= 64 && value % 2 == 0,
                "{}: {} = {}; use an even number in 6..64 (POPGym's maze_dims: 2 cells per room, "
                "at least 3 rooms)",
                env, key, value);
  RECUR_CHECK(c.episode_length >= 2 && c.episode_length <= 1'000'000,
              "{}: episode_length = {}; use 2..1000000 (POPGym truncates after episode_length - 1 "
              "steps)",
              env, c.episode_length);
  return c;
}

Labyrinth::Labyrinth(const char* name, const LabyrinthConfig& config, bool mark_goal)
    : Env(Space::box(0.0f, 1.0f, {10 * kCellKinds}), Space::discrete(4)),
      neg_reward_(-1.0 / config.episode_length),
      name_(name),
      config_(config),
      mark_goal_(mark_goal),
      grid_(static_cast<size_t>(cells())),
      visited_(static_cast<size_t>(cells())) {}

void Labyrinth::count_cells() {
  visited_count_ = open_count_ = free_count_ = 0;
  for (size_t i = 0; i < grid_.size(); ++i) {
    visited_count_ += visited_[i];
    open_count_ += grid_[i] != boards::kWall;
    free_count_ += grid_[i] == boards::kFree;
  }
}

void Labyrinth::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  boards::generate_hunt_and_kill(rng, config_.maze_height / 2, config_.maze_width / 2, grid_);
  const auto entrances = boards::outer_entrances(rng, config_.rows(), config_.cols());
  if (mark_goal_) grid_[index(entrances.end)] = boards::kGoal;
  grid_[index(entrances.start)] = boards::kStart;
  std::fill(visited_.begin(), visited_.end(), 0);
  position_ = entrances.start;
  visited_[index(position_)] = 1;
  last_action_ = 4;
  count_cells();
}

boards::GridPos Labyrinth::move(int action) const {
  boards::GridPos to = position_;
  switch (action) {
    case 0:
      --to.col;
      break;
    case 1:
      ++to.col;
      break;
    case 2:
      --to.row;
      break;
    default:
      ++to.row;
      break;
  }
  to.row = std::clamp(to.row, 0, config_.rows() - 1);
  to.col = std::clamp(to.col, 0, config_.cols() - 1);
  return cell(to) == boards::kWall ? position_ : to;
}

bool Labyrinth::enter(boards::GridPos to) {
  position_ = to;
  const bool fresh = visited_[index(to)] == 0;
  visited_[index(to)] = 1;
  visited_count_ += fresh;
  return fresh;
}

void Labyrinth::observe(std::span<float> obs) const {
  std::fill(obs.begin(), obs.end(), 0.0f);
  // POPGym's local_view, quirks included: the window ends are clamped by the grid's other side
  // (x by its height, y by its width: the same on square mazes), and numpy slicing then cuts
  // the window at the grid; what is missing is padded with walls at the bottom and right.
  const int rows = config_.rows(), cols = config_.cols();
  const int x = position_.col, y = position_.row;
  const int x0 = std::max(x - 1, 0), x_end = std::min(x + 1, rows);
  const int y0 = std::max(y - 1, 0), y_end = std::min(y + 1, cols);
  const int view_rows = std::max(0, std::min(y_end + 1, rows) - y0);
  const int view_cols = std::max(0, std::min(x_end + 1, cols) - x0);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const int value =
          i < view_rows && j < view_cols ? int{cell({y0 + i, x0 + j})} : int{boards::kWall};
      obs[static_cast<size_t>((3 * i + j) * kCellKinds + value)] = 1.0f;
    }
  }
  obs[static_cast<size_t>(9 * kCellKinds + last_action_)] = 1.0f;
}

void Labyrinth::get_state(std::span<double> out) const {
  const size_t n = grid_.size();
  for (size_t i = 0; i < n; ++i) {
    out[i] = grid_[i];
    out[n + i] = visited_[i];
  }
  out[2 * n] = position_.row;
  out[2 * n + 1] = position_.col;
  out[2 * n + 2] = last_action_;
}

void Labyrinth::set_state_impl(std::span<const double> state) {
  const size_t n = grid_.size();
  for (size_t i = 0; i < n; ++i) {
    const int c = boards::state_int(state, i, 0, boards::kGoal, name_, "grid cell");
    const int v = boards::state_int(state, n + i, 0, 1, name_, "visited flag");
    RECUR_CHECK_ARG(!(v && c == boards::kWall), "{}: state marks wall cell {} visited", name_, i);
  }
  const boards::GridPos at{
      boards::state_int(state, 2 * n, 0, config_.rows() - 1, name_, "row"),
      boards::state_int(state, 2 * n + 1, 0, config_.cols() - 1, name_, "column")};
  const size_t here = index(at);
  RECUR_CHECK_ARG(state[here] != double{boards::kWall} && state[n + here] == 1,
                  "{}: the agent's cell ({}, {}) must be open and visited", name_, at.row, at.col);
  const int action = boards::state_int(state, 2 * n + 2, 0, kActionKinds - 1, name_, "last action");
  for (size_t i = 0; i < n; ++i) {
    grid_[i] = static_cast<uint8_t>(state[i]);
    visited_[i] = static_cast<uint8_t>(state[n + i]);
  }
  position_ = at;
  last_action_ = action;
  count_cells();
}

boards::GridPos Labyrinth::view_corner(boards::GridPos at) const {
  return {std::max(at.row - 1, 0), std::max(at.col - 1, 0)};  // as observe()'s y0, x0
}

bool Labyrinth::seen(boards::GridPos p) const {
  // Views reach at most two cells past a visited one (three at the top and left edges).
  for (int r = std::max(p.row - 3, 0); r <= std::min(p.row + 3, config_.rows() - 1); ++r) {
    for (int c = std::max(p.col - 3, 0); c <= std::min(p.col + 3, config_.cols() - 1); ++c) {
      if (!visited_[index({r, c})]) continue;
      const auto corner = view_corner({r, c});
      if (p.row >= corner.row && p.row < corner.row + 3 && p.col >= corner.col &&
          p.col < corner.col + 3)
        return true;
    }
  }
  return false;
}

RenderInfo Labyrinth::render_info() const {
  return {boards::kPictureSize, boards::kPictureSize, 8};  // 1024-step episodes: a faster film
}

void Labyrinth::draw(render::Canvas& canvas) const {
  using render::Color;
  const int rows = config_.rows(), cols = config_.cols();
  const auto board = boards::BoardLayout::fit(rows, cols, {300, 320}, 400, 400);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const boards::GridPos p{r, c};
      const bool known = seen(p);
      const uint8_t kind = cell(p);
      if (kind == boards::kWall) {
        boards::fill_cell(canvas, board, r, c, known ? Color{40, 40, 40} : Color{205, 205, 205});
        continue;
      }
      if (visited_[index(p)])
        boards::fill_cell(canvas, board, r, c, {250, 228, 140});
      else if (known)
        boards::fill_cell(canvas, board, r, c, {225, 236, 252});
      if (kind == boards::kStart)
        boards::fill_cell(canvas, board, r, c, {90, 170, 90}, 0.25 * board.cell);
      if (kind == boards::kGoal)
        boards::fill_cell(canvas, board, r, c, known ? Color{220, 40, 40} : Color{240, 175, 175},
                          0.12 * board.cell);
    }
  }
  boards::stroke_cells(canvas, board, 0, 0, rows, cols, {120, 120, 120}, 1);
  const auto corner = view_corner(position_);
  boards::stroke_cells(canvas, board, corner.row, corner.col, 3, 3, {240, 140, 20}, 3);
  canvas.fill_circle(board.center(position_.row, position_.col), 0.36 * board.cell, {40, 80, 220});

  static constexpr const char* kActions[] = {"left", "right", "up", "down", "none yet"};
  const Color ink = boards::kInk;
  boards::draw_text(canvas, {300, 566}, 20, ink, render::TextAlign::kCenter,
                    "{} {}x{}: {} of {} open cells visited", name_, config_.maze_height,
                    config_.maze_width, visited_count_, open_count_);
  boards::draw_text(canvas, {290, 80}, 16, ink, render::TextAlign::kRight, "last action: {}",
                    kActions[last_action_]);
  boards::draw_one_hot(canvas, {310 + 11.0 * kActionKinds, 80}, kActionKinds, last_action_,
                       {40, 80, 220});
  boards::draw_text(canvas, {300, 40}, 14, ink, render::TextAlign::kCenter, "{}",
                    mark_goal_ ? "orange: the agent's view   yellow: visited   red: exit   "
                                 "faint: never seen"
                               : "orange: the agent's view   yellow: visited   green: start   "
                                 "faint: never seen");
}

}  // namespace recur::envs
