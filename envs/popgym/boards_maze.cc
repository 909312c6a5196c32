#include "envs/popgym/boards_maze.h"

#include <algorithm>
#include <cstdlib>

#include "core/error.h"

namespace recur::envs::boards {
namespace {

// A uniform odd index in [1, size - 1): Python's randrange(1, size, 2).
int random_odd(Rng& rng, int size) {
  return 1 + 2 * static_cast<int>(rng.uniform_int((size - 1) / 2));
}

// mazelib's _walk: from a carved room, step to a uniform uncarved neighbour room two cells away,
// carving it and the wall between, until none is left. An uncarved start does nothing.
void walk(Rng& rng, int rows, int cols, std::span<uint8_t> grid, int row, int col) {
  auto at = [&](int r, int c) -> uint8_t& { return grid[static_cast<size_t>(r * cols + c)]; };
  if (at(row, col) != kFree) return;
  for (;;) {
    GridPos next[4];
    int n = 0;
    if (row > 1 && at(row - 2, col) == kWall) next[n++] = {row - 2, col};
    if (row < rows - 2 && at(row + 2, col) == kWall) next[n++] = {row + 2, col};
    if (col > 1 && at(row, col - 2) == kWall) next[n++] = {row, col - 2};
    if (col < cols - 2 && at(row, col + 2) == kWall) next[n++] = {row, col + 2};
    if (n == 0) return;
    // mazelib shuffles the list and then picks uniformly from it: one uniform pick.
    const GridPos to = next[rng.uniform_int(static_cast<uint64_t>(n))];
    at(to.row, to.col) = kFree;
    at((to.row + row) / 2, (to.col + col) / 2) = kFree;
    row = to.row;
    col = to.col;
  }
}

}  // namespace

void generate_hunt_and_kill(Rng& rng, int h, int w, std::span<uint8_t> grid) {
  const int rows = 2 * h + 1, cols = 2 * w + 1;
  RECUR_ASSERT(h >= 3 && w >= 3 && grid.size() == static_cast<size_t>(rows * cols));
  std::fill(grid.begin(), grid.end(), kWall);
  int row = random_odd(rng, rows);
  int col = random_odd(rng, cols);
  grid[static_cast<size_t>(row * cols + col)] = kFree;
  walk(rng, rows, cols, grid, row, col);
  // mazelib's random hunt: rows * cols tries, each a uniform room (walked from only if carved).
  for (int trial = 0; trial < rows * cols; ++trial) {
    row = random_odd(rng, rows);
    col = random_odd(rng, cols);
    walk(rng, rows, cols, grid, row, col);
  }
}

Entrances outer_entrances(Rng& rng, int rows, int cols) {
  for (;;) {
    Entrances e;
    switch (rng.uniform_int(4)) {
      case 0:  // north
        e.start = {0, random_odd(rng, cols)};
        e.end = {rows - 1, random_odd(rng, cols)};
        break;
      case 1:  // south
        e.start = {rows - 1, random_odd(rng, cols)};
        e.end = {0, random_odd(rng, cols)};
        break;
      case 2:  // west
        e.start = {random_odd(rng, rows), 0};
        e.end = {random_odd(rng, rows), cols - 1};
        break;
      default:  // east
        e.start = {random_odd(rng, rows), cols - 1};
        e.end = {random_odd(rng, rows), 0};
        break;
    }
    if (std::abs(e.start.row - e.end.row) + std::abs(e.start.col - e.end.col) >= 2) return e;
  }
}

}  // namespace recur::envs::boards
