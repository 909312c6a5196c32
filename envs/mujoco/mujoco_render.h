// Drawing a MuJoCo scene with recur's Canvas (Cairo, no OpenGL): every MuJoCo env renders on a
// headless CPU machine. An orthographic camera projects each visible geom of the current mjData
// (geom_xpos, geom_xmat, geom_size, geom_type) onto the canvas, far geoms first (painter's
// order by the depth of their centres):
//   sphere          a circle (its exact orthographic projection)
//   capsule         two circles and the quad between them (exact)
//   ellipsoid       the projected ellipse (exact)
//   box             its faces turned to the camera, shaded by a fixed light
//   cylinder        the hull of its two end circles, and the end cap facing the camera
//   mesh, hfield    their bounding box
//   plane           the floor: a ground line with a band and metre ticks (side view), or a grid
//                   (top and oblique views), so that motion along the floor is visible
// Colours are the geoms' rgba (the material's when the geom keeps MuJoCo's default grey, as
// MuJoCo does); alpha blends with the white background; alpha 0 and groups > 2 (hidden by
// MuJoCo's viewer by default) are not drawn. Outlines separate limbs of one colour.
//
// The camera looks along +y tilted down by an elevation, x to the right (MuJoCo's azimuth 90, as
// Gymnasium's default cameras), and follows body 1 (the torso, or an arm's base):
//   side     elevation 0: x right, z up; follows the torso's x, the floor fixed near the bottom
//            (HalfCheetah, Hopper, Walker2d, InvertedPendulum: bodies moving in the x-z plane)
//   top      elevation -90: x right, y up; follows x and y (Swimmer, Reacher: the x-y plane)
//   oblique  elevation -45 by default (Gymnasium's Ant camera); follows x and y. Ant: a top view
//            would hide the torso's height (its health) and a side view the legs behind it.
// kAuto picks from the model: a free joint -> oblique; all hinge axes along y -> side; all along
// z -> top; otherwise oblique.
//
// draw() allocates nothing: its buffers are sized when the renderer is made.
#pragma once

#include <vector>

#include "envs/render/canvas.h"

struct mjModel_;
struct mjData_;

namespace recur::envs {

struct MujocoView {
  enum class Kind { kAuto, kSide, kTop, kOblique };
  Kind kind = Kind::kAuto;
  double width_m = 0;          // metres across the frame; 0 = from the model's extent
  double elevation_deg = -45;  // of the oblique view
};

class MujocoRenderer {
 public:
  MujocoRenderer(const mjModel_* model, MujocoView view);

  // Paints d's geoms onto `canvas` (cleared to white by the caller).
  void draw(const mjData_* d, render::Canvas& canvas);

  // The resolved view (kind never kAuto) and the camera's basis, for tests.
  MujocoView::Kind kind() const { return kind_; }
  // Where a world point lands, in y-up pixels, given d's camera position.
  render::Vec2 project(const mjData_* d, const double world[3], int width, int height) const;

 private:
  struct Basis {
    double right[3], up[3], forward[3];
  };
  void look_at(const mjData_* d, double out[3]) const;
  void draw_floor(int geom, const double center[3], render::Canvas& canvas) const;
  void draw_geom(const mjData_* d, int geom, const double center[3], render::Canvas& canvas) const;

  const mjModel_* m_;
  MujocoView::Kind kind_;
  Basis basis_{};
  double width_m_ = 0;
  double floor_z_ = 0;         // the highest floor plane's z: the camera's fixed height
  double anchor_y_ = 0.5;      // where the camera's point sits, as a fraction of the height
  std::vector<int> order_;     // geoms to draw, sorted far to near
  std::vector<double> depth_;  // per geom
};

}  // namespace recur::envs
