// The maze generator of POPGym's labyrinths: mazelib 0.9.16's HuntAndKill with its default
// random hunt order, and Maze.generate_entrances(start_outer=True) (popgym/core/maze.py calls
// both). Ported algorithm for algorithm so that recur's mazes come from the same distribution;
// the draws come from recur's Rng instead of Python's random module, so a seed names another
// maze than in POPGym.
//
// The grid has (2h + 1) x (2w + 1) cells, row-major, 1 wall and 0 passage: cell (2i + 1, 2j + 1)
// is room (i, j) and the cells between rooms are walls or doors. Hunt-and-kill as mazelib does
// it: carve a random walk from a random room until the walk is boxed in, then, H * W times (H,
// W the grid's sides), pick a random room and walk again from it if it was already carved.
// That is not guaranteed to reach every room: a room never reached stays wall, as in mazelib.
#pragma once

#include <cstdint>
#include <span>

#include "core/rng.h"

namespace recur::envs::boards {

enum MazeCell : uint8_t { kFree = 0, kWall = 1, kStart = 2, kGoal = 3 };  // POPGym's Cell

struct GridPos {
  int row = 0;
  int col = 0;
  bool operator==(const GridPos&) const = default;
};

// Carves a hunt-and-kill maze of h x w rooms into `grid` ((2h + 1) * (2w + 1) cells; any
// content). h, w >= 3 (mazelib's minimum).
void generate_hunt_and_kill(Rng& rng, int h, int w, std::span<uint8_t> grid);

struct Entrances {
  GridPos start, end;
};

// mazelib's outer entrances of a rows x cols grid: a uniform side for the start (north, south,
// west, east), a uniform room-aligned cell on it, and the end on the opposite side; redrawn
// while the two touch.
Entrances outer_entrances(Rng& rng, int rows, int cols);

}  // namespace recur::envs::boards
