// The classic-control scenes sit where Gymnasium's numbers put them (Gymnasium's
// classic_control/*.py render()) and match two sets of references in tests/data/render/:
//   recur_<id>.txt      recur's own frame at a fixed state (block means and exact-colour pixel
//                       counts), written by this test with RECUR_UPDATE_RENDER_REFERENCES=1; it
//                       catches any change in the pictures.
//   gymnasium_<id>.txt  Gymnasium 1.4's frame at the same state (gen_gymnasium_frames.py); it
//                       bounds the distance to the picture recur ports.
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

namespace fs = std::filesystem;
using namespace render_test;

namespace {

constexpr int kBlock = 20;
const std::array<Color, 8> kPalette = {{{255, 255, 255},
                                        {0, 0, 0},
                                        {202, 152, 101},
                                        {129, 132, 203},
                                        {204, 77, 77},
                                        {128, 128, 128},
                                        {204, 204, 0},
                                        {0, 204, 204}}};

struct Reference {
  int width = 0, height = 0;
  std::vector<std::array<int, 3>> blocks;  // (height / kBlock, width / kBlock) mean RGB
  std::vector<int> color_counts;           // per kPalette entry
};

Reference reduce(const Frame& f) {
  Reference r;
  r.width = f.width;
  r.height = f.height;
  const int bw = f.width / kBlock, bh = f.height / kBlock;
  r.blocks.assign(static_cast<size_t>(bw * bh), {0, 0, 0});
  for (int by = 0; by < bh; ++by)
    for (int bx = 0; bx < bw; ++bx) {
      std::array<long, 3> sum{};
      for (int y = by * kBlock; y < (by + 1) * kBlock; ++y)
        for (int x = bx * kBlock; x < (bx + 1) * kBlock; ++x)
          for (int c = 0; c < 3; ++c) sum[c] += f.at(x, y)[c];
      for (int c = 0; c < 3; ++c)  // floor(mean + 0.5), as gen_gymnasium_frames.py
        r.blocks[static_cast<size_t>(by * bw + bx)][c] =
            static_cast<int>((sum[c] * 2 + kBlock * kBlock) / (2 * kBlock * kBlock));
    }
  for (const Color& c : kPalette) r.color_counts.push_back(count_color(f, c));
  return r;
}

std::string data_dir() {
  const char* dir = std::getenv("RECUR_TEST_DATA_DIR");
  return std::string(dir && *dir ? dir : RECUR_TEST_DATA_DIR) + "/render/";
}

Reference read_reference(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "missing reference " << path);
  Reference r;
  std::string key, line;
  int rows = 0;
  while (in >> key) {
    if (key == "#") {
      std::getline(in, line);
    } else if (key == "size") {
      in >> r.width >> r.height;
    } else if (key == "rows") {
      in >> rows;
      const int cols = r.width / kBlock;
      for (int i = 0; i < rows * cols; ++i) {
        std::string hex;
        in >> hex;
        const unsigned long v = std::stoul(hex, nullptr, 16);
        r.blocks.push_back({static_cast<int>(v >> 16), static_cast<int>((v >> 8) & 255),
                            static_cast<int>(v & 255)});
      }
    } else if (key == "colors") {
      int n = 0;
      in >> n;
      for (int i = 0; i < n; ++i) {
        int red, green, blue, count;
        in >> red >> green >> blue >> count;
        r.color_counts.push_back(count);
      }
    } else {
      std::getline(in, line);  // id, state, last_u, block: for readers of the file
    }
  }
  REQUIRE_MESSAGE(in.eof(), "unreadable reference " << path);
  return r;
}

void write_reference(const std::string& path, const std::string& id,
                     const std::vector<double>& state, std::optional<float> last_u,
                     const Reference& r) {
  std::ofstream out(path);
  REQUIRE_MESSAGE(out.good(), "cannot write " << path);
  out << "# recur's frame; written by tests/envs/render_test.cc "
         "(RECUR_UPDATE_RENDER_REFERENCES=1)\n";
  out << "id " << id << "\nstate";
  for (double v : state) out << ' ' << v;
  out << "\nlast_u ";
  if (last_u) {
    out << *last_u;
  } else {
    out << "none";
  }
  out << "\nsize " << r.width << ' ' << r.height << "\nblock " << kBlock << "\nrows "
      << r.height / kBlock << '\n';
  const int cols = r.width / kBlock;
  for (size_t i = 0; i < r.blocks.size(); ++i) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "%02x%02x%02x", r.blocks[i][0], r.blocks[i][1], r.blocks[i][2]);
    out << hex << ((static_cast<int>(i) + 1) % cols == 0 ? '\n' : ' ');
  }
  out << "colors " << kPalette.size() << '\n';
  for (size_t i = 0; i < kPalette.size(); ++i)
    out << int{kPalette[i].r} << ' ' << int{kPalette[i].g} << ' ' << int{kPalette[i].b} << ' '
        << r.color_counts[i] << '\n';
}

struct BlockDistance {
  double mean = 0;  // mean |difference| over every block and channel
  int max = 0;      // largest |difference| of one block channel
};

BlockDistance distance(const Reference& a, const Reference& b) {
  REQUIRE(a.blocks.size() == b.blocks.size());
  BlockDistance d;
  for (size_t i = 0; i < a.blocks.size(); ++i)
    for (int c = 0; c < 3; ++c) {
      const int diff = std::abs(a.blocks[i][c] - b.blocks[i][c]);
      d.mean += diff;
      d.max = std::max(d.max, diff);
    }
  d.mean /= static_cast<double>(a.blocks.size() * 3);
  return d;
}

struct ReferenceCase {
  const char* id;
  std::vector<double> state;
  std::optional<float> last_u;
};

// Keep in step with CASES in tests/data/render/gen_gymnasium_frames.py.
const std::vector<ReferenceCase>& reference_cases() {
  static const std::vector<ReferenceCase> cases = {
      {"CartPole-v1", {0.3, 0.0, 0.15, 0.0}, std::nullopt},
      {"Pendulum-v1", {0.8, 0.0}, -1.5f},
      {"MountainCar-v0", {-0.5, 0.0}, std::nullopt},
      {"MountainCarContinuous-v0", {0.2, 0.0}, std::nullopt},
      {"Acrobot-v1", {0.7, -1.2, 0.0, 0.0}, std::nullopt}};
  return cases;
}

}  // namespace

TEST_CASE("render: CartPole's cart, pole, axle and track where Gymnasium draws them") {
  const Frame f = frame_at("CartPole-v1", {0.0, 0.0, 0.0, 0.0});
  const Color brown{202, 152, 101};
  // Cart: x in [275, 325], y-up [85, 115] -> rows 284..314; black away from the pole and axle.
  for (int y = 286; y <= 312; ++y) {
    for (int x : {277, 285, 290, 310, 315, 323}) CHECK(pixel(f, x, y) == Color{0, 0, 0});
    if (y != 299) {  // the track row
      CHECK(pixel(f, 272, y) == Color{255, 255, 255});
      CHECK(pixel(f, 328, y) == Color{255, 255, 255});
    }
  }
  // Track: gfxdraw.hline at y-up 100 -> row 299, black from edge to edge.
  for (int x : {0, 10, 150, 450, 599}) {
    CHECK(pixel(f, x, 299) == Color{0, 0, 0});
    CHECK(pixel(f, x, 297) == Color{255, 255, 255});
    CHECK(pixel(f, x, 301) == Color{255, 255, 255});
  }
  // Pole: x in [295, 305] up to y-up 227 (row 172); axle at (300, 107) -> row 292.
  for (int y : {180, 200, 250}) {
    for (int x = 297; x <= 303; ++x) CHECK(pixel(f, x, y) == brown);
    CHECK(pixel(f, 292, y) == Color{255, 255, 255});
    CHECK(pixel(f, 308, y) == Color{255, 255, 255});
  }
  CHECK(pixel(f, 300, 165) == Color{255, 255, 255});  // above the pole's top
  CHECK(pixel(f, 300, 292) == Color{129, 132, 203});

  // x = 1 m moves the cart 125 px right; theta > 0 tips the pole to the right (rotated by -theta).
  const Frame moved = frame_at("CartPole-v1", {1.0, 0.0, 0.2, 0.0});
  CHECK(pixel(moved, 425 - 20, 300) == Color{0, 0, 0});
  CHECK(pixel(moved, 425 + 20, 310) == Color{0, 0, 0});
  CHECK(pixel(moved, 300, 310) == Color{255, 255, 255});
  // The pole's centre line 100 px above the axle: (425 + 100 sin 0.2, 107.5 + 100 cos 0.2).
  const double px = 425 + 100 * std::sin(0.2), py = 107.5 + 100 * std::cos(0.2);
  CHECK(pixel(moved, static_cast<int>(px), 399 - static_cast<int>(py)) == brown);
}

TEST_CASE("render: Pendulum's rod, joints, axle and torque arrow") {
  const Color rod{204, 77, 77};
  // theta = 0: the rod points up (rotated by theta + pi/2) from the pivot (250, 250) for
  // 113.6 px, 22.7 px wide.
  const Frame up = frame_at("Pendulum-v1", {0.0, 0.0});
  for (int y : {260, 300, 340}) {
    CHECK(pixel(up, 250, 499 - y) == rod);
    CHECK(pixel(up, 250 + 20, 499 - y) == Color{255, 255, 255});
  }
  CHECK(pixel(up, 250, 499 - 200) == Color{255, 255, 255});  // nothing below the pivot
  CHECK(pixel(up, 250, 499 - 372) == rod);                   // the end circle (radius 11)
  CHECK(pixel(up, 250, 499 - 250) == Color{0, 0, 0});        // the axle (radius 5)
  CHECK(count_color(up, {0, 0, 0}) < 120);                   // no arrow after reset

  // theta = pi/2: the rod points left (counter-clockwise, as Gymnasium's theta).
  const Frame left = frame_at("Pendulum-v1", {std::numbers::pi / 2, 0.0});
  CHECK(pixel(left, 250 - 60, 249) == rod);
  CHECK(pixel(left, 250 + 60, 249) == Color{255, 255, 255});

  // The arrow: side scale * |u| / 2 = 113.6 px at |u| = 2, a circle of radius ~0.47 side
  // (53 px); clockwise for u < 0 (the asset as is) with its gap at the upper left, mirrored for
  // u > 0 (gap at the upper right).
  const Frame cw = frame_at("Pendulum-v1", {0.0, 0.0}, -2.0f);
  const Frame ccw = frame_at("Pendulum-v1", {0.0, 0.0}, 2.0f);
  auto on_circle = [](const Frame& f, double degrees) {
    const double a = degrees * std::numbers::pi / 180, r = 0.47 * 113.636;
    return darkest_around(f, static_cast<int>(std::lround(250 + r * std::cos(a))),
                          static_cast<int>(std::lround(499 - (250 + r * std::sin(a)))));
  };
  CHECK(on_circle(cw, 45) < 200);
  CHECK(on_circle(cw, 135) > 700);
  CHECK(on_circle(ccw, 45) > 700);
  CHECK(on_circle(ccw, 135) < 200);
  for (double deg : {-45.0, -90.0, -135.0}) {
    CHECK(on_circle(cw, deg) < 200);
    CHECK(on_circle(ccw, deg) < 200);
  }
  CHECK(on_circle(cw, 0) < 200);
  CHECK(on_circle(ccw, 0) > 700);  // the mirrored gap reaches round to 0 degrees
  // Half the torque, half the arrow.
  const Frame small = frame_at("Pendulum-v1", {0.0, 0.0}, -1.0f);
  CHECK(count_color(small, {0, 0, 0}) < count_color(cw, {0, 0, 0}));
}

TEST_CASE("render: MountainCar's hill, car, wheels and flag") {
  // Position -pi/6: the valley floor (height 0.1 -> y-up 33.3), the car level (cos(3 pos) = 0).
  const double bottom = -std::numbers::pi / 6;
  const Frame f = frame_at("MountainCar-v0", {bottom, 0.0});
  const double car_x = (bottom + 1.2) * 600 / 1.8;  // 225.5
  // Car body: x in [205, 245], y-up [43, 63].
  CHECK(pixel(f, static_cast<int>(car_x), 399 - 55) == Color{0, 0, 0});
  CHECK(pixel(f, static_cast<int>(car_x) - 15, 399 - 60) == Color{0, 0, 0});
  CHECK(pixel(f, static_cast<int>(car_x), 399 - 75) == Color{255, 255, 255});
  // Wheels: radius 8 at (car_x -+ 10, 43), grey.
  CHECK(pixel(f, static_cast<int>(car_x - 10), 399 - 40) == Color{128, 128, 128});
  CHECK(pixel(f, static_cast<int>(car_x + 10), 399 - 40) == Color{128, 128, 128});
  // Flag: pole at x 566 from y-up 332 to 382 (rows 17..67), yellow pennant to x 591.
  for (int y = 30; y <= 60; ++y) {  // (the hill passes the pole's foot at row ~66)
    CHECK(pixel(f, 566, y) == Color{0, 0, 0});
    CHECK(pixel(f, 563, y) == Color{255, 255, 255});
    CHECK(pixel(f, 569, y) == Color{255, 255, 255});
  }
  CHECK(pixel(f, 574, 399 - 377) == Color{204, 204, 0});
  // The hill: h(x) = 0.45 sin(3x) + 0.55; at x = 0 (px 400) y-up 183.3; at x = -1.2 (px 0) 249.7.
  CHECK(darkest_around(f, 400, 399 - 183) < 400);
  CHECK(darkest_around(f, 1, 399 - static_cast<int>((0.45 * std::sin(-3.6) + 0.55) * 1000 / 3)) <
        400);
  CHECK(darkest_around(f, 360, 399 - 150) == 3 * 255);

  // MountainCarContinuous: the flag at 0.45 -> x int(1.65 * 333.33...) = 550 (the product rounds
  // to exactly 550.0 in float64, as in Gymnasium's frame), y-up 329..379 (rows 20..70).
  const Frame c = frame_at("MountainCarContinuous-v0", {bottom, 0.0});
  for (int y = 35; y <= 60; ++y) {
    CHECK(pixel(c, 550, y) == Color{0, 0, 0});
    CHECK(pixel(c, 548, y) == Color{255, 255, 255});
  }
  CHECK(pixel(c, 566, 50) == Color{255, 255, 255});
  CHECK(pixel(c, static_cast<int>(car_x), 399 - 55) == Color{0, 0, 0});

  // Up the right slope the car tilts: at pos 0.2, cos(0.6) = 0.825 rad counter-clockwise.
  const Frame tilted = frame_at("MountainCar-v0", {0.2, 0.0});
  const double x0 = (0.2 + 1.2) * 600 / 1.8, y0 = 10 + (0.45 * std::sin(0.6) + 0.55) * 1000 / 3;
  const auto mid = recur::envs::render::rotated({0, 10}, std::cos(0.6));  // the body's centre
  CHECK(pixel(tilted, static_cast<int>(x0 + mid.x), 399 - static_cast<int>(y0 + mid.y)) ==
        Color{0, 0, 0});
}

TEST_CASE("render: Acrobot's links, joints and goal line") {
  const Color link{0, 204, 204}, joint{204, 204, 0};
  // Hanging down: both links straight below the pivot (250, 250), 113.6 px each, 22.7 wide.
  const Frame down = frame_at("Acrobot-v1", {0.0, 0.0, 0.0, 0.0});
  for (int y : {200, 160, 100, 40}) CHECK(pixel(down, 250, 499 - y) == link);
  CHECK(pixel(down, 250, 499 - 10) == Color{255, 255, 255});  // below the tip (22.7)
  CHECK(pixel(down, 250, 499 - 250) == joint);                // the pivot's joint
  CHECK(pixel(down, 250, 499 - 136) == joint);                // the elbow (113.6 below)
  CHECK(pixel(down, 250, 499 - 300) == Color{255, 255, 255});
  // The goal line: y-up int(113.6 + 250) = 363 -> row 136, across the picture.
  for (int x : {2, 100, 400, 497}) {
    CHECK(pixel(down, x, 136) == Color{0, 0, 0});
    CHECK(pixel(down, x, 134) == Color{255, 255, 255});
    CHECK(pixel(down, x, 138) == Color{255, 255, 255});
  }
  // theta1 = pi/2: link 1 points right (joint 1 at (sin t1, -cos t1) * scale); theta2 = pi/2
  // turns link 2 up from the elbow.
  const Frame bent = frame_at("Acrobot-v1", {std::numbers::pi / 2, std::numbers::pi / 2, 0, 0});
  CHECK(pixel(bent, 250 + 60, 249) == link);
  CHECK(pixel(bent, 250 - 60, 249) == Color{255, 255, 255});
  CHECK(pixel(bent, 364, 499 - 250) == joint);
  CHECK(pixel(bent, 364, 499 - 320) == link);
}

TEST_CASE("render: RepeatPrevious shows the newest card and the card to name") {
  auto env = make("RepeatPreviousEasy-v0");  // k = 4
  env->reset(0);
  Renderer renderer(*env);
  // Newest card right (x 360..500), the card k - 1 = 3 deals earlier left (x 100..240); rows
  // 104..296 hold both cards.
  auto red_pixels = [](const Frame& f, int x0, int x1) {
    int n = 0;
    for (int y = 104; y < 296; ++y)
      for (int x = x0; x < x1; ++x) n += pixel(f, x, y) == Color{200, 30, 45};
    return n;
  };
  auto back_pixels = [](const Frame& f, int x0, int x1) {
    int n = 0;
    for (int y = 104; y < 296; ++y)
      for (int x = x0; x < x1; ++x) n += pixel(f, x, y) == Color{52, 84, 150};
    return n;
  };
  std::vector<double> state(53);
  for (int i = 0; i < 52; ++i) state[static_cast<size_t>(i)] = i % 4;
  // Suits as POPGym: 0 spades, 1 diamonds, 2 clubs, 3 hearts. Deck starts 3 (hearts), 0, 0, 2.
  state[0] = 3;
  state[3] = 2;
  state[52] = 1;  // one card dealt: the hearts; nothing to name yet
  env->set_state(state);
  Frame f = renderer.render(*env);
  CHECK(red_pixels(f, 360, 500) > 1000);
  CHECK(back_pixels(f, 100, 240) > 10000);
  state[52] = 4;  // four dealt: the newest is the clubs (black), the hearts must be named
  env->set_state(state);
  f = renderer.render(*env);
  CHECK(red_pixels(f, 360, 500) == 0);
  CHECK(red_pixels(f, 100, 240) > 1000);
  CHECK(back_pixels(f, 100, 240) == 0);
}

// ---- References ----

TEST_CASE("render: classic-control frames match recur's references and Gymnasium's frames") {
  const bool update = std::getenv("RECUR_UPDATE_RENDER_REFERENCES") != nullptr;
  for (const ReferenceCase& c : reference_cases()) {
    const std::string id = c.id;
    CAPTURE(id);
    const Reference mine = reduce(frame_at(c.id, c.state, c.last_u));
    const std::string own_path = data_dir() + "recur_" + c.id + ".txt";
    if (update) {
      write_reference(own_path, c.id, c.state, c.last_u, mine);
      MESSAGE("wrote " << own_path);
    }
    // recur's own picture: the same code draws the same blocks; the tolerance leaves room for
    // another Cairo version's antialiasing (a few levels on edge pixels, less after averaging
    // 400 of them) but not for a moved or recoloured shape (a 1 px shift of one edge changes a
    // block by ~12 levels).
    const Reference own = read_reference(own_path);
    const BlockDistance d_own = distance(mine, own);
    CHECK(d_own.mean < 0.2);
    CHECK(d_own.max <= 6);
    REQUIRE(own.color_counts.size() == kPalette.size());
    for (size_t i = 0; i < kPalette.size(); ++i) {
      CAPTURE(i);
      CHECK(std::abs(mine.color_counts[i] - own.color_counts[i]) <= 10 + own.color_counts[i] / 50);
    }

    // Gymnasium's picture (pygame's rasteriser; the torque arrow a PNG asset): close, not equal.
    // Measured with Cairo 1.16: block mean |difference| 0.13 to 0.25, largest block 7 to 15
    // (edges that pygame's filled outlines put half a pixel further out; Pendulum's arrow). A
    // shape off by a few pixels or in another colour exceeds both bounds.
    const Reference gym = read_reference(data_dir() + "gymnasium_" + c.id + ".txt");
    const BlockDistance d_gym = distance(mine, gym);
    MESSAGE(id << ": recur vs Gymnasium block mean |d| " << d_gym.mean << ", max " << d_gym.max);
    CHECK(d_gym.mean < 0.5);
    CHECK(d_gym.max <= 30);
    // Every colour Gymnasium paints in solid areas is there in recur's picture, in a similar
    // amount (not Pendulum's black: Gymnasium's smoothscaled arrow is grey at its edges).
    for (size_t i = 1; i < kPalette.size(); ++i) {
      CAPTURE(i);
      if (gym.color_counts[i] < 50 || (id == "Pendulum-v1" && i == 1)) continue;
      CHECK(mine.color_counts[i] > gym.color_counts[i] / 2);
      CHECK(mine.color_counts[i] < gym.color_counts[i] * 3 / 2);
    }
  }
}

// ---- PNG and allocation ----
