// Rendering (envs/render/): every registered env draws a non-blank frame of its render_info()
// size that follows its state; NoVel variants draw their base env's picture; the Canvas maps
// and composes transforms; write_png round-trips (and names its error); no allocation per
// render after the first. The classic-control scenes themselves: render_scenes_test.cc.
#include <cairo.h>
#include <doctest/doctest.h>

#include <unistd.h>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numbers>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "envs/registry.h"
#include "envs/render/canvas.h"
#include "envs/render/renderer.h"
#include "tests/envs/render_frames.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"

namespace fs = std::filesystem;
using namespace render_test;

namespace {

// A minimal env that does not render.
class Blind final : public Env {
 public:
  Blind() : Env(recur::envs::Space::box(0.0f, 1.0f, {1}), recur::envs::Space::discrete(2)) {}

 private:
  void reset_impl(recur::Rng&, std::optional<uint64_t>) override {}
  Outcome step_impl(std::span<const float>) override { return {}; }
  void observe(std::span<float> obs) const override { obs[0] = 0; }
};

}  // namespace

TEST_CASE("render: every registered env draws a frame of its size that follows its state") {
  for (const std::string& id : recur::envs::registry().ids()) {
    CAPTURE(id);
    auto env = make(id);
    const RenderInfo info = env->render_info();
    REQUIRE(info.renders());
    CHECK(info.width > 0);
    CHECK(info.height > 0);
    Renderer renderer(*env);
    CHECK(renderer.info().fps == info.fps);

    env->reset(5);
    const Frame& first = renderer.render(*env);
    REQUIRE(first.width == info.width);
    REQUIRE(first.height == info.height);
    REQUIRE(first.pixels.size() == static_cast<size_t>(info.width * info.height * 3));
    // Not blank: the scenes' sparsest frame (MountainCar's thin track) still has ~2500 pixels.
    CHECK(count_non_white(first) > 1000);
    // A white background or ground: half the frame in most scenes; LunarLander's sky is black
    // (Gymnasium's own frame is ~23% white) and BipedalWalker's sky is blue, its ground green.
    if (id.find("LunarLander") != std::string::npos)
      CHECK(count_color(first, {255, 255, 255}) > info.width * info.height / 8);
    else if (id.find("BipedalWalker") == std::string::npos)
      CHECK(count_color(first, {255, 255, 255}) > info.width * info.height / 2);
    const std::vector<uint8_t> reset_pixels = first.pixels;

    // The same state draws the same frame.
    CHECK(differing_pixels(reset_pixels, renderer.render(*env)) == 0);

    // A few steps move the picture (the frame of the state after them, not of the reset).
    const auto action = action_of(*env, env->action_space().is_discrete() ? 0.0f : 1.0f);
    for (int t = 0; t < 5 && !env->needs_reset(); ++t) env->step(action);
    const Frame& later = renderer.render(*env);
    CHECK(differing_pixels(reset_pixels, later) > 20);

    // And set_state back to the reset state draws the reset frame again (Pendulum keeps its
    // torque arrow: the last action is not state; Box2D envs have no flat state).
    if (id.find("Pendulum") == std::string::npos && env->state_size() > 0) {
      auto twin = make(id);
      std::vector<double> state(static_cast<size_t>(twin->state_size()));
      twin->reset(5);
      twin->get_state(state);
      env->set_state(state);
      CHECK(differing_pixels(reset_pixels, renderer.render(*env)) == 0);
    }
  }
}

TEST_CASE("render: NoVel variants draw their base env's frames") {
  int pairs = 0;
  for (const std::string& id : recur::envs::registry().ids()) {
    const auto at = id.find("NoVel");
    if (at == std::string::npos) continue;
    const std::string base_id = id.substr(0, at) + id.substr(at + 5);
    CAPTURE(id);
    auto novel = make(id);
    auto base = make(base_id);
    CHECK(novel->render_info().width == base->render_info().width);
    CHECK(novel->render_info().height == base->render_info().height);
    CHECK(novel->render_info().fps == base->render_info().fps);
    Renderer rn(*novel), rb(*base);
    novel->reset(11);
    base->reset(11);
    CHECK(differing_pixels(rb.render(*base).pixels, rn.render(*novel)) == 0);
    const auto action = action_of(*base, base->action_space().is_discrete() ? 1.0f : -0.7f);
    for (int t = 0; t < 8; ++t) {
      novel->step(action);
      base->step(action);
      CHECK(differing_pixels(rb.render(*base).pixels, rn.render(*novel)) == 0);
    }
    ++pairs;
  }
  CHECK(pairs >= 6);  // classic control's 4, LunarLander's 2 (and BipedalWalker's, if any)
}

TEST_CASE("render: render fps and sizes as Gymnasium's metadata") {
  struct Case {
    const char* id;
    int width, height, fps;
  };
  for (const Case& c :
       {Case{"CartPole-v1", 600, 400, 50}, Case{"CartPole-v0", 600, 400, 50},
        Case{"Pendulum-v1", 500, 500, 30}, Case{"MountainCar-v0", 600, 400, 30},
        Case{"MountainCarContinuous-v0", 600, 400, 30}, Case{"Acrobot-v1", 500, 500, 15},
        Case{"RepeatPreviousEasy-v0", 600, 400, 4}, Case{"LunarLander-v3", 600, 400, 50},
        Case{"LunarLanderContinuous-v3", 600, 400, 50}, Case{"BipedalWalker-v3", 600, 400, 50},
        Case{"BipedalWalkerHardcore-v3", 600, 400, 50}}) {
    CAPTURE(c.id);
    const RenderInfo info = make(c.id)->render_info();
    CHECK(info.width == c.width);
    CHECK(info.height == c.height);
    CHECK(info.fps == c.fps);
  }
}

TEST_CASE("render: an env without a picture is refused, naming it") {
  Blind blind;
  CHECK_FALSE(blind.render_info().renders());
  try {
    Renderer renderer(blind);
    FAIL("Renderer accepted an env that does not render");
  } catch (const recur::Error& e) {
    CHECK(std::string(e.what()).find(blind.id()) != std::string::npos);
  }
  recur::envs::render::Canvas canvas(10, 10);
  try {
    blind.draw(canvas);
    FAIL("the default draw() drew");
  } catch (const recur::Error& e) {
    CHECK(std::string(e.what()).find("cannot render") != std::string::npos);
  }
  // A renderer built for one size refuses an env of another.
  auto cartpole = make("CartPole-v1");
  auto pendulum = make("Pendulum-v1");
  cartpole->reset(0);
  pendulum->reset(0);
  Renderer renderer(*cartpole);
  CHECK_THROWS_AS(renderer.render(*pendulum), std::invalid_argument);
}

TEST_CASE("render: Canvas maps world points to y-up pixels and composes pushed transforms") {
  using recur::envs::render::Canvas;
  using recur::envs::render::Vec2;
  Canvas canvas(100, 80);
  const Color red{255, 0, 0}, blue{0, 0, 255};
  // Identity: y-up pixels; (10, 5) is the centre of column 10, row 80 - 1 - 5 = 74.
  canvas.fill_circle({10, 5}, 2.5, red);
  // Metres at 10 px/m from (50, 40), as a Box2D scene; a body at (1, 0) turned a quarter
  // counter-clockwise: its local box [0, 2] x [-0.5, 0.5] stands up from (60, 40) to (60, 60).
  canvas.set_transform(10, {50, 40});
  canvas.push();
  canvas.translate({1, 0});
  canvas.rotate(std::numbers::pi / 2);
  const Vec2 box[] = {{0, -0.5}, {0, 0.5}, {2, 0.5}, {2, -0.5}};
  canvas.fill_polygon(box, blue);
  canvas.pop();
  canvas.fill_polygon(box, red);  // untransformed body frame: x from 50 to 70, y 35..45
  CHECK_THROWS_AS(canvas.pop(), std::logic_error);
  const Frame& f = canvas.frame();
  REQUIRE(f.width == 100);
  REQUIRE(f.height == 80);
  CHECK(pixel(f, 10, 74) == red);
  CHECK(pixel(f, 10, 70) == Color{255, 255, 255});
  CHECK(pixel(f, 60, 79 - 55) == blue);
  CHECK(pixel(f, 60, 79 - 48) == blue);
  CHECK(pixel(f, 66, 79 - 55) == Color{255, 255, 255});
  CHECK(pixel(f, 68, 79 - 40) == red);
  CHECK(pixel(f, 52, 79 - 40) == red);
  CHECK(pixel(f, 75, 79 - 40) == Color{255, 255, 255});
  // A 1 px line on integer y-up coordinates covers exactly one row.
  canvas.clear({255, 255, 255});
  canvas.line({-1, 20}, {101, 20}, {0, 0, 0}, 1);
  const uint8_t* const buffer = f.pixels.data();
  const Frame& g = canvas.frame();
  CHECK(g.pixels.data() == buffer);  // the frame's buffer is reused
  CHECK(pixel(g, 50, 59) == Color{0, 0, 0});
  CHECK(pixel(g, 50, 58) == Color{255, 255, 255});
  CHECK(pixel(g, 50, 60) == Color{255, 255, 255});
  // A mirrored frame (scale(-1, 1)) draws the mirror image.
  canvas.clear({255, 255, 255});
  canvas.push();
  canvas.translate({50, 40});
  canvas.scale(-1, 1);
  const Vec2 right[] = {{5, -3}, {5, 3}, {15, 3}, {15, -3}};
  canvas.fill_polygon(right, blue);
  canvas.pop();
  const Frame& m = canvas.frame();
  CHECK(pixel(m, 40, 39) == blue);
  CHECK(pixel(m, 60, 39) == Color{255, 255, 255});
  CHECK_THROWS_AS(Canvas(0, 10), std::invalid_argument);
}

// ---- Geometry: Gymnasium's numbers (Gymnasium's classic_control/*.py render()). Rows are image
// rows (row 0 at the top): Gymnasium's y-up y lands on row height - 1 - y after its flip. ----

TEST_CASE("render: write_png round-trips through Cairo's PNG reader") {
  const fs::path dir =
      fs::temp_directory_path() / ("recur_render_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const Frame f = frame_at("Acrobot-v1", {0.7, -1.2, 0.0, 0.0});
  const std::string path = (dir / "acrobot.png").string();
  recur::envs::render::write_png(f, path);

  cairo_surface_t* png = cairo_image_surface_create_from_png(path.c_str());
  REQUIRE(cairo_surface_status(png) == CAIRO_STATUS_SUCCESS);
  REQUIRE(cairo_image_surface_get_width(png) == f.width);
  REQUIRE(cairo_image_surface_get_height(png) == f.height);
  const unsigned char* data = cairo_image_surface_get_data(png);
  const int stride = cairo_image_surface_get_stride(png);
  int mismatches = 0;
  for (int y = 0; y < f.height; ++y)
    for (int x = 0; x < f.width; ++x) {
      uint32_t v;
      std::memcpy(&v, data + static_cast<size_t>(y) * stride + 4 * x, 4);
      const Color c = pixel(f, x, y);
      mismatches += ((v >> 16) & 255) != c.r || ((v >> 8) & 255) != c.g || (v & 255) != c.b;
    }
  cairo_surface_destroy(png);
  CHECK(mismatches == 0);

  // An unwritable place: the error names the path and the reason.
  const std::string bad = (dir / "no_such_dir" / "frame.png").string();
  try {
    recur::envs::render::write_png(f, bad);
    FAIL("write_png wrote into a missing directory");
  } catch (const recur::Error& e) {
    const std::string what = e.what();
    CHECK(what.find(bad) != std::string::npos);
    CHECK(what.find("No such file or directory") != std::string::npos);
  }
  CHECK_THROWS_AS(recur::envs::render::write_png(Frame{}, path), std::invalid_argument);
  fs::remove_all(dir);
}

TEST_CASE("render: rendering allocates nothing after the first frame") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  for (const std::string& id : recur::envs::registry().ids()) {
    CAPTURE(id);
    auto env = make(id);
    env->reset(1);
    Renderer renderer(*env);
    renderer.render(*env);  // warm-up: the frame buffer
    const auto action = action_of(*env, env->action_space().is_discrete() ? 1.0f : 0.5f);
    recur::test::AllocationCounter counter;
    for (int t = 0; t < 20 && !env->needs_reset(); ++t) {
      env->step(action);
      renderer.render(*env);
    }
    CHECK(counter.count() == 0);
  }
}
