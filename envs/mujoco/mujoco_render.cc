#include "envs/mujoco/mujoco_render.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <span>

#include <mujoco/mujoco.h>

namespace recur::envs {
namespace {

using render::Canvas;
using render::Color;
using render::Vec2;

constexpr int kCircle = 24;  // points per projected circle (cylinders, ellipsoids)
constexpr double kOutlinePx = 1.5;
constexpr Color kFloorLine{90, 100, 90};
constexpr Color kTick{110, 120, 110};
constexpr Color kGrid{205, 212, 205};
constexpr Color kGridMajor{170, 180, 170};

double dot(const double* a, const double* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// Local axis k of a geom's frame, in world coordinates (column k of the row-major xmat).
void axis(const double* xmat, int k, double out[3]) {
  out[0] = xmat[k];
  out[1] = xmat[3 + k];
  out[2] = xmat[6 + k];
}

Color to_color(const float* rgba, double shade = 1.0) {
  // Blend with the white background by alpha: the Canvas paints opaque colours only.
  auto channel = [&](int i) {
    const double v = std::clamp(static_cast<double>(rgba[i]) * shade, 0.0, 1.0);
    const double a = std::clamp(static_cast<double>(rgba[3]), 0.0, 1.0);
    return static_cast<uint8_t>(std::lround(255.0 * (a * v + (1.0 - a))));
  };
  return {channel(0), channel(1), channel(2)};
}

// MuJoCo's rule: a geom with a material shows the material's colour unless its own rgba was set
// (differs from the default grey).
const float* geom_rgba(const mjModel* m, int g) {
  const float* rgba = m->geom_rgba + 4 * g;
  const int mat = m->geom_matid[g];
  const bool default_grey =
      rgba[0] == 0.5f && rgba[1] == 0.5f && rgba[2] == 0.5f && rgba[3] == 1.0f;
  return mat >= 0 && default_grey ? m->mat_rgba + 4 * mat : rgba;
}

// A floor plane: a plane geom whose normal is world z.
bool is_floor(const mjModel* m, int g) {
  return m->geom_type[g] == mjGEOM_PLANE && m->geom_quat[4 * g] == 1.0;
}

// Convex hull (Andrew's monotone chain) of points[0, n) into hull; returns its size. The points
// are sorted in place.
int convex_hull(Vec2* points, int n, Vec2* hull) {
  std::sort(points, points + n,
            [](const Vec2& a, const Vec2& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  auto cross = [](const Vec2& o, const Vec2& a, const Vec2& b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
  };
  int k = 0;
  for (int i = 0; i < n; ++i) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], points[i]) <= 0) --k;
    hull[k++] = points[i];
  }
  for (int i = n - 2, lower = k + 1; i >= 0; --i) {
    while (k >= lower && cross(hull[k - 2], hull[k - 1], points[i]) <= 0) --k;
    hull[k++] = points[i];
  }
  return std::max(k - 1, 0);
}

// The world direction of each hinge axis at qpos0 (the body frames composed from the model).
void hinge_axes(const mjModel* m, int& along_y, int& along_z, int& hinges) {
  along_y = along_z = hinges = 0;
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] != mjJNT_HINGE) continue;
    double q[4] = {1, 0, 0, 0};
    for (int b = m->jnt_bodyid[j]; b > 0; b = m->body_parentid[b]) {
      double composed[4];
      mju_mulQuat(composed, m->body_quat + 4 * b, q);
      mju_copy4(q, composed);
    }
    double world[3];
    mju_rotVecQuat(world, m->jnt_axis + 3 * j, q);
    ++hinges;
    if (std::abs(world[1]) > 0.9) ++along_y;
    if (std::abs(world[2]) > 0.9) ++along_z;
  }
}

}  // namespace

MujocoRenderer::MujocoRenderer(const mjModel* model, MujocoView view)
    : m_(model), kind_(view.kind) {
  const mjModel* m = m_;
  if (kind_ == MujocoView::Kind::kAuto) {
    bool free = false;
    for (int j = 0; j < m->njnt; ++j) free = free || m->jnt_type[j] == mjJNT_FREE;
    int along_y = 0, along_z = 0, hinges = 0;
    hinge_axes(m, along_y, along_z, hinges);
    if (free || hinges == 0)
      kind_ = MujocoView::Kind::kOblique;
    else if (along_y == hinges)
      kind_ = MujocoView::Kind::kSide;
    else if (along_z == hinges)
      kind_ = MujocoView::Kind::kTop;
    else
      kind_ = MujocoView::Kind::kOblique;
  }
  double elevation = 0;
  switch (kind_) {
    case MujocoView::Kind::kSide:
      elevation = 0;
      anchor_y_ = 0.2;
      break;
    case MujocoView::Kind::kTop:
      elevation = -90;
      anchor_y_ = 0.5;
      break;
    default:
      elevation = view.elevation_deg;
      anchor_y_ = 0.35;
      break;
  }
  const double e = elevation * std::numbers::pi / 180.0;
  basis_ = {{1, 0, 0}, {0, -std::sin(e), std::cos(e)}, {0, std::cos(e), std::sin(e)}};
  // Gymnasium's locomotion cameras see ~3.3 m (distance 4, fovy 45); smaller scenes (Reacher,
  // InvertedPendulum) are framed by their extent.
  width_m_ = view.width_m > 0 ? view.width_m
                              : (m->stat.extent >= 3 ? 3.5 : std::max(0.5, 1.6 * m->stat.extent));

  bool has_floor = false;
  for (int g = 0; g < m->ngeom; ++g) {
    if (!is_floor(m, g)) continue;
    const double z = m->geom_pos[3 * g + 2];
    floor_z_ = has_floor ? std::max(floor_z_, z) : z;
    has_floor = true;
  }
  if (!has_floor) {
    floor_z_ = m->stat.center[2];
    anchor_y_ = 0.5;
  }
  order_.reserve(static_cast<size_t>(m->ngeom));
  depth_.assign(static_cast<size_t>(m->ngeom), 0.0);
}

void MujocoRenderer::look_at(const mjData* d, double out[3]) const {
  // Body 1: the torso of the locomotion robots (its xpos, as the geoms', from the last forward
  // pass). The side view keeps y = 0: depth does not move the picture.
  const bool tracks = m_->nbody > 1;
  out[0] = tracks ? d->xpos[3] : 0.0;
  out[1] = tracks && kind_ != MujocoView::Kind::kSide ? d->xpos[4] : 0.0;
  out[2] = floor_z_;
}

Vec2 MujocoRenderer::project(const mjData* d, const double world[3], int width, int height) const {
  double c[3];
  look_at(d, c);
  const double p[3] = {world[0] - c[0], world[1] - c[1], world[2] - c[2]};
  const double scale = width / width_m_;
  return {width / 2.0 + scale * dot(p, basis_.right),
          height * anchor_y_ + scale * dot(p, basis_.up)};
}

void MujocoRenderer::draw(const mjData* d, Canvas& canvas) {
  const mjModel* m = m_;
  double c[3];
  look_at(d, c);
  const double scale = canvas.width() / width_m_;
  canvas.set_transform(scale, {canvas.width() / 2.0, canvas.height() * anchor_y_});

  order_.clear();
  for (int g = 0; g < m->ngeom; ++g) {
    if (m->geom_group[g] > 2 || geom_rgba(m, g)[3] <= 0.0f) continue;
    if (m->geom_type[g] == mjGEOM_PLANE) {
      if (is_floor(m, g)) draw_floor(g, c, canvas);  // behind everything
      continue;
    }
    const double* x = d->geom_xpos + 3 * g;
    const double p[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
    depth_[static_cast<size_t>(g)] = dot(p, basis_.forward);
    order_.push_back(g);  // within the capacity reserved at construction
  }
  std::sort(order_.begin(), order_.end(), [&](int a, int b) {
    const double da = depth_[static_cast<size_t>(a)], db = depth_[static_cast<size_t>(b)];
    return da > db || (da == db && a < b);  // far first; ties in model order
  });
  for (int g : order_) draw_geom(d, g, c, canvas);
}

void MujocoRenderer::draw_floor(int g, const double c[3], Canvas& canvas) const {
  const mjModel* m = m_;
  const double z = m->geom_pos[3 * g + 2] - c[2];
  const double half_w = width_m_ / 2;
  const double half_h = half_w * canvas.height() / canvas.width();
  // The plane's extent (MuJoCo's size 0 means infinite).
  const double sx = m->geom_size[3 * g] > 0 ? m->geom_size[3 * g] : 1e9;
  const double sy = m->geom_size[3 * g + 1] > 0 ? m->geom_size[3 * g + 1] : 1e9;
  const double px = m->geom_pos[3 * g], py = m->geom_pos[3 * g + 1];
  const double x0 = std::max(c[0] - half_w - 1, px - sx), x1 = std::min(c[0] + half_w + 1, px + sx);
  if (x0 >= x1) return;

  if (kind_ == MujocoView::Kind::kSide) {
    // Edge-on: a band below the ground line, ticks every 0.2 m and labels every metre.
    const Color band = to_color(geom_rgba(m, g));
    const double bottom = -half_h * 3;
    const std::array<Vec2, 4> quad = {Vec2{x0 - c[0], z}, Vec2{x1 - c[0], z},
                                      Vec2{x1 - c[0], bottom}, Vec2{x0 - c[0], bottom}};
    canvas.fill_polygon(quad, band);
    canvas.line({x0 - c[0], z}, {x1 - c[0], z}, kFloorLine, 2.0);
    const double px_m = canvas.width() / width_m_;
    for (int k = static_cast<int>(std::ceil(x0 / 0.2)); k * 0.2 <= x1; ++k) {
      const double x = k * 0.2 - c[0];
      const bool major = k % 5 == 0;
      canvas.line({x, z}, {x, z - (major ? 14.0 : 6.0) / px_m}, kTick, major ? 2.0 : 1.0);
      if (major) {
        char label[24];
        std::snprintf(label, sizeof label, "%d m", k / 5);
        canvas.text({x, z - 26.0 / px_m}, label, 12.0, kTick, render::TextAlign::kCenter);
      }
    }
    return;
  }
  // Seen from above: a grid every 0.5 m (darker every metre) over the visible part of the plane.
  const double sin_e = std::max(0.2, std::abs(basis_.forward[2]));
  const double reach_y = half_h / sin_e + 1;
  const double y0 = std::max(c[1] - reach_y, py - sy), y1 = std::min(c[1] + reach_y, py + sy);
  if (y0 >= y1) return;
  auto to_view = [&](double wx, double wy) {
    const double p[3] = {wx - c[0], wy - c[1], z};
    return Vec2{dot(p, basis_.right), dot(p, basis_.up)};
  };
  for (int k = static_cast<int>(std::ceil(x0 / 0.5)); k * 0.5 <= x1; ++k) {
    const bool major = k % 2 == 0;
    canvas.line(to_view(k * 0.5, y0), to_view(k * 0.5, y1), major ? kGridMajor : kGrid,
                major ? 1.5 : 1.0);
  }
  for (int k = static_cast<int>(std::ceil(y0 / 0.5)); k * 0.5 <= y1; ++k) {
    const bool major = k % 2 == 0;
    canvas.line(to_view(x0, k * 0.5), to_view(x1, k * 0.5), major ? kGridMajor : kGrid,
                major ? 1.5 : 1.0);
  }
}

void MujocoRenderer::draw_geom(const mjData* d, int g, const double c[3], Canvas& canvas) const {
  const mjModel* m = m_;
  const double* pos = d->geom_xpos + 3 * g;
  const double* xmat = d->geom_xmat + 9 * g;
  const double* size = m->geom_size + 3 * g;
  const float* rgba = geom_rgba(m, g);
  const Color fill = to_color(rgba);
  const Color outline = to_color(rgba, 0.55);
  const double w = kOutlinePx * width_m_ / canvas.width();  // outline width, metres

  auto view = [&](const double p[3]) {
    const double q[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    return Vec2{dot(q, basis_.right), dot(q, basis_.up)};
  };
  auto offset = [&](const double* axis_dir, double t, double out[3]) {
    for (int i = 0; i < 3; ++i) out[i] = pos[i] + t * axis_dir[i];
  };
  // A stadium: the projection of a capsule (two circles and the quad between them).
  auto stadium = [&](Vec2 a, Vec2 b, double r, Color color) {
    canvas.fill_circle(a, r, color);
    canvas.fill_circle(b, r, color);
    const double dx = b.x - a.x, dy = b.y - a.y, len = std::hypot(dx, dy);
    if (len < 1e-9) return;
    const double nx = -dy / len * r, ny = dx / len * r;
    const std::array<Vec2, 4> quad = {Vec2{a.x + nx, a.y + ny}, Vec2{b.x + nx, b.y + ny},
                                      Vec2{b.x - nx, b.y - ny}, Vec2{a.x - nx, a.y - ny}};
    canvas.fill_polygon(quad, color);
  };

  switch (m->geom_type[g]) {
    case mjGEOM_SPHERE: {
      const Vec2 p = view(pos);
      canvas.fill_circle(p, size[0] + w, outline);
      canvas.fill_circle(p, size[0], fill);
      return;
    }
    case mjGEOM_CAPSULE: {
      double z[3], a[3], b[3];
      axis(xmat, 2, z);
      offset(z, -size[1], a);
      offset(z, size[1], b);
      stadium(view(a), view(b), size[0] + w, outline);
      stadium(view(a), view(b), size[0], fill);
      return;
    }
    case mjGEOM_ELLIPSOID: {
      // The image of the unit sphere under A = P R S (2x3) is the ellipse L u, |u| = 1, with
      // L L^T = A A^T (Cholesky).
      double cols[3][3];
      for (int k = 0; k < 3; ++k) axis(xmat, k, cols[k]);
      double a[2][3];
      for (int k = 0; k < 3; ++k) {
        a[0][k] = dot(cols[k], basis_.right) * size[k];
        a[1][k] = dot(cols[k], basis_.up) * size[k];
      }
      const double s00 = dot(a[0], a[0]), s01 = dot(a[0], a[1]), s11 = dot(a[1], a[1]);
      const double l00 = std::sqrt(std::max(s00, 1e-18));
      const double l10 = s01 / l00;
      const double l11 = std::sqrt(std::max(s11 - l10 * l10, 0.0));
      const Vec2 p = view(pos);
      std::array<Vec2, kCircle> outer{}, inner{};
      for (int i = 0; i < kCircle; ++i) {
        const double t = 2 * std::numbers::pi * i / kCircle;
        const double u = std::cos(t), v = std::sin(t);
        const Vec2 e{l00 * u, l10 * u + l11 * v};
        const double n = std::max(std::hypot(e.x, e.y), 1e-12);
        inner[static_cast<size_t>(i)] = {p.x + e.x, p.y + e.y};
        outer[static_cast<size_t>(i)] = {p.x + e.x * (1 + w / n), p.y + e.y * (1 + w / n)};
      }
      canvas.fill_polygon(outer, outline);
      canvas.fill_polygon(inner, fill);
      return;
    }
    case mjGEOM_CYLINDER: {
      double ax[3][3];
      for (int k = 0; k < 3; ++k) axis(xmat, k, ax[k]);
      std::array<Vec2, 2 * kCircle> points{};
      std::array<Vec2, 2 * kCircle + 2> hull{};
      std::array<Vec2, kCircle> cap{};
      // The end cap facing the camera (its normal against the view direction).
      const double facing = dot(ax[2], basis_.forward) < 0 ? 1.0 : -1.0;
      for (int end = 0; end < 2; ++end) {
        const double h = end == 0 ? -size[1] : size[1];
        for (int i = 0; i < kCircle; ++i) {
          const double t = 2 * std::numbers::pi * i / kCircle;
          double p[3];
          for (int k = 0; k < 3; ++k)
            p[k] =
                pos[k] + h * ax[2][k] + size[0] * (std::cos(t) * ax[0][k] + std::sin(t) * ax[1][k]);
          const Vec2 v = view(p);
          points[static_cast<size_t>(end * kCircle + i)] = v;
          if (h * facing > 0) cap[static_cast<size_t>(i)] = v;
        }
      }
      const int n = convex_hull(points.data(), 2 * kCircle, hull.data());
      const std::span<const Vec2> outline_points(hull.data(), static_cast<size_t>(n));
      canvas.fill_polygon(outline_points, to_color(rgba, 0.8));
      canvas.fill_polygon(cap, fill);
      canvas.stroke_polygon(outline_points, outline, kOutlinePx);
      return;
    }
    default: {
      // Box; meshes and height fields as their bounding box (geom_aabb: centre, half sizes).
      double half[3] = {size[0], size[1], size[2]};
      double center[3] = {pos[0], pos[1], pos[2]};
      double ax[3][3];
      for (int k = 0; k < 3; ++k) axis(xmat, k, ax[k]);
      if (m->geom_type[g] != mjGEOM_BOX) {
        const double* aabb = m->geom_aabb + 6 * g;
        for (int k = 0; k < 3; ++k) {
          half[k] = aabb[3 + k];
          for (int i = 0; i < 3; ++i) center[i] += aabb[k] * ax[k][i];
        }
      }
      // A light from the camera's upper left.
      double light[3];
      for (int i = 0; i < 3; ++i)
        light[i] = -basis_.forward[i] + 0.5 * basis_.up[i] - 0.3 * basis_.right[i];
      const double light_norm = std::sqrt(dot(light, light));
      for (int k = 0; k < 3; ++k) {
        for (int sign = -1; sign <= 1; sign += 2) {
          const double facing = sign * dot(ax[k], basis_.forward);
          if (facing >= 0) continue;  // turned away from the camera
          const int i1 = (k + 1) % 3, i2 = (k + 2) % 3;
          std::array<Vec2, 4> face{};
          const double corners[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
          for (int q = 0; q < 4; ++q) {
            double p[3];
            for (int i = 0; i < 3; ++i)
              p[i] = center[i] + sign * half[k] * ax[k][i] + corners[q][0] * half[i1] * ax[i1][i] +
                     corners[q][1] * half[i2] * ax[i2][i];
            face[static_cast<size_t>(q)] = view(p);
          }
          const double lit = std::max(0.0, sign * dot(ax[k], light) / light_norm);
          canvas.fill_polygon(face, to_color(rgba, 0.6 + 0.4 * lit));
          canvas.stroke_polygon(face, outline, 1.0);
        }
      }
      return;
    }
  }
}

}  // namespace recur::envs
