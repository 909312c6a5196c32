// Helpers of the render tests (render_test.cc, render_scenes_test.cc): making envs, reading
// pixels of a Frame, and a frame of an env at a given state.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "envs/render/canvas.h"
#include "envs/render/renderer.h"

namespace doctest {
template <>
struct StringMaker<recur::envs::render::Color> {
  static String convert(const recur::envs::render::Color& c) {
    char text[32];
    std::snprintf(text, sizeof(text), "(%d, %d, %d)", c.r, c.g, c.b);
    return text;
  }
};
}  // namespace doctest

namespace render_test {

using recur::envs::Env;
using recur::envs::RenderInfo;
using recur::envs::render::Color;
using recur::envs::render::Frame;
using recur::envs::render::Renderer;

inline std::unique_ptr<Env> make(const std::string& id) {
  return recur::envs::make(id);
}

inline std::vector<float> action_of(const Env& env, float value) {
  return std::vector<float>(static_cast<size_t>(env.action_dim()), value);
}

inline Color pixel(const Frame& f, int x, int y) {
  const uint8_t* p = f.at(x, y);
  return {p[0], p[1], p[2]};
}

inline int count_non_white(const Frame& f) {
  int n = 0;
  for (size_t i = 0; i < f.pixels.size(); i += 3)
    n += f.pixels[i] != 255 || f.pixels[i + 1] != 255 || f.pixels[i + 2] != 255;
  return n;
}

inline int count_color(const Frame& f, Color c) {
  int n = 0;
  for (size_t i = 0; i < f.pixels.size(); i += 3)
    n += f.pixels[i] == c.r && f.pixels[i + 1] == c.g && f.pixels[i + 2] == c.b;
  return n;
}

// Darkest channel sum in the 3x3 pixels around (x, y): thin antialiased strokes need not hit
// one exact pixel.
inline int darkest_around(const Frame& f, int x, int y) {
  int best = 3 * 255;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const Color c = pixel(f, x + dx, y + dy);
      best = std::min(best, c.r + c.g + c.b);
    }
  return best;
}

inline int differing_pixels(const std::vector<uint8_t>& a, const Frame& b) {
  REQUIRE(a.size() == b.pixels.size());
  int n = 0;
  for (size_t i = 0; i < a.size(); i += 3)
    n += a[i] != b.pixels[i] || a[i + 1] != b.pixels[i + 1] || a[i + 2] != b.pixels[i + 2];
  return n;
}

// A frame of `id` at `state`; for Pendulum, after a step with torque last_u (Gymnasium's arrow).
inline Frame frame_at(const std::string& id, const std::vector<double>& state,
                      std::optional<float> last_u = std::nullopt) {
  auto env = make(id);
  env->reset(0);
  if (last_u) env->step(std::vector<float>{*last_u});
  env->set_state(state);
  Renderer renderer(*env);
  return renderer.render(*env);
}

// ---- Reference frames: a frame reduced to block means, and exact-colour pixel counts. ----

}  // namespace render_test
