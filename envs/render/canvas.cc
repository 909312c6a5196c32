#include "envs/render/canvas.h"

#include <cairo.h>

#include <algorithm>
#include <cstring>
#include <numbers>
#include <stdexcept>

#include "core/error.h"

namespace recur::envs::render {

struct Canvas::Impl {
  cairo_surface_t* surface = nullptr;
  cairo_t* cr = nullptr;
  int pushed = 0;       // push() depth, each one a cairo_save
  char text[256] = {};  // NUL-terminated copy of a text() argument (no allocation per call)

  ~Impl() {
    if (cr) cairo_destroy(cr);
    if (surface) cairo_surface_destroy(surface);
  }
};

namespace {

void set_color(cairo_t* cr, Color c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

// Strokes the current path with a width in pixels: Cairo keeps paths in device space, so the
// path survives dropping the transform that only the line width should not see.
void stroke_px(cairo_t* cr, Color c, double width_px) {
  cairo_save(cr);
  cairo_identity_matrix(cr);
  cairo_set_line_width(cr, width_px);
  set_color(cr, c);
  cairo_stroke(cr);
  cairo_restore(cr);
}

void polygon_path(cairo_t* cr, std::span<const Vec2> points) {
  cairo_new_path(cr);
  for (const Vec2& p : points) cairo_line_to(cr, p.x, p.y);
  cairo_close_path(cr);
}

}  // namespace

Canvas::Canvas(int width, int height) : impl_(std::make_unique<Impl>()) {
  RECUR_CHECK_ARG(width >= 1 && height >= 1 && width <= 16384 && height <= 16384,
                  "Canvas: size {}x{} is outside 1..16384 pixels", width, height);
  width_ = width;
  height_ = height;
  impl_->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  RECUR_CHECK(cairo_surface_status(impl_->surface) == CAIRO_STATUS_SUCCESS,
              "Canvas: cannot create a {}x{} Cairo image: {}", width, height,
              cairo_status_to_string(cairo_surface_status(impl_->surface)));
  impl_->cr = cairo_create(impl_->surface);
  RECUR_CHECK(cairo_status(impl_->cr) == CAIRO_STATUS_SUCCESS, "Canvas: cannot draw on Cairo: {}",
              cairo_status_to_string(cairo_status(impl_->cr)));
  cairo_set_antialias(impl_->cr, CAIRO_ANTIALIAS_GRAY);
  cairo_set_line_join(impl_->cr, CAIRO_LINE_JOIN_ROUND);
  frame_.width = width;
  frame_.height = height;
  clear(kWhite);
}

Canvas::~Canvas() = default;
Canvas::Canvas(Canvas&&) noexcept = default;
Canvas& Canvas::operator=(Canvas&&) noexcept = default;

void Canvas::clear(Color color) {
  cairo_t* cr = impl_->cr;
  for (; impl_->pushed > 0; --impl_->pushed) cairo_restore(cr);
  cairo_identity_matrix(cr);
  cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
  set_color(cr, color);
  cairo_paint(cr);
  cairo_set_operator(cr, CAIRO_OPERATOR_OVER);
  set_transform(1.0, {});
}

void Canvas::set_transform(double scale, Vec2 offset) {
  RECUR_CHECK_ARG(scale > 0, "Canvas: transform scale must be > 0, got {}", scale);
  // y-up pixel (px, py) -> Cairo device (px + 0.5, height - 0.5 - py): pixel centres sit at
  // integer y-up coordinates and the picture is flipped, as pygame's after its flip.
  cairo_matrix_t m;
  cairo_matrix_init(&m, scale, 0, 0, -scale, offset.x + 0.5, height_ - 0.5 - offset.y);
  cairo_set_matrix(impl_->cr, &m);
}

void Canvas::push() {
  cairo_save(impl_->cr);
  ++impl_->pushed;
}

void Canvas::pop() {
  if (impl_->pushed == 0) throw std::logic_error("Canvas: pop() without a matching push()");
  cairo_restore(impl_->cr);
  --impl_->pushed;
}

void Canvas::translate(Vec2 by) {
  cairo_translate(impl_->cr, by.x, by.y);
}
void Canvas::rotate(double radians) {
  cairo_rotate(impl_->cr, radians);
}
void Canvas::scale(double sx, double sy) {
  RECUR_CHECK_ARG(sx != 0 && sy != 0, "Canvas: scale({}, {}) would collapse the drawing", sx, sy);
  cairo_scale(impl_->cr, sx, sy);
}

void Canvas::fill_polygon(std::span<const Vec2> points, Color color) {
  if (points.size() < 3) return;
  polygon_path(impl_->cr, points);
  set_color(impl_->cr, color);
  cairo_fill(impl_->cr);
}

void Canvas::stroke_polygon(std::span<const Vec2> points, Color color, double width_px) {
  if (points.size() < 3) return;
  polygon_path(impl_->cr, points);
  stroke_px(impl_->cr, color, width_px);
}

void Canvas::fill_circle(Vec2 center, double radius, Color color) {
  cairo_new_path(impl_->cr);
  cairo_arc(impl_->cr, center.x, center.y, radius, 0, 2 * std::numbers::pi);
  set_color(impl_->cr, color);
  cairo_fill(impl_->cr);
}

void Canvas::stroke_circle(Vec2 center, double radius, Color color, double width_px) {
  cairo_new_path(impl_->cr);
  cairo_arc(impl_->cr, center.x, center.y, radius, 0, 2 * std::numbers::pi);
  cairo_close_path(impl_->cr);
  stroke_px(impl_->cr, color, width_px);
}

void Canvas::stroke_arc(Vec2 center, double radius, double from, double to, Color color,
                        double width_px) {
  cairo_new_path(impl_->cr);
  // User space is y-up, so Cairo's "positive angle" direction is counter-clockwise on screen.
  if (to >= from) {
    cairo_arc(impl_->cr, center.x, center.y, radius, from, to);
  } else {
    cairo_arc_negative(impl_->cr, center.x, center.y, radius, from, to);
  }
  stroke_px(impl_->cr, color, width_px);
}

void Canvas::line(Vec2 a, Vec2 b, Color color, double width_px) {
  const Vec2 points[] = {a, b};
  polyline(points, color, width_px);
}

void Canvas::polyline(std::span<const Vec2> points, Color color, double width_px) {
  if (points.size() < 2) return;
  cairo_new_path(impl_->cr);
  for (const Vec2& p : points) cairo_line_to(impl_->cr, p.x, p.y);
  stroke_px(impl_->cr, color, width_px);
}

void Canvas::text(Vec2 anchor, std::string_view text, double size_px, Color color,
                  TextAlign align) {
  cairo_t* cr = impl_->cr;
  const size_t n = std::min(text.size(), sizeof(impl_->text) - 1);
  std::memcpy(impl_->text, text.data(), n);
  impl_->text[n] = '\0';

  double x = anchor.x, y = anchor.y;
  cairo_user_to_device(cr, &x, &y);
  cairo_save(cr);
  cairo_identity_matrix(cr);  // device space: y down, so glyphs stand upright
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size_px);
  cairo_text_extents_t extents;
  cairo_text_extents(cr, impl_->text, &extents);
  cairo_font_extents_t font;
  cairo_font_extents(cr, &font);
  if (align == TextAlign::kCenter) x -= extents.x_advance / 2;
  if (align == TextAlign::kRight) x -= extents.x_advance;
  y += (font.ascent - font.descent) / 2;  // the anchor at mid-height of the line
  cairo_move_to(cr, x, y);
  set_color(cr, color);
  cairo_show_text(cr, impl_->text);
  cairo_new_path(cr);
  cairo_restore(cr);
}

const Frame& Canvas::frame() {
  cairo_surface_flush(impl_->surface);
  // CAIRO_FORMAT_RGB24: one native-endian uint32 per pixel, 0x00RRGGBB, rows `stride` bytes apart.
  const unsigned char* data = cairo_image_surface_get_data(impl_->surface);
  const int stride = cairo_image_surface_get_stride(impl_->surface);
  RECUR_ASSERT(data != nullptr && stride >= width_ * 4);
  frame_.pixels.resize(static_cast<size_t>(width_) * height_ * 3);
  uint8_t* out = frame_.pixels.data();
  for (int y = 0; y < height_; ++y) {
    const unsigned char* row = data + static_cast<size_t>(y) * stride;
    for (int x = 0; x < width_; ++x) {
      uint32_t v;
      std::memcpy(&v, row + 4 * x, 4);
      *out++ = static_cast<uint8_t>(v >> 16);
      *out++ = static_cast<uint8_t>(v >> 8);
      *out++ = static_cast<uint8_t>(v);
    }
  }
  return frame_;
}

}  // namespace recur::envs::render
