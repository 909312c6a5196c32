// Loading, checking and writing a TrainConfig: the one place configs enter recur.
//
//   defaults (agent/config/config.h)  <-  YAML file (sections env, policy, algo, run, device)
//                              <-  --set section.key=value (in order)   ->  validate()
//
// Every error is a recur::Error that names where the value came from ("configs/x.yaml:12" or
// "--set"), the key path ("algo.learning_rate"), the value, what is allowed and what to do.
// docs/CONFIG.md lists every key.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "agent/config/config.h"

namespace recur::agent {

// Key path ("algo.gamma", "env.options.g") -> where its value was set ("cfg.yaml:7", "--set").
// Keys not in the map kept their defaults.
using ConfigSources = std::map<std::string, std::string>;

// Reads `file` onto the defaults, applies each override ("section.key=value", the value parsed as
// a YAML scalar or flow collection: `policy.encoder=[64,64]`, `env.options.g=9.81`), then
// validates. env.options values are kept as text (the env registry checks them) and
// env.options_source says where they came from.
TrainConfig load_config(const std::filesystem::path& file,
                        const std::vector<std::string>& overrides);
// load_config of a file's text already read: `name` stands for the file in messages and relative
// env.plugin paths are resolved against its directory.
TrainConfig load_config_text(const std::string& text, const std::string& name,
                             const std::vector<std::string>& overrides);

// Checks every range and every combination of values; throws recur::Error on the first problem.
// With `sources`, messages name the file and line of each key involved.
void validate(const TrainConfig& config, const ConfigSources& sources);
void validate(const TrainConfig& config);

// The resolved config as YAML: every key, defaults included, sections and keys in a fixed order,
// floats written so that they read back exactly. load_config() of this text gives back an equal
// config; it is what a run directory records and `recur train --print-config` prints.
std::string to_yaml(const TrainConfig& config);

}  // namespace recur::agent
