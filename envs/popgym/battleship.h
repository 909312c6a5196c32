// Battleship, with POPGym's rules (popgym 1.0.7, popgym/envs/battleship.py): the board is hidden;
// the agent fires at a tile and sees only whether that shot was a new hit.
//
// Ships of sizes 2, 3, 3, 4 (POPGym's default; every difficulty uses it) are placed one after
// another by rejection sampling: a uniform start tile, axis and direction, retried until the ship
// fits on the board without touching a placed one.
//   action  Discrete(board_size^2): POPGym's MultiDiscrete([n, n]) (row, col) as row * n + col
//   obs     Box(0, 1, (2,)): one-hot of POPGym's Discrete(2): [1, 0] miss (and at reset),
//           [0, 1] a hit on a ship tile not fired at before
//   reward  +1/needed_hits for a new hit, -1/(n^2 - needed_hits) otherwise (needed_hits = 12):
//           all hits score 1, firing at every tile once scores 0
//   ends    terminated when every ship tile is hit; truncated after n^2 shots (POPGym's
//           max_episode_length), through the registered time limit; both can be true at once
//           as in POPGym.
// Difficulties as POPGym: Easy board 8, Medium 10, Hard 12.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct BattleshipConfig {
  int board_size = 10;  // tiles per side; 8..32 (from 8 up every ship always fits)

  static BattleshipConfig read(OptionReader& options, BattleshipConfig defaults);
  int max_episode_length() const { return board_size * board_size; }
};

class Battleship final : public Env {
 public:
  explicit Battleship(const BattleshipConfig& config = {});

  static constexpr std::array<int, 4> kShipSizes = {2, 3, 3, 4};
  static constexpr int kNeededHits = 12;  // sum of kShipSizes
  static constexpr double kOptimalReturn = 1.0;

  // State (POPGym's get_state): the board (n*n, 1 = ship, row-major), the tiles fired at (n*n,
  // 1 = fired), then the last observation (1 = hit). The hit count is derived from the two.
  int state_size() const override { return 2 * cells() + 1; }
  void get_state(std::span<double> out) const override;

  // The board, 600x600 at 4 fps (POPGym renders nothing; recur's choice): shots as hits and
  // misses over the hidden ships drawn faint, and the last observation; see draw().
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 private:
  int cells() const { return config_.board_size * config_.board_size; }
  void place_ship(Rng& rng, int size);
  void set_state_impl(std::span<const double> state) override;
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  Outcome step_impl(std::span<const float> action) override;
  void observe(std::span<float> obs) const override;

  BattleshipConfig config_;
  std::vector<uint8_t> board_;    // (n*n,) 1 = ship tile
  std::vector<uint8_t> guesses_;  // (n*n,) 1 = fired at
  int hits_ = 0;
  int last_obs_ = 0;  // 1 = the last shot was a new hit
};

}  // namespace recur::envs
