// MineSweeper, with POPGym's rules (popgym 1.0.7, popgym/envs/minesweeper.py): the board stays
// hidden; the agent clicks a tile and sees only the number of mines around it.
//
// num_mines distinct tiles hold mines (a uniform draw without replacement). A tile's number
// counts the mines in its 3x3 neighbourhood, itself included (POPGym's sum of shifted grids).
//   action  Discrete(rows * cols): POPGym's MultiDiscrete([rows, cols]) (row, col) as
//           row * cols + col
//   obs     Box(0, 1, (min(num_mines + 1, 10),)): one-hot of POPGym's Discrete: the clicked
//           tile's number (0 at reset)
//   reward  with L = rows * cols - num_mines (the clear tiles): +1/L for a new clear tile,
//           -0.5/(L - 2) for a tile clicked before, -0.5 - 1/L for a mine
//   ends    terminated on a mine or when every clear tile is clicked; truncated after L clicks
//           (POPGym's max_episode_length), through the registered time limit. One difference,
//           which recur's base class decides: when the L-th click clears the last tile or hits a
//           mine, POPGym reports truncated = false and recur reports truncated = true as well
//           as terminated (as Gymnasium's TimeLimit does). Terminated is the same, so returns and
//           bootstrapping are too.
// POPGym's constructor takes difficulty (easy, medium, hard), which sets the board and the mines;
// recur's options are those numbers: Easy 4x4 with 2 mines, Medium 6x6 with 6, Hard 8x8 with 10.
#pragma once

#include <cstdint>
#include <vector>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct MineSweeperConfig {
  int rows = 4;       // POPGym's dims[0]; 2..32
  int cols = 4;       // POPGym's dims[1]; 2..32
  int num_mines = 2;  // 1..rows * cols - 3 (L - 2 > 0)

  static MineSweeperConfig read(OptionReader& options, MineSweeperConfig defaults);
  int max_episode_length() const { return rows * cols - num_mines; }  // L
  int num_obs() const { return num_mines + 1 < 10 ? num_mines + 1 : 10; }
};

class MineSweeper final : public Env {
 public:
  explicit MineSweeper(const MineSweeperConfig& config = {});

  enum Tile : uint8_t { kClear = 0, kMine = 1, kViewed = 2 };  // POPGym's HiddenSquare

  // State: POPGym's hidden grid (rows * cols, row-major: 0 clear, 1 mine, 2 clicked), then the
  // last observation (the last clicked tile's number; 0 at reset).
  int state_size() const override { return cells() + 1; }
  void get_state(std::span<double> out) const override;

  // The board, 600x600 at 4 fps (POPGym renders nothing; recur's choice): clicked tiles with
  // their counts, hidden tiles grey with the mines under them faint, and the last observation.
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 private:
  int cells() const { return config_.rows * config_.cols; }
  void count_neighbours();
  void set_state_impl(std::span<const double> state) override;
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  MineSweeperConfig config_;
  std::vector<uint8_t> grid_;        // (rows * cols,) Tile
  std::vector<uint8_t> neighbours_;  // (rows * cols,) mines in the 3x3 block around each tile
  std::vector<int> order_;           // (rows * cols,) scratch of the mine draw
  int clear_left_ = 0;               // tiles still kClear
  int last_obs_ = 0;
};

}  // namespace recur::envs
