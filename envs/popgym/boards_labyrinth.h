// What POPGym's two labyrinths share (popgym 1.0.7, popgym/core/maze.py's MazeEnv): the maze, the
// agent's moves, what it sees, which cells it has visited, and the state vector.
//
// Reset carves a maze of (maze_height / 2) x (maze_width / 2) rooms on a (maze_height + 1) x
// (maze_width + 1) grid (envs/popgym/boards_maze.h: mazelib's hunt-and-kill), puts entrances on
// two opposite outer walls, and drops the agent on the start entrance (marked kStart).
//   action  Discrete(4): 0 left, 1 right, 2 up, 3 down (a wall, or the grid's edge, leaves the
//           agent where it is)
//   obs     Box(0, 1, (50,)): POPGym's MultiDiscrete([5] * 9 + [5]): nine one-hots of 5 for the
//           3x3 cells around the agent, row by row (POPGym's Cell: 0 free, 1 wall, 2 start, 3
//           goal, 4 hidden, never seen), then a one-hot of 5 for the last action (4 at reset).
//           POPGym's window quirk is kept: at the top or left edge the window is not centred but
//           starts at the agent's row or column and is padded with walls at the bottom or right.
//   ends    truncated after episode_length - 1 steps (POPGym checks curr_step ==
//           episode_length - 1 after counting the step), through the registered time limit.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/options.h"
#include "envs/env.h"
#include "envs/popgym/boards_maze.h"

namespace recur::envs {

struct LabyrinthConfig {
  int maze_height = 10;       // POPGym's maze_dims[0]: even, 6..64 (3 rooms and up, as mazelib)
  int maze_width = 10;        // POPGym's maze_dims[1]: likewise
  int episode_length = 1024;  // POPGym's episode_length: 2..1000000

  static LabyrinthConfig read(OptionReader& options, LabyrinthConfig defaults, const char* env);
  int rows() const { return maze_height + 1; }
  int cols() const { return maze_width + 1; }
  int max_episode_steps() const { return episode_length - 1; }
};

class Labyrinth : public Env {
 public:
  // State: the grid (rows * cols, row-major, POPGym's Cell values 0..3 with the start and, in
  // LabyrinthEscape, the goal marked), the visited flags (rows * cols, 1 = visited), the agent's
  // row and column, and the last action (4 = none yet). Size 2 * rows * cols + 3.
  int state_size() const override { return 2 * cells() + 3; }
  void get_state(std::span<double> out) const override;

  // The maze, 600x600 at 8 fps (POPGym renders nothing; recur's choice): what the agent has seen
  // (the union of its 3x3 views) dark, the rest of the maze faint, visited cells, the exit, the
  // agent and its current view outlined; see draw().
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 protected:
  Labyrinth(const char* name, const LabyrinthConfig& config, bool mark_goal);

  // POPGym's move: the cell the action leads to, or the agent's own when that is a wall.
  boards::GridPos move(int action) const;
  // Moves the agent there and marks it visited; returns true when it had not been visited.
  bool enter(boards::GridPos to);
  uint8_t cell(boards::GridPos p) const { return grid_[index(p)]; }
  bool all_visited() const { return visited_count_ == open_count_; }
  int free_cells() const { return free_count_; }  // cells marked kFree (not start or goal)

  int last_action_ = 4;
  boards::GridPos position_;
  double neg_reward_ = 0;  // -1 / episode_length, POPGym's neg_reward_scale

 private:
  int cells() const { return config_.rows() * config_.cols(); }
  size_t index(boards::GridPos p) const {
    return static_cast<size_t>(p.row * config_.cols() + p.col);
  }
  void count_cells();
  // POPGym's local_view window around `at`: its top-left cell (3x3 from there, maybe past the
  // grid's bottom or right edge, where walls pad it).
  boards::GridPos view_corner(boards::GridPos at) const;
  bool seen(boards::GridPos p) const;  // inside the view from some visited cell
  void reset_impl(Rng& rng, std::optional<uint64_t> seed) override;
  void set_state_impl(std::span<const double> state) override;
  void observe(std::span<float> obs) const override;

  const char* name_;
  LabyrinthConfig config_;
  bool mark_goal_;
  std::vector<uint8_t> grid_;     // (rows * cols,) MazeCell
  std::vector<uint8_t> visited_;  // (rows * cols,) 1 = visited
  int visited_count_ = 0, open_count_ = 0, free_count_ = 0;
};

}  // namespace recur::envs
