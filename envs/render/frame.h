// One rendered image of an env: what Gymnasium's render_mode="rgb_array" returns.
//
//   pixels: (height, width, 3) uint8, row-major, RGB, row 0 at the top of the picture.
//
// Env families draw into a render::Canvas (envs/render/canvas.h); the Canvas hands back a Frame.
// Video and PNG writers read Frames; nothing outside envs/render/ sees Cairo.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace recur::envs::render {

struct Frame {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // (height, width, 3) RGB

  std::span<const uint8_t> row(int y) const {
    return {pixels.data() + static_cast<size_t>(y) * width * 3, static_cast<size_t>(width) * 3};
  }
  const uint8_t* at(int x, int y) const {
    return pixels.data() + (static_cast<size_t>(y) * width + x) * 3;
  }
  bool empty() const { return pixels.empty(); }
};

}  // namespace recur::envs::render
