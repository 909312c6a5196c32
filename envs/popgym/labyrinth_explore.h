// LabyrinthExplore, with POPGym's rules (popgym 1.0.7, popgym/envs/labyrinth_explore.py): the
// agent starts on an outer wall of a random maze and is paid for every cell it visits first.
// Maze, moves, observation and state as in envs/popgym/boards_labyrinth.h (no exit is marked).
//   reward  1/F on a step onto a cell not visited before (F = the grid's kFree cells, the start
//           not counted, so visiting everything scores exactly 1), -1/episode_length otherwise
//   ends    terminated once every open cell is visited; truncated after episode_length - 1
//           steps (both can be true at once, as in POPGym)
// Difficulties as POPGym: Easy maze 10x10, Medium 14x14, Hard 18x18; episode_length 1024.
// POPGym warns that mazes are solvable without memory (an MLP beats an LSTM on them).
#pragma once

#include "envs/popgym/boards_labyrinth.h"

namespace recur::envs {

class LabyrinthExplore final : public Labyrinth {
 public:
  explicit LabyrinthExplore(const LabyrinthConfig& config = {})
      : Labyrinth("LabyrinthExplore", config, /*mark_goal=*/false) {}

 private:
  Outcome step_impl(std::span<const float> action) override;
};

}  // namespace recur::envs
