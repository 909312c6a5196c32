#include "envs/popgym/boards_render.h"

#include <algorithm>

namespace recur::envs::boards {

using render::Color;
using render::Vec2;

BoardLayout BoardLayout::fit(int rows, int cols, Vec2 center, double max_w, double max_h) {
  BoardLayout b;
  b.rows = rows;
  b.cols = cols;
  b.cell = std::min(max_w / cols, max_h / rows);
  b.left = center.x - 0.5 * cols * b.cell;
  b.top = center.y + 0.5 * rows * b.cell;
  return b;
}

void fill_cell(render::Canvas& canvas, const BoardLayout& board, int row, int col, Color color,
               double inset) {
  const double x0 = board.left + col * board.cell + inset, x1 = x0 + board.cell - 2 * inset;
  const double y1 = board.top - row * board.cell - inset, y0 = y1 - board.cell + 2 * inset;
  const Vec2 square[] = {{x0, y0}, {x0, y1}, {x1, y1}, {x1, y0}};
  canvas.fill_polygon(square, color);
}

void stroke_cells(render::Canvas& canvas, const BoardLayout& board, int row, int col, int n_rows,
                  int n_cols, Color color, double width_px) {
  const double x0 = board.left + col * board.cell, x1 = x0 + n_cols * board.cell;
  const double y1 = board.top - row * board.cell, y0 = y1 - n_rows * board.cell;
  const Vec2 frame[] = {{x0, y0}, {x0, y1}, {x1, y1}, {x1, y0}};
  canvas.stroke_polygon(frame, color, width_px);
}

void draw_grid(render::Canvas& canvas, const BoardLayout& board, Color color, double width_px) {
  const double right = board.left + board.cols * board.cell;
  const double bottom = board.top - board.rows * board.cell;
  for (int r = 1; r < board.rows; ++r) {
    const double y = board.top - r * board.cell;
    canvas.line({board.left, y}, {right, y}, color, width_px);
  }
  for (int c = 1; c < board.cols; ++c) {
    const double x = board.left + c * board.cell;
    canvas.line({x, board.top}, {x, bottom}, color, width_px);
  }
  stroke_cells(canvas, board, 0, 0, board.rows, board.cols, color, width_px + 1);
}

void draw_one_hot(render::Canvas& canvas, Vec2 at, int n, int hot, Color color) {
  const double side = std::min(22.0, 400.0 / std::max(n, 1));
  const BoardLayout row = BoardLayout::fit(1, n, at, side * n, side);
  if (hot >= 0 && hot < n) fill_cell(canvas, row, 0, hot, color, 2);
  draw_grid(canvas, row, kInk, 1);
}

}  // namespace recur::envs::boards
