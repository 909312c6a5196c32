// LabyrinthEscape, with POPGym's rules (popgym 1.0.7, popgym/envs/labyrinth_escape.py): the agent
// starts on one outer wall of a random maze and must reach the exit on the opposite wall.
// Maze, moves, observation and state as in envs/popgym/boards_labyrinth.h; the exit is marked
// kGoal (3) in the grid, so the agent sees it once next to it.
//   reward  -1/episode_length per step, +1 more on the step that reaches the exit
//   ends    terminated at the exit; truncated after episode_length - 1 steps (both can be true
//           at once, as in POPGym)
// Difficulties as POPGym: Easy maze 10x10, Medium 14x14, Hard 18x18; episode_length 1024.
// POPGym warns that mazes are solvable without memory (an MLP beats an LSTM on them).
#pragma once

#include "envs/popgym/boards_labyrinth.h"

namespace recur::envs {

class LabyrinthEscape final : public Labyrinth {
 public:
  explicit LabyrinthEscape(const LabyrinthConfig& config = {})
      : Labyrinth("LabyrinthEscape", config, /*mark_goal=*/true) {}

 private:
  Outcome step_impl(std::span<const float> action) override;
};

}  // namespace recur::envs
