// The env registry: Gymnasium ids -> factories, with the time limit and reward threshold that
// Gymnasium registers for each id. recur's built-in envs are registered on first use; a program
// adds its own with registry().add(spec), a plugin through envs/plugin.h (loaded by
// envs/plugin_loader.h). Register before envs are made from other threads: the registry is not
// locked.
//
//   auto env = recur::envs::make("CartPole-v1");
//   auto env = recur::envs::make("Pendulum-v1", Options{}.set("g", "9.81"));
//
// Every env takes the option max_episode_steps (0 = no limit) to override the registered limit,
// and prev_action / prev_reward (append the previous action / reward to the observation:
// envs/wrappers/previous_step.h); the other options are the env's own (documented in its header).
// Unknown ids and unknown options are errors that list the closest known names.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/options.h"
#include "envs/env.h"

namespace recur::envs {

struct EnvSpec {
  std::string id;                          // Gymnasium id, e.g. "CartPole-v1"
  std::string family;                      // "classic_control", "memory", ...
  int max_episode_steps = 0;               // registered time limit; 0 = none
  std::optional<double> reward_threshold;  // return that counts as solved, where one is known
  std::string summary;                     // one line for listings
  // Builds the env from its options; the registry has already consumed max_episode_steps.
  std::function<std::unique_ptr<Env>(OptionReader&)> factory;
  // Where the env comes from, for messages and listings: "" for recur's built-ins,
  // "plugin /abs/libx.so" for a plugin's, "program" (or the program's own words) otherwise.
  std::string source = {};
  // false: the id is listed but this build cannot make it (a library it needs is missing, as
  // MuJoCo for envs/mujoco); the factory throws recur::Error saying how to get it, and the summary
  // says what is missing.
  bool available = true;
};

class Registry {
 public:
  // Throws recur::Error when the spec has no id or factory, or when the id is taken (naming
  // where the existing one came from).
  void add(EnvSpec spec);
  // nullptr when the id is not registered.
  const EnvSpec* find(std::string_view id) const;
  // The spec, or recur::Error listing the closest known ids.
  const EnvSpec& at(std::string_view id) const;
  std::vector<std::string> ids() const;
  // In registration order; a deque, so that add() keeps earlier specs where they are.
  const std::deque<EnvSpec>& specs() const { return specs_; }

  // An env of a spec with a source (a plugin's or a program's) that throws while being built
  // comes out as recur::Error naming the env id and its source.
  std::unique_ptr<Env> make(std::string_view id, const Options& options = {}) const;

 private:
  std::deque<EnvSpec> specs_;
};

// The process's registry: every env built into recur, plus what plugins and the program added.
Registry& registry();
inline std::unique_ptr<Env> make(std::string_view id, const Options& options = {}) {
  return registry().make(id, options);
}

// Family registrations, called once by registry().
void register_classic_control(Registry& registry);
void register_memory(Registry& registry);
void register_box2d(Registry& registry);   // envs/box2d/register.cc
void register_popgym(Registry& registry);  // envs/popgym/register.cc
void register_mujoco(Registry& registry);  // envs/mujoco/register.cc

}  // namespace recur::envs
