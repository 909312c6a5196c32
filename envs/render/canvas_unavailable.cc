// Canvas and write_png in a build without Cairo (-DRECUR_RECORDING=OFF, see CMakeLists.txt): no
// Canvas can be made, so every other member is unreachable and does nothing.
#include "core/error.h"
#include "core/recording_unavailable.h"
#include "envs/render/canvas.h"
#include "envs/render/renderer.h"

namespace recur::envs::render {

struct Canvas::Impl {};

Canvas::Canvas(int, int) {
  throw Error(kRecordingUnavailable);
}
Canvas::~Canvas() = default;
Canvas::Canvas(Canvas&&) noexcept = default;
Canvas& Canvas::operator=(Canvas&&) noexcept = default;
void Canvas::clear(Color) {}
void Canvas::set_transform(double, Vec2) {}
void Canvas::push() {}
void Canvas::pop() {}
void Canvas::translate(Vec2) {}
void Canvas::rotate(double) {}
void Canvas::scale(double, double) {}
void Canvas::fill_polygon(std::span<const Vec2>, Color) {}
void Canvas::stroke_polygon(std::span<const Vec2>, Color, double) {}
void Canvas::fill_circle(Vec2, double, Color) {}
void Canvas::stroke_circle(Vec2, double, Color, double) {}
void Canvas::stroke_arc(Vec2, double, double, double, Color, double) {}
void Canvas::line(Vec2, Vec2, Color, double) {}
void Canvas::polyline(std::span<const Vec2>, Color, double) {}
void Canvas::text(Vec2, std::string_view, double, Color, TextAlign) {}
const Frame& Canvas::frame() {
  return frame_;
}

void write_png(const Frame&, const std::string&) {
  throw Error(kRecordingUnavailable);
}

}  // namespace recur::envs::render
