// Renderer: frames of an env, as Gymnasium's render_mode="rgb_array" returns them.
//
//   recur::envs::render::Renderer renderer(*env);   // sized from env->render_info()
//   env->reset(seed);
//   const Frame& f = renderer.render(*env);        // the reset state; valid until the next render
//   write_png(f, "frame0.png");
//
// Rendering is never on the step path: a caller that records steps, renders. After the first
// render, render() allocates nothing (the canvas and the frame buffer are reused).
#pragma once

#include <string>

#include "envs/env.h"
#include "envs/render/canvas.h"
#include "envs/render/frame.h"

namespace recur::envs::render {

class Renderer {
 public:
  // Throws recur::Error naming the env id when the env does not render.
  explicit Renderer(const Env& env);

  // Clears to white, lets env.draw() paint its current state and returns the frame. env must
  // render at this renderer's size (the env it was built for, or a twin of it such as a NoVel
  // variant); otherwise std::invalid_argument.
  const Frame& render(const Env& env);

  const RenderInfo& info() const { return info_; }

 private:
  RenderInfo info_;
  Canvas canvas_;
};

// Writes a frame as an 8-bit RGB PNG (Cairo's PNG writer). Throws recur::Error naming the path
// and the reason (e.g. the directory does not exist or is not writable).
void write_png(const Frame& frame, const std::string& path);

}  // namespace recur::envs::render
