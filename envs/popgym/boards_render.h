// Drawing helpers shared by the POPGym board envs' draw(): a square board of cells fitted into
// the picture, cell fills and outlines, text, and the one-hot observation as a row of boxes.
// POPGym renders none of these envs; the pictures are recur's, 600x600 pixels, y-up, on the white
// canvas the caller cleared. Boards keep to a 400x400 px square (Concentration's table to
// 540x360) so that most of the frame stays white. Nothing here allocates: text is formatted into
// stack buffers, so rendering stays allocation-free after the first frame.
#pragma once

#include <algorithm>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "envs/render/canvas.h"

namespace recur::envs::boards {

inline constexpr int kPictureSize = 600;  // px, width and height
inline constexpr int kPictureFps = 4;     // slow enough to follow each shot, flip or click

inline constexpr render::Color kInk{30, 30, 30};
inline constexpr render::Color kFaint{200, 200, 200};

// rows x cols square cells fitted into a max_w x max_h px box centred at `center`; row 0 is the
// top row, as the envs' row-major grids read.
struct BoardLayout {
  double left = 0, top = 0, cell = 0;  // px: the board's top-left corner and a cell's side
  int rows = 0, cols = 0;

  static BoardLayout fit(int rows, int cols, render::Vec2 center, double max_w, double max_h);
  render::Vec2 center(int row, int col) const {
    return {left + (col + 0.5) * cell, top - (row + 0.5) * cell};
  }
};

// The cell's square shrunk by `inset` px on every side, filled or outlined.
void fill_cell(render::Canvas& canvas, const BoardLayout& board, int row, int col,
               render::Color color, double inset = 0);
// The outline of rows [row, row + n_rows) x cols [col, col + n_cols) (may reach past the board).
void stroke_cells(render::Canvas& canvas, const BoardLayout& board, int row, int col, int n_rows,
                  int n_cols, render::Color color, double width_px);
// The lines between cells and the board's border.
void draw_grid(render::Canvas& canvas, const BoardLayout& board, render::Color color,
               double width_px);
// A one-hot observation of n values as a row of boxes centred at `at`, box `hot` filled.
void draw_one_hot(render::Canvas& canvas, render::Vec2 at, int n, int hot, render::Color color);

// Text formatted into a stack buffer, anchored at `at`.
template <typename... Args>
void draw_text(render::Canvas& canvas, render::Vec2 at, double size, render::Color color,
               render::TextAlign align, fmt::format_string<Args...> format, Args&&... args) {
  char buffer[128];
  const auto out = fmt::format_to_n(buffer, sizeof(buffer), format, std::forward<Args>(args)...);
  canvas.text(at, std::string_view(buffer, std::min(out.size, sizeof(buffer))), size, color, align);
}

}  // namespace recur::envs::boards
