// The parts of Minari dataset writing that need no HDF5: where datasets live, what an id may be,
// and the env_spec string Gymnasium would write (minari_writer.h documents each).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "agent/record/minari_writer.h"
#include "agent/record/space_json.h"
#include "core/error.h"

namespace recur::agent::record {
namespace fs = std::filesystem;

namespace {

// Gymnasium 1.x registrations of the ids recur also provides (gymnasium/envs/__init__.py), for
// env_spec strings identical to EnvSpec.to_json(). Box2D thresholds are registered as Python ints.
struct GymnasiumRegistration {
  const char* id;
  const char* entry_point;
  const char* vector_entry_point;  // "" = None
  const char* kwargs;              // JSON object
  bool integer_threshold;
};
constexpr GymnasiumRegistration kGymnasium[] = {
    {"CartPole-v0", "gymnasium.envs.classic_control.cartpole:CartPoleEnv",
     "gymnasium.envs.classic_control.cartpole:CartPoleVectorEnv", "{}", false},
    {"CartPole-v1", "gymnasium.envs.classic_control.cartpole:CartPoleEnv",
     "gymnasium.envs.classic_control.cartpole:CartPoleVectorEnv", "{}", false},
    {"MountainCar-v0", "gymnasium.envs.classic_control.mountain_car:MountainCarEnv", "", "{}",
     false},
    {"MountainCarContinuous-v0",
     "gymnasium.envs.classic_control.continuous_mountain_car:Continuous_MountainCarEnv", "", "{}",
     false},
    {"Pendulum-v1", "gymnasium.envs.classic_control.pendulum:PendulumEnv", "", "{}", false},
    {"Acrobot-v1", "gymnasium.envs.classic_control.acrobot:AcrobotEnv", "", "{}", false},
    {"LunarLander-v3", "gymnasium.envs.box2d.lunar_lander:LunarLander", "", "{}", true},
    {"LunarLanderContinuous-v3", "gymnasium.envs.box2d.lunar_lander:LunarLander", "",
     R"({"continuous": true})", true},
    {"BipedalWalker-v3", "gymnasium.envs.box2d.bipedal_walker:BipedalWalker", "", "{}", true},
    {"BipedalWalkerHardcore-v3", "gymnasium.envs.box2d.bipedal_walker:BipedalWalker", "",
     R"({"hardcore": true})", true},
};

const GymnasiumRegistration* find_registration(const std::string& env_id) {
  for (const auto& r : kGymnasium)
    if (env_id == r.id) return &r;
  return nullptr;
}

}  // namespace

std::string default_datasets_root() {
  if (const char* env = std::getenv("MINARI_DATASETS_PATH"); env && *env) return env;
  const char* home = std::getenv("HOME");
  RECUR_CHECK(home && *home,
              "cannot find the Minari datasets directory: neither MINARI_DATASETS_PATH nor HOME "
              "is set (set MINARI_DATASETS_PATH or pass an output directory)");
  return (fs::path(home) / ".minari" / "datasets").string();
}

void check_dataset_id(const std::string& id) {
  // minari/dataset/minari_dataset.py: NAMESPACE_RE, DATASET_NAME_RE, VERSION_RE, with the
  // version required and \w taken as ASCII.
  static const std::regex kId(
      R"(^(?:([-_A-Za-z0-9][-_A-Za-z0-9/]*[-_A-Za-z0-9]+)/)?([-_A-Za-z0-9]+?)-v([0-9]+)$)");
  static const std::regex kVersion(R"(-v[0-9]+$)");
  static const std::regex kChars(R"(^[-_A-Za-z0-9/]+$)");
  std::string problem;
  if (id.empty())
    problem = "it is empty";
  else if (!std::regex_search(id, kVersion))
    problem = "it does not end in a version suffix -vN (e.g. -v0)";
  else if (!std::regex_match(id, kChars))
    problem = "only letters, digits, '-', '_' and '/' (between parts) may appear";
  else if (id.front() == '/' || id.find("//") != std::string::npos)
    problem = "a part between '/' is empty";
  else if (!std::regex_match(id, kId))
    problem = "the namespace must be at least two characters and the name must not be empty";
  if (problem.empty()) return;
  throw Error(
      fmt::format("dataset id '{}' is not a Minari dataset id: {}. Minari ids are "
                  "(namespace/)(env_name/)name-vN, for example recur/cartpole/ppo-lstm-v0",
                  id, problem));
}

std::string gymnasium_entry_point(const std::string& env_id) {
  const GymnasiumRegistration* r = find_registration(env_id);
  return r ? r->entry_point : "";
}

namespace {

// EnvSpec.to_json()'s layout (json.dumps of the dataclass fields, in order).
std::string env_spec_json(const std::string& id, const std::string& entry_point,
                          const std::string& threshold, int max_episode_steps,
                          const std::string& kwargs, const std::string& vector_entry) {
  return fmt::format(
      R"({{"id": {}, "entry_point": {}, "reward_threshold": {}, "nondeterministic": false, )"
      R"("max_episode_steps": {}, "order_enforce": true, "disable_env_checker": false, )"
      R"("kwargs": {}, "additional_wrappers": [], "vector_entry_point": {}}})",
      python_json_string(id), python_json_string(entry_point), threshold,
      max_episode_steps > 0 ? std::to_string(max_episode_steps) : "null", kwargs, vector_entry);
}

}  // namespace

std::string minari_env_spec_json(const DatasetInfo& info) {
  if (!info.env_spec_json.empty()) return info.env_spec_json;
  if (info.env_entry_point.empty()) return "";
  const GymnasiumRegistration* r = find_registration(info.env_id);
  if (r && info.env_entry_point != r->entry_point) r = nullptr;
  std::string threshold = "null";
  if (info.reward_threshold) {
    const double t = *info.reward_threshold;
    threshold = r && r->integer_threshold && t == std::floor(t) && std::abs(t) < 1e15
                    ? fmt::format("{}", static_cast<int64_t>(t))
                    : python_float_repr(t);
  }
  const std::string vector_entry =
      r && *r->vector_entry_point ? python_json_string(r->vector_entry_point) : "null";
  return env_spec_json(info.env_id, info.env_entry_point, threshold, info.max_episode_steps,
                       r ? r->kwargs : "{}", vector_entry);
}

std::string recur_env_spec_json(const DatasetInfo& info,
                                const std::map<std::string, std::string>& env_options) {
  std::string kwargs = "{\"env_id\": " + python_json_string(info.env_id);
  for (const auto& [key, value] : env_options)
    if (key != "max_episode_steps")  // the spec's max_episode_steps (TimeLimit) carries it
      kwargs += ", " + python_json_string(key) + ": " + python_json_string(value);
  kwargs += "}";
  return env_spec_json("recur/" + info.env_id, kRecurGymnasiumEntryPoint,
                       info.reward_threshold ? python_float_repr(*info.reward_threshold) : "null",
                       info.max_episode_steps, kwargs,
                       python_json_string("recur.envs:RecurVectorEnv"));
}

}  // namespace recur::agent::record
