// The base of recur's MuJoCo envs: Gymnasium's MujocoEnv (gymnasium/envs/mujoco/mujoco_env.py)
// on MuJoCo's C API. A derived env writes its reset noise, reward, termination and observation;
// this class owns the model, the data, stepping and the state.
//
//   model  one read-only mjModel per XML file, shared by every env of the process
//          (envs/mujoco/model_cache.h); its sizes are checked against the env's layout
//   data   one mjData per env, made once; no step allocates
//   step   ctrl = action as given (unclipped: MuJoCo clamps ctrl to ctrlrange itself, and the
//          ctrl cost uses the raw action, as Gymnasium), mj_step x frame_skip, then (only for the
//          envs that read cfrc_ext: Ant, Humanoid) one mj_rnePostConstraint. Gymnasium calls it
//          for every env, but it writes only cacc/cfrc_int/cfrc_ext, which no later step reads,
//          so leaving it out elsewhere changes nothing but the cost (~8% of a Reacher step)
//   reset  mj_resetData, the env adds noise to qpos/qvel (qpos0 and zeros), mj_forward
//
// State (get_state/set_state, snapshots): MuJoCo's integration state (mj_getState with
// mjSTATE_INTEGRATION: time, qpos, qvel, act, warm-start accelerations, ctrl, applied forces,
// mocap, ...; S values), then one flag, then S more values:
//   [0, S)       the current integration state
//   S            0: the derived quantities are those of mj_forward on the current state, as after
//                   reset (cfrc_ext zero, as mj_resetData leaves it); 1: they are those of a step
//   [S+1, 2S+1)  with flag 1, the integration state before the last physics step
// Why the second copy: after a step, MuJoCo's derived quantities lag qpos by one physics step
// (mj_step computes positions of bodies, then integrates), and envs read them: Ant's reward uses
// the torso's xpos before and after the step, its v5 observation cfrc_ext. They are not part of
// the integration state and cannot be recomputed from it, so set_state replays the last physics
// step from the saved state (mj_step is deterministic given the integration state) and resumes
// bit-exactly. To start from a state of Gymnasium's env (after its reset), give the integration
// state and zeros for the rest.
#pragma once

#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/options.h"
#include "envs/env.h"
#include "envs/mujoco/mujoco_render.h"

struct mjModel_;  // <mujoco/mjmodel.h>; users of this header need no MuJoCo headers
struct mjData_;

namespace recur::envs {

// Which blocks of an env's observation it shows: everything (Gymnasium's observation), only the
// joint positions (the -P ids) or only the joint velocities (the -V ids). Other blocks (Ant v5's
// contact forces) are in the full observation only.
enum class ObsPart { kFull, kPositions, kVelocities };

// What an env expects of its model, checked when it loads (a wrong xml_file fails there).
struct MujocoLayout {
  const char* name;             // "Ant", for messages
  const char* default_file;     // Gymnasium's XML file name for this env and version
  int nq, nv, nu, nbody;        // model sizes
  bool contact_forces = false;  // the env reads cfrc_ext: each step ends in mj_rnePostConstraint
};

// The options every MuJoCo env takes (Gymnasium v5's keyword arguments of the same names).
// A reward weight option (forward_reward_weight, healthy_reward, ...): `fallback` when absent;
// a value that is not finite throws recur::Error naming `env` and the key.
double read_weight(OptionReader& options, const std::string& env, const std::string& key,
                   double fallback);

struct MujocoConfig {
  std::string xml_file;  // "" = Gymnasium's model (model_cache.h says where it is looked up)
  int frame_skip = 1;    // physics steps per env step
  double reset_noise_scale = 0;  // scale of the noise added to qpos/qvel at reset
  ObsPart part = ObsPart::kFull;

  // Reads xml_file, frame_skip and reset_noise_scale over `defaults` (the env's), and checks them.
  static MujocoConfig read(OptionReader& options, const std::string& env, MujocoConfig defaults);
};

// The sizes of an env's observation blocks: positions, velocities and (in the full observation
// only) the rest.
struct ObsBlocks {
  int positions = 0, velocities = 0, other = 0;
  int size(ObsPart part) const;
};

class MujocoEnv : public Env {
 public:
  ~MujocoEnv() override;

  const mjModel_* model() const { return model_.get(); }
  const std::string& model_path() const { return model_path_; }
  int frame_skip() const { return frame_skip_; }
  double dt() const { return dt_; }  // seconds per env step: timestep * frame_skip
  ObsPart obs_part() const { return part_; }

  int state_size() const final { return 2 * integration_size_ + 1; }
  void get_state(std::span<double> out) const final;

  // Rendering (envs/mujoco/mujoco_render.h): 480 x 480 as Gymnasium's MujocoEnv, at
  // round(1 / dt) fps (its metadata["render_fps"]).
  RenderInfo render_info() const override;
  void draw(render::Canvas& canvas) const override;

 protected:
  MujocoEnv(const MujocoLayout& layout, const MujocoConfig& config, ObsBlocks blocks);

  // Reset, in Gymnasium's order: begin_reset() (mj_resetData: qpos = qpos0, qvel = 0), the env
  // adds noise to qpos()/qvel(), finish_reset() (mj_forward).
  void begin_reset();
  void finish_reset();
  // Adds U(-scale, scale) to each value of `values` (Gymnasium's np_random.uniform noise).
  static void add_uniform_noise(Rng& rng, double* values, int n, double scale);
  // Adds scale * N(0, 1) to each value (Gymnasium's np_random.standard_normal noise).
  static void add_normal_noise(Rng& rng, double* values, int n, double scale);

  // ctrl = action, mj_step x frame_skip, mj_rnePostConstraint where the layout asks for it.
  void simulate(std::span<const float> action);

  mjData_* data() { return data_; }
  const mjData_* data() const { return data_; }
  double reset_noise_scale() const { return reset_noise_scale_; }
  // The camera of draw(); the default (kAuto) picks it from the model. Set it in the constructor.
  void set_view(MujocoView view) { view_ = view; }

  // Writes the observation blocks that part() shows, in order, as float32.
  class ObsWriter {
   public:
    ObsWriter(std::span<float> obs, ObsPart part) : obs_(obs), part_(part) {}
    void positions(const double* values, int n) { write(ObsPart::kPositions, values, n, kNoClip); }
    // Velocities clipped to [-clip, clip] (Hopper's and Walker2d's clip(qvel, -10, 10)).
    void velocities(const double* values, int n, double clip = kNoClip) {
      write(ObsPart::kVelocities, values, n, clip);
    }
    void other(const double* values, int n, double clip = kNoClip);

   private:
    static constexpr double kNoClip = std::numeric_limits<double>::infinity();
    void write(ObsPart block, const double* values, int n, double clip);
    std::span<float> obs_;
    ObsPart part_;
    size_t at_ = 0;
  };

 private:
  struct Loaded;  // the model path and model, found before the Env base is built
  static Loaded load(const MujocoLayout& layout, const MujocoConfig& config);
  MujocoEnv(const MujocoLayout& layout, const MujocoConfig& config, ObsBlocks blocks,
            Loaded loaded);
  void set_state_impl(std::span<const double> state) final;

  std::shared_ptr<const mjModel_> model_;
  std::string model_path_;
  std::string error_context_;  // "model /.../ant.xml", for MuJoCo's errors (Env adds the id)
  mjData_* data_ = nullptr;
  int frame_skip_ = 0;
  bool contact_forces_ = false;
  double dt_ = 0;
  double reset_noise_scale_ = 0;
  ObsPart part_ = ObsPart::kFull;
  int integration_size_ = 0;
  std::vector<double> before_last_step_;  // integration state before the last physics step
  bool stepped_ = false;                  // the flag of get_state
  MujocoView view_;
  mutable std::unique_ptr<MujocoRenderer> renderer_;  // made by the first draw()
};

}  // namespace recur::envs
