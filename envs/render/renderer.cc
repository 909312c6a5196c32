#include "envs/render/renderer.h"

#include "core/error.h"

namespace recur::envs::render {
namespace {

RenderInfo checked_info(const Env& env) {
  const RenderInfo info = env.render_info();
  RECUR_CHECK(info.renders(), "{} cannot render (it has no render_info(): fps 0)", env.id());
  RECUR_CHECK(info.width > 0 && info.height > 0, "{}: render size {}x{} is not a picture", env.id(),
              info.width, info.height);
  return info;
}

}  // namespace

Renderer::Renderer(const Env& env) : info_(checked_info(env)), canvas_(info_.width, info_.height) {}

const Frame& Renderer::render(const Env& env) {
  const RenderInfo info = env.render_info();
  RECUR_CHECK_ARG(info.width == info_.width && info.height == info_.height,
                  "Renderer: {} renders {}x{}, this renderer was built for {}x{}", env.id(),
                  info.width, info.height, info_.width, info_.height);
  canvas_.clear(kWhite);
  env.draw(canvas_);
  return canvas_.frame();
}

}  // namespace recur::envs::render
