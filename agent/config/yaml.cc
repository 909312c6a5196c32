#include "agent/config/yaml.h"

#include <fstream>
#include <functional>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "agent/config/values.h"
#include "core/error.h"
#include "core/text.h"

namespace recur::agent {
namespace {

using config_values::flow_text;
using config_values::read;
using config_values::Slot;
using config_values::yaml_text;

// ---- The table of sections and keys: reading, writing and the lists in messages. ----

struct Field {
  std::string key;
  std::function<void(TrainConfig&, const YAML::Node&, const Slot&)> read;
  std::function<std::string(const TrainConfig&)> write;
};

struct Section {
  std::string name;
  std::vector<Field> fields;

  const Field* find(const std::string& key) const {
    for (const auto& f : fields)
      if (f.key == key) return &f;
    return nullptr;
  }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& f : fields) out.push_back(f.key);
    return out;
  }
};

template <class S, class T>
Field field(const char* key, S TrainConfig::*section, T S::*member) {
  const std::string example = yaml_text(TrainConfig{}.*section.*member);
  return {key,
          [section, member, example](TrainConfig& c, const YAML::Node& n, const Slot& s) {
            Slot with_example = s;
            with_example.example = example;
            read(n, with_example, c.*section.*member);
          },
          [section, member](const TrainConfig& c) { return yaml_text(c.*section.*member); }};
}

// Keys in struct order (agent/config/config.h); to_yaml writes them in this order.
const std::vector<Section>& sections() {
  using T = TrainConfig;
  using E = EnvConfig;
  using P = PolicyConfig;
  using A = AlgoConfig;
  using O = OffPolicyConfig;
  using R = RunConfig;
  using D = DeviceConfig;
  using X = DistConfig;
  static const std::vector<Section> table = {
      {"env",
       {field("id", &T::env, &E::id), field("plugin", &T::env, &E::plugin),
        field("num_envs", &T::env, &E::num_envs), field("groups", &T::env, &E::groups),
        field("decorrelate_steps", &T::env, &E::decorrelate_steps),
        field("options", &T::env, &E::options), field("normalize_obs", &T::env, &E::normalize_obs),
        field("normalize_reward", &T::env, &E::normalize_reward),
        field("clip_obs", &T::env, &E::clip_obs), field("clip_reward", &T::env, &E::clip_reward)}},
      {"policy",
       {field("encoder", &T::policy, &P::encoder), field("activation", &T::policy, &P::activation),
        field("head", &T::policy, &P::head), field("core", &T::policy, &P::core),
        field("hidden", &T::policy, &P::hidden), field("layers", &T::policy, &P::layers),
        field("cell_clip", &T::policy, &P::cell_clip),
        field("shared_core", &T::policy, &P::shared_core),
        field("log_std_init", &T::policy, &P::log_std_init),
        field("forget_bias", &T::policy, &P::forget_bias),
        field("actor_gain", &T::policy, &P::actor_gain),
        field("critic_gain", &T::policy, &P::critic_gain), field("init", &T::policy, &P::init)}},
      {"algo",
       {field("type", &T::algo, &A::type),
        field("rollout_steps", &T::algo, &A::rollout_steps),
        field("epochs", &T::algo, &A::epochs),
        field("num_minibatches", &T::algo, &A::num_minibatches),
        field("bptt_steps", &T::algo, &A::bptt_steps),
        field("learning_rate", &T::algo, &A::learning_rate),
        field("lr_schedule", &T::algo, &A::lr_schedule),
        field("clip_schedule", &T::algo, &A::clip_schedule),
        field("gamma", &T::algo, &A::gamma),
        field("gae_lambda", &T::algo, &A::gae_lambda),
        field("clip_range", &T::algo, &A::clip_range),
        field("clip_range_vf", &T::algo, &A::clip_range_vf),
        field("vf_coef", &T::algo, &A::vf_coef),
        field("ent_coef", &T::algo, &A::ent_coef),
        field("max_grad_norm", &T::algo, &A::max_grad_norm),
        field("target_kl", &T::algo, &A::target_kl),
        field("normalize_advantage", &T::algo, &A::normalize_advantage),
        field("async", &T::algo, &A::async),
        field("async_anchor", &T::algo, &A::async_anchor),
        field("async_anchor_values", &T::algo, &A::async_anchor_values),
        field("adam_eps", &T::algo, &A::adam_eps),
        field("on_nonfinite", &T::algo, &A::on_nonfinite),
        field("max_nonfinite_updates", &T::algo, &A::max_nonfinite_updates)}},
      {"offpolicy",
       {field("buffer_size", &T::offpolicy, &O::buffer_size),
        field("batch_size", &T::offpolicy, &O::batch_size),
        field("seq_len", &T::offpolicy, &O::seq_len),
        field("burn_in", &T::offpolicy, &O::burn_in),
        field("stored_state", &T::offpolicy, &O::stored_state),
        field("learning_starts", &T::offpolicy, &O::learning_starts),
        field("updates_per_step", &T::offpolicy, &O::updates_per_step),
        field("steps_per_iteration", &T::offpolicy, &O::steps_per_iteration),
        field("actor_lr", &T::offpolicy, &O::actor_lr),
        field("critic_lr", &T::offpolicy, &O::critic_lr),
        field("alpha_lr", &T::offpolicy, &O::alpha_lr),
        field("tau", &T::offpolicy, &O::tau),
        field("init_alpha", &T::offpolicy, &O::init_alpha),
        field("auto_alpha", &T::offpolicy, &O::auto_alpha),
        field("reset_alpha", &T::offpolicy, &O::reset_alpha),
        field("target_entropy", &T::offpolicy, &O::target_entropy),
        field("policy_delay", &T::offpolicy, &O::policy_delay),
        field("target_noise", &T::offpolicy, &O::target_noise),
        field("target_noise_clip", &T::offpolicy, &O::target_noise_clip),
        field("exploration_noise", &T::offpolicy, &O::exploration_noise),
        field("max_grad_norm", &T::offpolicy, &O::max_grad_norm),
        field("save_replay", &T::offpolicy, &O::save_replay)}},
      {"run",
       {field("total_env_steps", &T::run, &R::total_env_steps),
        field("seed", &T::run, &R::seed),
        field("output_dir", &T::run, &R::output_dir),
        field("name", &T::run, &R::name),
        field("checkpoint_every", &T::run, &R::checkpoint_every),
        field("eval_every", &T::run, &R::eval_every),
        field("eval_episodes", &T::run, &R::eval_episodes),
        field("final_eval_episodes", &T::run, &R::final_eval_episodes),
        field("threads", &T::run, &R::threads),
        field("video_every_evals", &T::run, &R::video_every_evals),
        field("tensorboard", &T::run, &R::tensorboard),
        field("target_return", &T::run, &R::target_return),
        field("stop_at_target", &T::run, &R::stop_at_target),
        field("target_measure", &T::run, &R::target_measure),
        field("target_confirm_episodes", &T::run, &R::target_confirm_episodes),
        field("eval_async", &T::run, &R::eval_async),
        field("eval_nice", &T::run, &R::eval_nice),
        field("eval_threads", &T::run, &R::eval_threads),
        field("init_from", &T::run, &R::init_from),
        field("learner_threads", &T::run, &R::learner_threads)}},
      {"device",
       {field("actor", &T::device, &D::actor), field("learner", &T::device, &D::learner),
        field("index", &T::device, &D::index), field("cuda_graph", &T::device, &D::cuda_graph),
        field("actor_io", &T::device, &D::actor_io),
        field("cudnn_math", &T::device, &D::cudnn_math),
        field("cudnn_algo", &T::device, &D::cudnn_algo),
        field("cudnn_data", &T::device, &D::cudnn_data),
        field("tower_streams", &T::device, &D::tower_streams)}},
      {"dist",
       {field("backend", &T::dist, &X::backend), field("timeout_s", &T::dist, &X::timeout_s),
        field("sync_frac", &T::dist, &X::sync_frac)}},
  };
  return table;
}

std::vector<std::string> section_names() {
  std::vector<std::string> out;
  for (const auto& s : sections()) out.push_back(s.name);
  return out;
}

const Section* find_section(const std::string& name) {
  for (const auto& s : sections())
    if (s.name == name) return &s;
  return nullptr;
}

// "section.key" of another section that has `key`, for "did you mean" across sections.
std::string home_of(const std::string& key) {
  for (const auto& s : sections())
    if (s.find(key)) return s.name + "." + key;
  return "";
}

[[noreturn]] void unknown_section(const std::string& where, const std::string& name) {
  const std::vector<std::string> names = section_names();
  std::string hint;
  if (const std::string home = home_of(name); !home.empty()) {
    hint = fmt::format(" '{}' is a key of section {}: did you mean '{}'?", name,
                       home.substr(0, home.find('.')), home);
  } else if (const auto m = closest_matches(name, names, 1); !m.empty()) {
    hint = fmt::format(" Did you mean '{}'?", m.front());
  }
  throw Error(
      fmt::format("{}: unknown section '{}'.{} Sections: {} (docs/CONFIG.md lists each key).",
                  where, name, hint, join(names)));
}

[[noreturn]] void unknown_key(const std::string& where, const Section& section,
                              const std::string& key) {
  const std::vector<std::string> keys = section.keys();
  std::string hint;
  if (const auto m = closest_matches(key, keys, 1); !m.empty()) {
    hint = fmt::format(" Did you mean '{}.{}'?", section.name, m.front());
  } else if (const std::string home = home_of(key); !home.empty()) {
    hint = fmt::format(" Did you mean '{}'?", home);
  }
  throw Error(fmt::format("{}: unknown key '{}.{}'.{} Keys in section {}: {} (docs/CONFIG.md).",
                          where, section.name, key, hint, section.name, join(keys)));
}

// An empty env.plugin entry names no file (and std::filesystem::absolute throws on it).
void check_plugin_path(const std::string& path, const std::string& where) {
  RECUR_CHECK(!path.empty(),
              "{}: env.plugin holds an empty path. Give the path of an env plugin (.so), e.g. "
              "env.plugin=build/tests/plugins/libtmaze_plugin.so, or leave env.plugin out.",
              where);
}

std::string location(const std::string& file, const YAML::Mark& mark) {
  return mark.is_null() ? file : fmt::format("{}:{}", file, mark.line + 1);
}

void apply_section(const Section& section, const YAML::Node& node, const std::string& file,
                   const std::string& where, TrainConfig& config, ConfigSources& sources) {
  if (node.IsNull()) return;  // a section whose keys are all commented out
  RECUR_CHECK(node.IsMap(),
              "{}: section '{}' is {}, but a section holds `key: value` lines indented under "
              "`{}:`. Keys of {}: {}.",
              where, section.name, flow_text(node), section.name, section.name,
              join(section.keys()));
  for (const auto& kv : node) {
    const std::string at = location(file, kv.first.Mark());
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : flow_text(kv.first);
    const Field* f = section.find(key);
    if (!f) unknown_key(at, section, key);
    const std::string path = section.name + "." + key;
    RECUR_CHECK(!sources.contains(path), "{}: key '{}' is given twice (also at {}). Keep one.", at,
                path, sources[path]);
    f->read(config, kv.second, Slot{path, key, at, ""});
    sources[path] = at;
    if (path == "env.plugin") {
      // Relative to the config file, so that a config and its plugin travel together.
      const auto base = std::filesystem::absolute(std::filesystem::path(file)).parent_path();
      for (auto& p : config.env.plugin) {
        check_plugin_path(p, at);
        if (std::filesystem::path(p).is_relative()) p = (base / p).lexically_normal().string();
      }
    }
    if (path == "env.options") {
      config.env.options_source = at;
      for (const auto& opt : kv.second)
        sources[path + "." + opt.first.Scalar()] = location(file, opt.first.Mark());
    }
  }
}

void apply_document(const YAML::Node& root, const std::string& file, TrainConfig& config,
                    ConfigSources& sources) {
  if (root.IsNull()) return;  // an empty file: all defaults
  RECUR_CHECK(root.IsMap(),
              "{}: the top level is {}, but a config is a map of sections ({}), each with "
              "`key: value` lines indented under it, e.g.\nalgo:\n  learning_rate: 3e-4",
              location(file, root.Mark()), flow_text(root), join(section_names()));
  for (const auto& kv : root) {
    const std::string at = location(file, kv.first.Mark());
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : flow_text(kv.first);
    const Section* section = find_section(name);
    if (!section) unknown_section(at, name);
    RECUR_CHECK(!sources.contains(name),
                "{}: section '{}' is given twice (also at {}). Merge them into one.", at, name,
                sources[name]);
    sources[name] = at;
    apply_section(*section, kv.second, file, at, config, sources);
  }
}

void apply_override(const std::string& arg, TrainConfig& config, ConfigSources& sources) {
  const std::string where = "--set";
  const auto eq = arg.find('=');
  RECUR_CHECK(eq != std::string::npos,
              "--set '{}' has no '='. Write --set section.key=value, e.g. --set "
              "algo.learning_rate=3e-4 or --set policy.encoder=[64,64].",
              arg);
  std::string path = arg.substr(0, eq);
  path.erase(0, path.find_first_not_of(' '));
  path.erase(path.find_last_not_of(' ') + 1);
  const std::string value = arg.substr(eq + 1);
  const auto dot = path.find('.');
  RECUR_CHECK(dot != std::string::npos && dot > 0 && dot + 1 < path.size(),
              "--set '{}': '{}' is not a section.key path. Write --set section.key=value with a "
              "section among {}, e.g. --set env.num_envs=16.",
              arg, path, join(section_names()));
  const std::string section_name = path.substr(0, dot);
  const std::string key = path.substr(dot + 1);
  const Section* section = find_section(section_name);
  if (!section) unknown_section(where, section_name);

  YAML::Node node;
  if (value.find_first_not_of(' ') == std::string::npos) {
    node = YAML::Node(std::string());  // `--set run.name=`: the empty string
  } else {
    try {
      node = YAML::Load(value);
    } catch (const YAML::Exception& e) {
      throw Error(fmt::format(
          "--set '{}': the value '{}' is not valid YAML ({}). Write a single value (3e-4, relu, "
          "true) or a flow list ([64, 64]); quote the whole argument for the shell.",
          arg, value, e.msg));
    }
  }

  // One env option: env.options.NAME=VALUE adds or replaces that option only.
  if (section_name == "env" && key.rfind("options.", 0) == 0 && key.size() > 8) {
    const std::string name = key.substr(8);
    RECUR_CHECK(node.IsScalar(),
                "--set '{}': env option '{}' = {} must be a single value (a number, word or "
                "true/false), not a list or map.",
                arg, name, flow_text(node));
    config.env.options[name] = node.Scalar();
    sources[path] = where;
    const std::string& old = config.env.options_source;
    if (old.empty() || old == where) {
      config.env.options_source = where;
    } else if (old.find(where) == std::string::npos) {
      config.env.options_source = old + " and " + where;
    }
    return;
  }
  const Field* f = section->find(key);
  if (!f) unknown_key(where, *section, key);
  f->read(config, node, Slot{path, key, where, ""});
  sources[path] = where;
  if (path == "env.options") config.env.options_source = where;
  if (path == "env.plugin")
    for (auto& p : config.env.plugin) {
      check_plugin_path(p, where);
      p = std::filesystem::absolute(p).lexically_normal().string();
    }
}

}  // namespace

TrainConfig load_config(const std::filesystem::path& file,
                        const std::vector<std::string>& overrides) {
  const std::string name = file.string();
  std::error_code ec;
  RECUR_CHECK(std::filesystem::is_regular_file(file, ec),
              "config file '{}' {}. Give the path of a YAML config, e.g. configs/cartpole.yaml.",
              name, std::filesystem::exists(file, ec) ? "is not a file" : "does not exist");
  std::ifstream in(file, std::ios::binary);
  RECUR_CHECK(in.good(), "config file '{}' cannot be read. Check its permissions.", name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return load_config_text(buffer.str(), name, overrides);
}

TrainConfig load_config_text(const std::string& text, const std::string& name,
                             const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const std::string at =
        e.mark.is_null() ? name : fmt::format("{}:{}:{}", name, e.mark.line + 1, e.mark.column + 1);
    throw Error(fmt::format(
        "{}: YAML syntax error: {}. Fix the YAML near that line (indentation, a space after "
        "each ':', closed brackets and quotes).",
        at, e.msg));
  }

  TrainConfig config;
  ConfigSources sources;
  apply_document(root, name, config, sources);
  for (const auto& o : overrides) apply_override(o, config, sources);
  validate(config, sources);
  return config;
}

std::string to_yaml(const TrainConfig& config) {
  std::string out =
      "# recur resolved config: every key, defaults included (docs/CONFIG.md describes each).\n";
  for (const auto& section : sections()) {
    out += section.name + ":\n";
    for (const auto& f : section.fields) out += "  " + f.key + ": " + f.write(config) + "\n";
  }
  return out;
}

}  // namespace recur::agent
