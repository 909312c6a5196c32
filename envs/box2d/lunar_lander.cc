#include "envs/box2d/lunar_lander.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <numbers>

#include "core/error.h"
#include "envs/render/canvas.h"

namespace recur::envs {
namespace ll = lunar_lander;
namespace {

Space make_observation_space() {
  const auto two_pi = static_cast<float>(2 * std::numbers::pi);
  return Space::box({-2.5f, -2.5f, -10.0f, -10.0f, -two_pi, -10.0f, 0.0f, 0.0f},
                    {2.5f, 2.5f, 10.0f, 10.0f, two_pi, 10.0f, 1.0f, 1.0f});
}

Space make_action_space(bool continuous) {
  return continuous ? Space::box(-1.0f, 1.0f, {2}) : Space::discrete(4);
}

ll::SimConfig sim_config(const LunarLanderConfig& c) {
  return {c.continuous, c.gravity, c.enable_wind, c.wind_power, c.turbulence_power};
}

}  // namespace

LunarLanderConfig LunarLanderConfig::read(OptionReader& options, bool continuous) {
  LunarLanderConfig c;
  c.continuous = continuous;
  c.gravity = options.get_double("gravity", c.gravity);
  c.enable_wind = options.get_bool("enable_wind", c.enable_wind);
  c.wind_power = options.get_double("wind_power", c.wind_power);
  c.turbulence_power = options.get_double("turbulence_power", c.turbulence_power);
  RECUR_CHECK(c.gravity > -12.0 && c.gravity < 0.0,
              "LunarLander: gravity ({}) must be in (-12, 0) m/s^2, as Gymnasium asserts",
              c.gravity);
  RECUR_CHECK(std::isfinite(c.wind_power) && std::isfinite(c.turbulence_power),
              "LunarLander: wind_power ({}) and turbulence_power ({}) must be finite", c.wind_power,
              c.turbulence_power);
  // Gymnasium warns and runs outside these ranges; so does recur.
  if (c.wind_power < 0.0 || c.wind_power > 20.0)
    spdlog::warn("LunarLander: wind_power {} is outside the recommended range [0, 20]",
                 c.wind_power);
  if (c.turbulence_power < 0.0 || c.turbulence_power > 2.0)
    spdlog::warn("LunarLander: turbulence_power {} is outside the recommended range [0, 2]",
                 c.turbulence_power);
  return c;
}

LunarLander::LunarLander(const LunarLanderConfig& config)
    : Env(make_observation_space(), make_action_space(config.continuous)),
      config_(config),
      sim_(sim_config(config)) {}

void LunarLander::replay_next_reset(const ll::ResetDraws& draws, double u0, double u1) {
  replay_ = Replay{draws, u0, u1};
}

void LunarLander::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  rng_ = &rng;
  if (replay_) {
    start(replay_->draws, replay_->u0, replay_->u1);
    replay_.reset();
    return;
  }
  ll::ResetDraws d;
  for (double& h : d.heights) h = rng.uniform(0, ll::kH / 2);
  d.force_x = rng.uniform(-ll::kInitialRandom, ll::kInitialRandom);
  d.force_y = rng.uniform(-ll::kInitialRandom, ll::kInitialRandom);
  if (config_.enable_wind) {  // numpy's integers(-9999, 9999): the high end is excluded
    d.wind_idx = -9999 + static_cast<int>(rng.uniform_int(2 * 9999));
    d.torque_idx = -9999 + static_cast<int>(rng.uniform_int(2 * 9999));
  }
  const double u0 = rng.uniform(-1, 1);
  const double u1 = rng.uniform(-1, 1);
  start(d, u0, u1);
}

void LunarLander::start(const ll::ResetDraws& draws, double u0, double u1) {
  sim_.build(draws);
  const float noop[2] = {0.0f, 0.0f};
  sim_.step(noop, u0, u1);  // Gymnasium's reset returns step(no-op)'s observation
}

Env::Outcome LunarLander::step_impl(std::span<const float> action) {
  RECUR_ASSERT(rng_ != nullptr);
  const double u0 = rng_->uniform(-1, 1);
  const double u1 = rng_->uniform(-1, 1);
  const ll::Outcome out = sim_.step(action, u0, u1);
  return {out.reward, out.terminated};
}

void LunarLander::observe(std::span<float> obs) const {
  const ll::State& s = sim_.state();
  for (size_t i = 0; i < s.size(); ++i) obs[i] = static_cast<float>(s[i]);
}

RenderInfo LunarLander::render_info() const {
  return {ll::kViewportW, ll::kViewportH, ll::kFps};
}

void LunarLander::draw(render::Canvas& canvas) const {
  using render::Vec2;
  if (sim_.lander() == nullptr) return;
  constexpr render::Color kFill{128, 102, 230}, kOutline{77, 77, 128}, kFlag{204, 204, 0};
  canvas.set_transform(ll::kScale);  // world metres -> y-up pixels, as Gymnasium's * SCALE

  // The sky: each terrain segment up to the top edge, black, over the white ground.
  const ll::Terrain& t = sim_.terrain();
  for (int i = 0; i < ll::kChunks - 1; ++i) {
    const Vec2 sky[] = {{t.chunk_x[i], t.smooth_y[i]},
                        {t.chunk_x[i + 1], t.smooth_y[i + 1]},
                        {t.chunk_x[i + 1], ll::kH},
                        {t.chunk_x[i], ll::kH}};
    canvas.fill_polygon(sky, render::kBlack);
    canvas.stroke_polygon(sky, render::kBlack, 1);  // Gymnasium's aapolygon: no seams between
  }

  // The lander, then its legs (Gymnasium's drawlist), each fixture at its body's transform.
  const b2Body* bodies[] = {sim_.lander(), sim_.leg(0), sim_.leg(1)};
  for (const b2Body* body : bodies) {
    for (const b2Fixture* f = body->GetFixtureList(); f != nullptr; f = f->GetNext()) {
      const auto* poly = static_cast<const b2PolygonShape*>(f->GetShape());
      Vec2 path[b2_maxPolygonVertices];
      for (int k = 0; k < poly->m_count; ++k) {
        const b2Vec2 p = b2Mul(body->GetTransform(), poly->m_vertices[k]);
        path[k] = {p.x, p.y};
      }
      const std::span<const Vec2> points(path, static_cast<size_t>(poly->m_count));
      canvas.fill_polygon(points, kFill);
      canvas.stroke_polygon(points, kOutline, 1);
    }
  }

  // The flags, on top, in Gymnasium's pixel numbers.
  canvas.set_transform(1.0);
  for (const double x_m : {t.helipad_x1, t.helipad_x2}) {
    const double x = x_m * ll::kScale;
    const double flagy1 = t.helipad_y * ll::kScale, flagy2 = flagy1 + 50;
    canvas.line({x, flagy1}, {x, flagy2}, render::kWhite, 1);
    const Vec2 flag[] = {{x, flagy2}, {x, flagy2 - 10}, {x + 25, flagy2 - 5}};
    canvas.fill_polygon(flag, kFlag);
  }
}

}  // namespace recur::envs
