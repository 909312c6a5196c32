#include "envs/popgym/minesweeper.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "core/error.h"
#include "envs/popgym/boards_checks.h"
#include "envs/popgym/boards_render.h"
#include "envs/render/canvas.h"

namespace recur::envs {

MineSweeperConfig MineSweeperConfig::read(OptionReader& options, MineSweeperConfig defaults) {
  MineSweeperConfig c = defaults;
  c.rows = static_cast<int>(options.get_int("rows", c.rows));
  c.cols = static_cast<int>(options.get_int("cols", c.cols));
  c.num_mines = static_cast<int>(options.get_int("num_mines", c.num_mines));
  RECUR_CHECK(c.rows >= 2 && c.rows <= 32 && c.cols >= 2 && c.cols <= 32,
              "MineSweeper: rows = {}, cols = {}; use 2..32 each", c.rows, c.cols);
  RECUR_CHECK(c.num_mines >= 1 && c.num_mines <= c.rows * c.cols - 3,
              "MineSweeper: num_mines = {}; use 1..{} on a {}x{} board (at least 3 clear tiles: "
              "POPGym's repeat-click penalty divides by their count - 2)",
              c.num_mines, c.rows * c.cols - 3, c.rows, c.cols);
  return c;
}

MineSweeper::MineSweeper(const MineSweeperConfig& config)
    : Env(Space::box(0.0f, 1.0f, {config.num_obs()}), Space::discrete(config.rows * config.cols)),
      config_(config),
      grid_(static_cast<size_t>(cells()), kClear),
      neighbours_(static_cast<size_t>(cells()), 0),
      order_(static_cast<size_t>(cells())) {}

void MineSweeper::count_neighbours() {
  const int rows = config_.rows, cols = config_.cols;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      int count = 0;
      for (int dr = -1; dr <= 1; ++dr)
        for (int dc = -1; dc <= 1; ++dc) {
          const int rr = r + dr, cc = c + dc;
          if (rr >= 0 && rr < rows && cc >= 0 && cc < cols)
            count += grid_[static_cast<size_t>(rr * cols + cc)] == kMine;
        }
      neighbours_[static_cast<size_t>(r * cols + c)] = static_cast<uint8_t>(count);
    }
  }
}

void MineSweeper::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  // num_mines distinct tiles, uniformly: the first num_mines of a partial Fisher-Yates shuffle.
  std::iota(order_.begin(), order_.end(), 0);
  std::fill(grid_.begin(), grid_.end(), kClear);
  for (int i = 0; i < config_.num_mines; ++i) {
    const auto j = static_cast<size_t>(i) + rng.uniform_int(order_.size() - static_cast<size_t>(i));
    std::swap(order_[static_cast<size_t>(i)], order_[j]);
    grid_[static_cast<size_t>(order_[static_cast<size_t>(i)])] = kMine;
  }
  count_neighbours();
  clear_left_ = config_.max_episode_length();
  last_obs_ = 0;
}

Env::Outcome MineSweeper::step_impl(std::span<const float> action) {
  const auto tile = static_cast<size_t>(action[0]);
  const double success = 1.0 / config_.max_episode_length();
  Outcome out;
  if (grid_[tile] == kMine) {
    out.terminated = true;
    out.reward = -0.5 - success;
  } else if (grid_[tile] == kViewed) {
    out.reward = -0.5 / (config_.max_episode_length() - 2);
  } else {
    grid_[tile] = kViewed;
    --clear_left_;
    out.reward = success;
  }
  out.terminated = out.terminated || clear_left_ == 0;
  last_obs_ = neighbours_[tile];
  return out;
}

void MineSweeper::observe(std::span<float> obs) const {
  std::fill(obs.begin(), obs.end(), 0.0f);
  obs[static_cast<size_t>(last_obs_)] = 1.0f;
}

void MineSweeper::get_state(std::span<double> out) const {
  for (size_t i = 0; i < grid_.size(); ++i) out[i] = grid_[i];
  out[grid_.size()] = last_obs_;
}

void MineSweeper::set_state_impl(std::span<const double> state) {
  const size_t n = grid_.size();
  int mines = 0, clear = 0;
  for (size_t i = 0; i < n; ++i) {
    const int tile = boards::state_int(state, i, 0, 2, "MineSweeper", "tile");
    mines += tile == kMine;
    clear += tile == kClear;
  }
  RECUR_CHECK_ARG(mines == config_.num_mines,
                  "MineSweeper: the state's grid holds {} mines, not {}", mines, config_.num_mines);
  const int last =
      boards::state_int(state, n, 0, config_.num_obs() - 1, "MineSweeper", "last observation");
  for (size_t i = 0; i < n; ++i) grid_[i] = static_cast<uint8_t>(state[i]);
  count_neighbours();
  clear_left_ = clear;
  last_obs_ = last;
}

RenderInfo MineSweeper::render_info() const {
  return {boards::kPictureSize, boards::kPictureSize, boards::kPictureFps};
}

void MineSweeper::draw(render::Canvas& canvas) const {
  // Clicked tiles open (white, with the count the click showed); the rest stay grey, the mines
  // under them faint. Row 0 of the board is the top row.
  static constexpr render::Color kCountColors[] = {
      {150, 150, 150}, {30, 60, 200}, {30, 130, 40}, {200, 30, 30}, {80, 20, 140}};
  const auto board = boards::BoardLayout::fit(config_.rows, config_.cols, {300, 320}, 400, 400);
  for (int r = 0; r < config_.rows; ++r) {
    for (int c = 0; c < config_.cols; ++c) {
      const auto i = static_cast<size_t>(r * config_.cols + c);
      if (grid_[i] == kViewed) {
        const int count = neighbours_[i];
        boards::draw_text(canvas, board.center(r, c), 0.5 * board.cell,
                          kCountColors[std::min(count, 4)], render::TextAlign::kCenter, "{}",
                          count);
        continue;
      }
      boards::fill_cell(canvas, board, r, c, {185, 190, 200}, 1);
      if (grid_[i] == kMine)
        canvas.fill_circle(board.center(r, c), 0.2 * board.cell, {140, 140, 150});
    }
  }
  boards::draw_grid(canvas, board, {120, 120, 120}, 1);
  const render::Color ink = boards::kInk;
  boards::draw_text(canvas, {300, 566}, 20, ink, render::TextAlign::kCenter,
                    "MineSweeper {}x{}, {} mines: {} of {} clear tiles open", config_.rows,
                    config_.cols, config_.num_mines, config_.max_episode_length() - clear_left_,
                    config_.max_episode_length());
  const int n_obs = config_.num_obs();
  boards::draw_text(canvas, {290, 80}, 16, ink, render::TextAlign::kRight, "observation: count {}",
                    last_obs_);
  boards::draw_one_hot(canvas, {310 + 11.0 * n_obs, 80}, n_obs, last_obs_, {30, 60, 200});
  boards::draw_text(canvas, {300, 40}, 14, ink, render::TextAlign::kCenter,
                    "white: clicked (mines in its 3x3)   grey: hidden   faint dot: a mine");
}

}  // namespace recur::envs
