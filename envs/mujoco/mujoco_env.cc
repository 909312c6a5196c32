#include "envs/mujoco/mujoco_env.h"

#include <algorithm>
#include <cmath>

#include <mujoco/mujoco.h>

#include "core/error.h"
#include "envs/mujoco/model_cache.h"

namespace recur::envs {
namespace {

constexpr auto kIntegration = mjSTATE_INTEGRATION;

std::shared_ptr<const mjModel> load_checked(const MujocoLayout& layout, const std::string& path) {
  auto model = load_mujoco_model(layout.name, path);
  const mjModel* m = model.get();
  RECUR_CHECK(
      m->nq == layout.nq && m->nv == layout.nv && m->nu == layout.nu && m->nbody == layout.nbody,
      "{}: the model {} has nq={} nv={} nu={} nbody={}; the env needs nq={} nv={} nu={} "
      "nbody={} (Gymnasium's {})",
      layout.name, path, m->nq, m->nv, m->nu, m->nbody, layout.nq, layout.nv, layout.nu,
      layout.nbody, layout.default_file);
  return model;
}

Space ctrl_range_space(const mjModel* m) {
  std::vector<float> low(static_cast<size_t>(m->nu)), high(low.size());
  for (int i = 0; i < m->nu; ++i) {
    low[static_cast<size_t>(i)] = static_cast<float>(m->actuator_ctrlrange[2 * i]);
    high[static_cast<size_t>(i)] = static_cast<float>(m->actuator_ctrlrange[2 * i + 1]);
  }
  return Space::box(std::move(low), std::move(high));
}

}  // namespace

double read_weight(OptionReader& options, const std::string& env, const std::string& key,
                   double fallback) {
  const double value = options.get_double(key, fallback);
  RECUR_CHECK(std::isfinite(value), "env {}: {} = {}; use a finite number", env, key, value);
  return value;
}

MujocoConfig MujocoConfig::read(OptionReader& options, const std::string& env,
                                MujocoConfig defaults) {
  MujocoConfig c = std::move(defaults);
  c.xml_file = options.get_string("xml_file", c.xml_file);
  c.frame_skip = static_cast<int>(options.get_int("frame_skip", c.frame_skip));
  c.reset_noise_scale = options.get_double("reset_noise_scale", c.reset_noise_scale);
  RECUR_CHECK(c.frame_skip >= 1 && c.frame_skip <= 1000,
              "env {}: frame_skip = {}; use 1..1000 physics steps per env step", env, c.frame_skip);
  RECUR_CHECK(std::isfinite(c.reset_noise_scale) && c.reset_noise_scale >= 0,
              "env {}: reset_noise_scale = {}; use a finite value >= 0", env, c.reset_noise_scale);
  return c;
}

struct MujocoEnv::Loaded {
  std::string path;
  std::shared_ptr<const mjModel> model;
};

MujocoEnv::Loaded MujocoEnv::load(const MujocoLayout& layout, const MujocoConfig& config) {
  Loaded l;
  l.path = find_mujoco_model(layout.name, config.xml_file, layout.default_file);
  l.model = load_checked(layout, l.path);
  return l;
}

int ObsBlocks::size(ObsPart part) const {
  switch (part) {
    case ObsPart::kPositions:
      return positions;
    case ObsPart::kVelocities:
      return velocities;
    case ObsPart::kFull:
      break;
  }
  return positions + velocities + other;
}

void MujocoEnv::ObsWriter::write(ObsPart block, const double* values, int n, double clip) {
  if (part_ != ObsPart::kFull && part_ != block) return;
  for (int i = 0; i < n; ++i) obs_[at_++] = static_cast<float>(std::clamp(values[i], -clip, clip));
}

void MujocoEnv::ObsWriter::other(const double* values, int n, double clip) {
  if (part_ != ObsPart::kFull) return;
  for (int i = 0; i < n; ++i) obs_[at_++] = static_cast<float>(std::clamp(values[i], -clip, clip));
}

MujocoEnv::MujocoEnv(const MujocoLayout& layout, const MujocoConfig& config, ObsBlocks blocks)
    : MujocoEnv(layout, config, blocks, load(layout, config)) {}

MujocoEnv::MujocoEnv(const MujocoLayout& layout, const MujocoConfig& config, ObsBlocks blocks,
                     Loaded loaded)
    : Env(Space::box(-std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::infinity(), {blocks.size(config.part)}),
          ctrl_range_space(loaded.model.get())),
      model_(std::move(loaded.model)),
      model_path_(std::move(loaded.path)),
      error_context_("model " + model_path_),
      frame_skip_(config.frame_skip),
      contact_forces_(layout.contact_forces),
      reset_noise_scale_(config.reset_noise_scale),
      part_(config.part) {
  MujocoErrorContext context(error_context_);
  data_ = mj_makeData(model_.get());
  RECUR_CHECK(data_ != nullptr, "{}: MuJoCo could not allocate data for {}", layout.name,
              model_path_);
  dt_ = model_->opt.timestep * frame_skip_;
  integration_size_ = mj_stateSize(model_.get(), kIntegration);
  before_last_step_.assign(static_cast<size_t>(integration_size_), 0.0);
}

MujocoEnv::~MujocoEnv() {
  if (data_) mj_deleteData(data_);
}

void MujocoEnv::begin_reset() {
  mj_resetData(model_.get(), data_);
}

void MujocoEnv::finish_reset() {
  MujocoErrorContext context(error_context_);
  mj_forward(model_.get(), data_);
  stepped_ = false;
}

void MujocoEnv::add_uniform_noise(Rng& rng, double* values, int n, double scale) {
  for (int i = 0; i < n; ++i) values[i] += rng.uniform(-scale, scale);
}

void MujocoEnv::add_normal_noise(Rng& rng, double* values, int n, double scale) {
  for (int i = 0; i < n; ++i) values[i] += scale * rng.normal();
}

void MujocoEnv::simulate(std::span<const float> action) {
  MujocoErrorContext context(error_context_);
  const mjModel* m = model_.get();
  for (int i = 0; i < m->nu; ++i) data_->ctrl[i] = action[static_cast<size_t>(i)];
  for (int i = 0; i < frame_skip_; ++i) {
    if (i == frame_skip_ - 1) mj_getState(m, data_, before_last_step_.data(), kIntegration);
    mj_step(m, data_);
  }
  if (contact_forces_) mj_rnePostConstraint(m, data_);
  stepped_ = true;
}

void MujocoEnv::get_state(std::span<double> out) const {
  const auto s = static_cast<size_t>(integration_size_);
  mj_getState(model_.get(), data_, out.data(), kIntegration);
  out[s] = stepped_ ? 1.0 : 0.0;
  if (stepped_) {
    std::copy(before_last_step_.begin(), before_last_step_.end(), out.begin() + s + 1);
  } else {
    std::fill(out.begin() + s + 1, out.end(), 0.0);
  }
}

RenderInfo MujocoEnv::render_info() const {
  return {.width = 480, .height = 480, .fps = static_cast<int>(std::nearbyint(1.0 / dt_))};
}

void MujocoEnv::draw(render::Canvas& canvas) const {
  if (!renderer_) renderer_ = std::make_unique<MujocoRenderer>(model_.get(), view_);
  renderer_->draw(data_, canvas);
}

void MujocoEnv::set_state_impl(std::span<const double> state) {
  const auto s = static_cast<size_t>(integration_size_);
  const double flag = state[s];
  RECUR_CHECK_ARG(flag == 0.0 || flag == 1.0,
                  "{}: state[{}] = {} must be 0 (state as after reset) or 1 (state after a step: "
                  "the integration state before the last physics step follows); see "
                  "envs/mujoco/mujoco_env.h",
                  id(), s, flag);
  MujocoErrorContext context(error_context_);
  const mjModel* m = model_.get();
  mj_resetData(m, data_);
  if (flag == 1.0) {
    // Replay the last physics step: the derived quantities (body positions, cfrc_ext) come out as
    // the step left them. The current state given then wins (identical in a snapshot).
    std::copy(state.begin() + s + 1, state.end(), before_last_step_.begin());
    mj_setState(m, data_, before_last_step_.data(), kIntegration);
    mj_step(m, data_);
    if (contact_forces_) mj_rnePostConstraint(m, data_);
    mj_setState(m, data_, state.data(), kIntegration);
  } else {
    // As Gymnasium's set_state after mj_resetData: mj_forward (which leaves the integration
    // state as it is: checked on MuJoCo 3.3.7).
    mj_setState(m, data_, state.data(), kIntegration);
    mj_forward(m, data_);
  }
  stepped_ = flag == 1.0;
}

}  // namespace recur::envs
