// Env plugins: a shared library that adds envs to recur's registry, loaded by `recur ... --plugin
// PATH`, `env.plugin: PATH` in a config, or envs::load_plugin() (envs/plugin_loader.h).
//
// A plugin is one .cc file (or more) and a 5-line CMakeLists.txt (recur_add_env_plugin, in the
// installed CMake package):
//
//   #include "envs/plugin.h"
//   class TMaze : public recur::envs::Env { ... };            // as any env (envs/env.h)
//   RECUR_ENV_PLUGIN("tmaze", "1.0", registrar) {
//     registrar.add({.id = "TMaze-v0", .family = "memory", .max_episode_steps = 40,
//                    .reward_threshold = 3.5, .summary = "...",
//                    .factory = [](recur::OptionReader& o) {
//                      return std::make_unique<TMaze>(o);
//                    }});
//   }
//
// The macro defines the plugin's one exported symbol, `recur_env_plugin`, a C function returning
// a RecurEnvPluginInfo. Its first two fields never change meaning, so any recur can read them from
// any plugin; the loader refuses a plugin whose ABI version, recur version or C++ build (standard
// library, its dual ABI, the sizes of the classes that cross the boundary) differ from its own,
// and says which of the two to rebuild. C++ objects (EnvSpec, Env) cross the boundary only after
// that check; exceptions never do: the macro catches whatever registration throws and hands the
// message back as text.
//
// The plugin links nothing of recur: Env, Space, Options and the render Canvas are resolved at
// load time from the program that loads it (the `recur` tool, a program linking recur::agent, or
// the Python module), which exports them. Plugins stay loaded until the process exits: the
// factories, vtables and Envs they created must outlive every use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>

#include "core/version.h"
#include "envs/env.h"
#include "envs/registry.h"

// Bumped whenever RecurEnvPluginInfo, the classes that cross the boundary (Env's virtual functions)
// or the way registration works changes. 2: Env::reset_impl receives the reset seed.
#define RECUR_ENV_PLUGIN_ABI_VERSION 2

namespace recur::envs {

// What a plugin's registration function adds envs through. add() checks the spec (a non-empty id
// in Gymnasium's form, a factory) and that no built-in, earlier plugin or program env has the id;
// nothing reaches the registry unless the whole registration succeeds.
class PluginRegistrar {
 public:
  virtual ~PluginRegistrar() = default;
  virtual void add(EnvSpec spec) = 0;
};

}  // namespace recur::envs

extern "C" {

// The plugin's description. Read by the loader in this order: abi_version and struct_size first
// (never moved), then the rest only when both match.
struct RecurEnvPluginInfo {
  uint32_t abi_version;        // RECUR_ENV_PLUGIN_ABI_VERSION the plugin was compiled with
  uint32_t struct_size;        // sizeof(RecurEnvPluginInfo) in the plugin
  const char* recur_version;   // RECUR_VERSION_STRING of the recur headers it was compiled with
  const char* cxx_build;       // RECUR_CXX_BUILD: standard library and its ABI
  uint32_t sizeof_env;         // sizeof(recur::envs::Env): the base class every plugin env extends
  uint32_t sizeof_env_spec;    // sizeof(recur::envs::EnvSpec)
  uint32_t sizeof_space;       // sizeof(recur::envs::Space)
  const char* name;            // the plugin's name, for messages and `recur envs`
  const char* plugin_version;  // the plugin's own version, free text
  // Adds the plugin's envs. Returns 0, or 1 with a NUL-terminated message in error[0, error_size).
  int (*register_envs)(recur::envs::PluginRegistrar* registrar, char* error, size_t error_size);
};

// The one symbol the loader looks up.
typedef const RecurEnvPluginInfo* (*RecurEnvPluginEntry)(void);

}  // extern "C"

// The C++ build a plugin must share with recur: C++ objects and std::string cross the boundary.
#if defined(__GLIBCXX__)
#define RECUR_CXX_STDLIB "libstdc++"
#elif defined(_LIBCPP_VERSION)
#define RECUR_CXX_STDLIB "libc++"
#else
#define RECUR_CXX_STDLIB "unknown-stdlib"
#endif
#if defined(_GLIBCXX_USE_CXX11_ABI) && _GLIBCXX_USE_CXX11_ABI
#define RECUR_CXX_DUAL_ABI " cxx11-abi"
#else
#define RECUR_CXX_DUAL_ABI " old-abi"
#endif
#define RECUR_CXX_BUILD RECUR_CXX_STDLIB RECUR_CXX_DUAL_ABI

namespace recur::envs::detail {

// Runs a plugin's registration body, turning any exception into text for the loader.
template <class Body>
int run_plugin_registration(Body body, PluginRegistrar* registrar, char* error,
                            size_t error_size) noexcept {
  const auto report = [&](const char* what) {
    if (error_size == 0) return;
    std::strncpy(error, what, error_size - 1);
    error[error_size - 1] = '\0';
  };
  try {
    body(*registrar);
    return 0;
  } catch (const std::exception& e) {
    report(e.what());
  } catch (...) {
    report("an exception that is not a std::exception");
  }
  return 1;
}

}  // namespace recur::envs::detail

// Defines the plugin's entry point; the block that follows is its registration body, with
// `REGISTRAR` (a recur::envs::PluginRegistrar&) in scope. NAME and VERSION are string literals.
#define RECUR_ENV_PLUGIN(NAME, VERSION, REGISTRAR)                                              \
  static void recur_env_plugin_body_(::recur::envs::PluginRegistrar& REGISTRAR);                \
  static int recur_env_plugin_register_(::recur::envs::PluginRegistrar* registrar, char* error, \
                                        size_t error_size) {                                    \
    return ::recur::envs::detail::run_plugin_registration(recur_env_plugin_body_, registrar,    \
                                                          error, error_size);                   \
  }                                                                                             \
  extern "C" __attribute__((visibility("default"))) const RecurEnvPluginInfo* recur_env_plugin( \
      void) {                                                                                   \
    static const RecurEnvPluginInfo info = {RECUR_ENV_PLUGIN_ABI_VERSION,                       \
                                            sizeof(RecurEnvPluginInfo),                         \
                                            RECUR_VERSION_STRING,                               \
                                            RECUR_CXX_BUILD,                                    \
                                            sizeof(::recur::envs::Env),                         \
                                            sizeof(::recur::envs::EnvSpec),                     \
                                            sizeof(::recur::envs::Space),                       \
                                            NAME,                                               \
                                            VERSION,                                            \
                                            &recur_env_plugin_register_};                       \
    return &info;                                                                               \
  }                                                                                             \
  static void recur_env_plugin_body_(::recur::envs::PluginRegistrar& REGISTRAR)
