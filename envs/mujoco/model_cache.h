// MuJoCo models for recur's envs: where Gymnasium's XML files are found, one shared read-only
// mjModel per file for the whole process, and recur's MuJoCo error and warning handlers.
//
// Models are Gymnasium's own XML files (gymnasium/envs/mujoco/assets/), never copied into recur
// (their provenance goes back to Roboti's models). A model is looked up, in order:
//   1. the env option xml_file: a path (absolute, or starting with "."), or a file name searched
//      in the directories below (as Gymnasium v5's xml_file argument);
//   2. the directory in the environment variable RECUR_GYMNASIUM_ASSETS;
//   3. the directory compiled in: ${RECUR_MUJOCO_DIR}/gymnasium/envs/mujoco/assets, which
//      tools/install-deps.sh fills.
//
// MuJoCo's handlers are process-global: mju_user_warning logs through spdlog (MuJoCo's default
// appends to MUJOCO_LOG.TXT in the working directory), mju_user_error throws recur::Error (the
// default calls exit()). They are installed when the first model loads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

struct mjModel_;  // <mujoco/mjmodel.h>; this header keeps MuJoCo's headers out of its users

namespace recur::envs {

// The path of the model for env `env`: `xml_file` as the option gave it ("" = none), else
// `default_file` (Gymnasium's file name, "ant.xml"), searched as above. Throws recur::Error naming
// every path tried and how to install the files.
std::string find_mujoco_model(const std::string& env, const std::string& xml_file,
                              const std::string& default_file);

// The compiled model of `path`, shared by every env of the process that asks for the same path.
// Throws recur::Error naming the env and the file when MuJoCo cannot load it.
std::shared_ptr<const mjModel_> load_mujoco_model(const std::string& env, const std::string& path);

// Models alive in the cache (tests: envs of one file share one model).
size_t cached_mujoco_models();

// "3.3.7": the version of the MuJoCo library recur runs on.
std::string mujoco_version();

// Installs the handlers described above (idempotent; load_mujoco_model calls it).
void install_mujoco_handlers();

// While alive, a MuJoCo error raised on this thread names `what` (an env and its model file):
// MuJoCo's error handler gets only a message. `what` must outlive the guard.
class MujocoErrorContext {
 public:
  explicit MujocoErrorContext(const std::string& what);
  ~MujocoErrorContext();
  MujocoErrorContext(const MujocoErrorContext&) = delete;
  MujocoErrorContext& operator=(const MujocoErrorContext&) = delete;

 private:
  const std::string* previous_;
};

}  // namespace recur::envs
