#include "envs/popgym/battleship.h"

#include <algorithm>

#include "core/error.h"
#include "envs/popgym/boards_checks.h"
#include "envs/popgym/boards_render.h"
#include "envs/render/canvas.h"

namespace recur::envs {

BattleshipConfig BattleshipConfig::read(OptionReader& options, BattleshipConfig defaults) {
  BattleshipConfig c = defaults;
  c.board_size = static_cast<int>(options.get_int("board_size", c.board_size));
  RECUR_CHECK(c.board_size >= 8 && c.board_size <= 32,
              "Battleship: board_size = {}; use 8..32 (below 8 POPGym's rejection sampling can "
              "leave no room for the last ship)",
              c.board_size);
  return c;
}

Battleship::Battleship(const BattleshipConfig& config)
    : Env(Space::box(0.0f, 1.0f, {2}), Space::discrete(config.board_size * config.board_size)),
      config_(config),
      board_(static_cast<size_t>(cells()), 0),
      guesses_(static_cast<size_t>(cells()), 0) {}

void Battleship::place_ship(Rng& rng, int size) {
  // POPGym's draw: start tile (row, col), axis (0 rows, 1 cols) and direction (+ or -), retried
  // until the ship lies on the board over free tiles.
  const int n = config_.board_size;
  for (;;) {
    const int start[2] = {static_cast<int>(rng.uniform_int(n)),
                          static_cast<int>(rng.uniform_int(n))};
    const int axis = static_cast<int>(rng.uniform_int(2));
    const int sign = rng.uniform_int(2) == 0 ? 1 : -1;
    int end[2] = {start[0], start[1]};
    end[axis] += sign * (size - 1);
    if (end[axis] < 0 || end[axis] >= n) continue;
    const int r0 = std::min(start[0], end[0]), r1 = std::max(start[0], end[0]);
    const int c0 = std::min(start[1], end[1]), c1 = std::max(start[1], end[1]);
    bool free = true;
    for (int r = r0; r <= r1; ++r)
      for (int c = c0; c <= c1; ++c) free = free && board_[static_cast<size_t>(r * n + c)] == 0;
    if (!free) continue;
    for (int r = r0; r <= r1; ++r)
      for (int c = c0; c <= c1; ++c) board_[static_cast<size_t>(r * n + c)] = 1;
    return;
  }
}

void Battleship::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  std::fill(board_.begin(), board_.end(), 0);
  std::fill(guesses_.begin(), guesses_.end(), 0);
  for (int size : kShipSizes) place_ship(rng, size);
  hits_ = 0;
  last_obs_ = 0;
}

Env::Outcome Battleship::step_impl(std::span<const float> action) {
  const auto tile = static_cast<size_t>(action[0]);
  const bool hit = board_[tile] == 1 && guesses_[tile] == 0;
  guesses_[tile] = 1;
  hits_ += hit;
  last_obs_ = hit;
  Outcome out;
  out.reward = hit ? 1.0 / kNeededHits : -1.0 / (config_.max_episode_length() - kNeededHits);
  out.terminated = hits_ == kNeededHits;
  return out;
}

void Battleship::observe(std::span<float> obs) const {
  obs[0] = last_obs_ == 0 ? 1.0f : 0.0f;
  obs[1] = last_obs_ == 1 ? 1.0f : 0.0f;
}

void Battleship::get_state(std::span<double> out) const {
  const auto n = static_cast<size_t>(cells());
  for (size_t i = 0; i < n; ++i) {
    out[i] = board_[i];
    out[n + i] = guesses_[i];
  }
  out[2 * n] = last_obs_;
}

void Battleship::set_state_impl(std::span<const double> state) {
  const auto n = static_cast<size_t>(cells());
  int ship_tiles = 0, hits = 0;
  for (size_t i = 0; i < n; ++i) {
    const int ship = boards::state_int(state, i, 0, 1, "Battleship", "board tile");
    const int fired = boards::state_int(state, n + i, 0, 1, "Battleship", "fired-at tile");
    ship_tiles += ship;
    hits += ship && fired;
  }
  RECUR_CHECK_ARG(ship_tiles == kNeededHits,
                  "Battleship: the state's board holds {} ship tiles; ships 2, 3, 3, 4 cover {}",
                  ship_tiles, kNeededHits);
  const int last = boards::state_int(state, 2 * n, 0, 1, "Battleship", "last observation");
  for (size_t i = 0; i < n; ++i) {
    board_[i] = static_cast<uint8_t>(state[i]);
    guesses_[i] = static_cast<uint8_t>(state[n + i]);
  }
  hits_ = hits;
  last_obs_ = last;
}

RenderInfo Battleship::render_info() const {
  return {boards::kPictureSize, boards::kPictureSize, boards::kPictureFps};
}

void Battleship::draw(render::Canvas& canvas) const {
  // What the agent has learnt (its shots: red hits, grey misses) over the truth it cannot see
  // (the ships, pale blue). Row 0 of the board is the top row.
  const int n = config_.board_size;
  const auto board = boards::BoardLayout::fit(n, n, {300, 320}, 400, 400);
  int shots = 0, hits = 0;
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const auto i = static_cast<size_t>(r * n + c);
      if (board_[i]) boards::fill_cell(canvas, board, r, c, {200, 215, 235});
      if (!guesses_[i]) continue;
      ++shots;
      hits += board_[i];
      if (board_[i]) {
        boards::fill_cell(canvas, board, r, c, {210, 40, 40}, 0.15 * board.cell);
      } else {
        canvas.fill_circle(board.center(r, c), 0.18 * board.cell, {110, 110, 110});
      }
    }
  }
  boards::draw_grid(canvas, board, {120, 120, 120}, 1);
  const render::Color ink = boards::kInk;
  boards::draw_text(canvas, {300, 566}, 20, ink, render::TextAlign::kCenter,
                    "Battleship {}x{}: {} shots, {} of {} ship tiles hit", n, n, shots, hits,
                    kNeededHits);
  boards::draw_text(canvas, {280, 80}, 16, ink, render::TextAlign::kRight,
                    "observation (miss, hit): {}", last_obs_ ? "hit" : "miss");
  boards::draw_one_hot(canvas, {320, 80}, 2, last_obs_, {210, 40, 40});
  boards::draw_text(canvas, {300, 40}, 14, ink, render::TextAlign::kCenter,
                    "red: hit   grey dot: miss   pale blue: ships (hidden from the agent)");
}

}  // namespace recur::envs
