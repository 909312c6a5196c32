#include "envs/mujoco/model_cache.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include <mujoco/mujoco.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/text.h"

#ifndef RECUR_MUJOCO_ASSETS_DIR
#error "RECUR_MUJOCO_ASSETS_DIR must be defined (cmake/RecurMuJoCo.cmake)"
#endif

namespace recur::envs {
namespace {

thread_local const std::string* error_context = nullptr;

void on_warning(const char* message) {
  spdlog::warn("MuJoCo: {}", message);
}

// MuJoCo's error handler must not return (MuJoCo's code after it assumes it did not); throwing a
// C++ exception through MuJoCo's frames is what MuJoCo's own Python bindings do.
[[noreturn]] void on_error(const char* message) {
  if (error_context) throw Error(fmt::format("MuJoCo error in {}: {}", *error_context, message));
  throw Error(fmt::format("MuJoCo error: {}", message));
}

struct ModelCache {
  std::mutex mutex;
  // Weak: a model lives while some env uses it, and is freed with the last one.
  std::map<std::string, std::weak_ptr<const mjModel>> models;
};

ModelCache& cache() {
  static ModelCache instance;
  return instance;
}

bool is_path(const std::string& file) {
  return !file.empty() && (file.front() == '/' || file.front() == '.');
}

}  // namespace

void install_mujoco_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    mju_user_warning = on_warning;
    mju_user_error = on_error;
  });
}

MujocoErrorContext::MujocoErrorContext(const std::string& what) : previous_(error_context) {
  error_context = &what;
}

MujocoErrorContext::~MujocoErrorContext() {
  error_context = previous_;
}

std::string find_mujoco_model(const std::string& env, const std::string& xml_file,
                              const std::string& default_file) {
  namespace fs = std::filesystem;
  const std::string file = xml_file.empty() ? default_file : xml_file;
  std::vector<std::string> tried;
  if (is_path(file)) {
    tried.push_back(file);
  } else {
    if (const char* dir = std::getenv("RECUR_GYMNASIUM_ASSETS"); dir && *dir)
      tried.push_back((fs::path(dir) / file).string());
    tried.push_back((fs::path(RECUR_MUJOCO_ASSETS_DIR) / file).string());
  }
  for (const auto& path : tried) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) return fs::absolute(path).lexically_normal().string();
  }
  throw Error(fmt::format(
      "env {}: MuJoCo model {} not found; looked in {}. recur reads Gymnasium's model files: run "
      "tools/install-deps.sh (it runs `python3 -m pip install --no-deps --target {} mujoco==3.3.7 "
      "gymnasium==1.4.0`), set RECUR_GYMNASIUM_ASSETS to a gymnasium/envs/mujoco/assets directory, "
      "or give the env option xml_file=<path>",
      env, file, join(tried), RECUR_MUJOCO_DIR));
}

std::shared_ptr<const mjModel> load_mujoco_model(const std::string& env, const std::string& path) {
  install_mujoco_handlers();
  ModelCache& c = cache();
  std::lock_guard lock(c.mutex);
  if (auto model = c.models[path].lock()) return model;
  char error[1024] = "";
  const std::string what = fmt::format("env {} (model {})", env, path);
  MujocoErrorContext context(what);
  mjModel* model = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
  RECUR_CHECK(model != nullptr, "env {}: MuJoCo {} cannot load the model {}: {}", env,
              mujoco_version(), path, error);
  std::shared_ptr<const mjModel> shared(
      model, [](const mjModel* m) { mj_deleteModel(const_cast<mjModel*>(m)); });
  c.models[path] = shared;
  return shared;
}

size_t cached_mujoco_models() {
  ModelCache& c = cache();
  std::lock_guard lock(c.mutex);
  size_t alive = 0;
  for (const auto& [path, model] : c.models) alive += model.expired() ? 0 : 1;
  return alive;
}

std::string mujoco_version() {
  return mj_versionString();
}

}  // namespace recur::envs
