#include "envs/plugin_loader.h"

#include <dlfcn.h>

#include <array>
#include <deque>
#include <fstream>
#include <mutex>

#include "core/error.h"
#include "envs/plugin.h"

namespace recur::envs {
namespace {

// Plugins live until exit, so references into this list stay valid.
std::deque<LoadedPlugin>& plugins() {
  static std::deque<LoadedPlugin> list;
  return list;
}
std::mutex& plugin_mutex() {
  static std::mutex m;
  return m;
}

// Collects a plugin's specs; the registry sees them only when registration succeeded as a whole.
class CollectingRegistrar final : public PluginRegistrar {
 public:
  CollectingRegistrar(const Registry& registry, std::string source)
      : registry_(registry), source_(std::move(source)) {}

  void add(EnvSpec spec) override {
    RECUR_CHECK(!spec.id.empty(),
                "an env spec has an empty id; give it a Gymnasium-style id such "
                "as \"TMaze-v0\"");
    RECUR_CHECK(spec.factory != nullptr, "env {} has no factory; set EnvSpec::factory", spec.id);
    if (const EnvSpec* old = registry_.find(spec.id)) {
      throw Error(fmt::format("env id '{}' is already registered by {}; rename the plugin's env",
                              spec.id, old->source.empty() ? "recur's built-ins" : old->source));
    }
    for (const auto& s : specs_)
      RECUR_CHECK(s.id != spec.id, "env id '{}' is registered twice by this plugin", spec.id);
    spec.source = source_;
    specs_.push_back(std::move(spec));
  }
  std::vector<EnvSpec>& specs() { return specs_; }

 private:
  const Registry& registry_;
  std::string source_;
  std::vector<EnvSpec> specs_;
};

// First bytes of the file: an ELF header, or what it is instead, for the message.
std::string describe_non_elf(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4> magic{};
  in.read(magic.data(), magic.size());
  if (in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F')
    return "";
  return "it is not an ELF shared library";
}

}  // namespace

const LoadedPlugin& load_plugin(const std::filesystem::path& given, Registry& registry) {
  std::lock_guard lock(plugin_mutex());
  const std::string shown = given.string();
  std::error_code ec;
  RECUR_CHECK(!given.empty(), "an env plugin path is empty; give the path of a plugin's .so");
  RECUR_CHECK(std::filesystem::exists(given, ec),
              "env plugin {}: no such file; build the plugin (recur_add_env_plugin) or fix the "
              "path",
              shown);
  RECUR_CHECK(std::filesystem::is_regular_file(given, ec),
              "env plugin {}: not a regular file; give the plugin's .so", shown);
  const std::filesystem::path path = std::filesystem::canonical(given, ec);
  RECUR_CHECK(!ec, "env plugin {}: cannot resolve the path: {}", shown, ec.message());
  for (const auto& p : plugins())
    if (p.path == path) return p;

  // The library holding this loader (a Python extension module, which Python opens with
  // RTLD_LOCAL) must be in the global scope for the plugin's undefined recur symbols to resolve
  // against it; an executable is global already, and then this is a no-op.
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&loaded_plugins), &self) != 0 && self.dli_fname != nullptr)
    dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);

  const std::string non_elf = describe_non_elf(path);
  RECUR_CHECK(non_elf.empty(), "env plugin {}: {}; give the .so that recur_add_env_plugin built",
              shown, non_elf);
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw Error(fmt::format(
        "env plugin {}: cannot be loaded: {}. A plugin is a shared library built for this "
        "machine with recur_add_env_plugin; an undefined recur symbol means the program that "
        "loads it does not export recur (link recur::agent, or use the `recur` tool)",
        shown, why ? why : "unknown dlopen error"));
  }
  // From here on the library stays loaded, even when it is refused: unloading code whose static
  // objects may already have run is not safe, and a refused plugin costs only its mapping.
  dlerror();
  void* symbol = dlsym(handle, "recur_env_plugin");
  if (symbol == nullptr) {
    throw Error(
        fmt::format("env plugin {}: no entry point `recur_env_plugin`; a plugin defines it with "
                    "RECUR_ENV_PLUGIN(name, version, registrar) {{ ... }} from envs/plugin.h",
                    shown));
  }
  const auto entry = reinterpret_cast<RecurEnvPluginEntry>(symbol);
  const RecurEnvPluginInfo* info = entry();
  RECUR_CHECK(info != nullptr, "env plugin {}: recur_env_plugin() returned no plugin info", shown);
  // The two fields whose place never changes, then the rest.
  if (info->abi_version != RECUR_ENV_PLUGIN_ABI_VERSION ||
      info->struct_size < sizeof(RecurEnvPluginInfo)) {
    const bool readable =
        info->struct_size >= offsetof(RecurEnvPluginInfo, cxx_build) && info->abi_version >= 1;
    throw Error(fmt::format(
        "env plugin {}: built against recur {} (plugin ABI {}), but this is recur {} (plugin ABI "
        "{}); rebuild the plugin against this recur (find_package(recur) from its install)",
        shown, readable && info->recur_version ? info->recur_version : "of another generation",
        info->abi_version, RECUR_VERSION_STRING, RECUR_ENV_PLUGIN_ABI_VERSION));
  }
  const std::string plugin_recur = info->recur_version ? info->recur_version : "(unset)";
  RECUR_CHECK(plugin_recur == RECUR_VERSION_STRING,
              "env plugin {}: built against recur {}, but this is recur {}; rebuild the plugin "
              "against this recur (find_package(recur) from its install)",
              shown, plugin_recur, RECUR_VERSION_STRING);
  const std::string cxx = info->cxx_build ? info->cxx_build : "(unset)";
  RECUR_CHECK(cxx == RECUR_CXX_BUILD,
              "env plugin {}: built with C++ standard library '{}', but recur uses '{}'; C++ "
              "objects cross the plugin boundary, so build the plugin with recur's compiler and "
              "flags",
              shown, cxx, RECUR_CXX_BUILD);
  RECUR_CHECK(info->sizeof_env == sizeof(Env) && info->sizeof_env_spec == sizeof(EnvSpec) &&
                  info->sizeof_space == sizeof(Space),
              "env plugin {}: its Env/EnvSpec/Space are {}/{}/{} bytes, this recur's are {}/{}/{}: "
              "it was built against other recur headers; rebuild it against this recur",
              shown, info->sizeof_env, info->sizeof_env_spec, info->sizeof_space, sizeof(Env),
              sizeof(EnvSpec), sizeof(Space));
  RECUR_CHECK(info->register_envs != nullptr, "env plugin {}: no registration function", shown);

  LoadedPlugin loaded;
  loaded.path = path;
  loaded.name = info->name ? info->name : path.stem().string();
  loaded.version = info->plugin_version ? info->plugin_version : "";
  CollectingRegistrar registrar(registry, "plugin " + path.string());
  std::array<char, 2048> error{};
  // Registration runs the plugin's code: its exceptions come back as text (never across the C
  // boundary), and a throw from the registrar (a clashing id) comes back the same way.
  if (info->register_envs(&registrar, error.data(), error.size()) != 0) {
    throw Error(fmt::format("env plugin {} ({}): registration failed: {}", shown, loaded.name,
                            error.data()));
  }
  RECUR_CHECK(!registrar.specs().empty(), "env plugin {} ({}) registered no envs", shown,
              loaded.name);
  for (auto& spec : registrar.specs()) {
    loaded.env_ids.push_back(spec.id);
    registry.add(std::move(spec));
  }
  plugins().push_back(std::move(loaded));
  return plugins().back();
}

const std::deque<LoadedPlugin>& loaded_plugins() {
  return plugins();
}

const LoadedPlugin* plugin_of(const std::string& env_id) {
  for (const auto& p : plugins())
    for (const auto& id : p.env_ids)
      if (id == env_id) return &p;
  return nullptr;
}

}  // namespace recur::envs
