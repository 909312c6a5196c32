// The values of config keys as YAML (agent/config/yaml.cc's table of keys uses them): reading a
// node into a typed config field with messages that name the file, line, key, what was expected
// and an example, and writing a value as YAML text that reads back to the same value.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace recur::agent::config_values {

// The key being read and where its value came from, for messages.
struct Slot {
  std::string path;     // "algo.gamma"
  std::string key;      // "gamma"
  std::string where;    // "cfg.yaml:7" or "--set"
  std::string example;  // the default, as YAML: a value of the right type to show
};

// A node as one line for messages: 'scalar', a flow-style list or map, or (nothing).
std::string flow_text(const YAML::Node& node);

// node -> out, or recur::Error naming s.where, s.path, the value and what was expected.
void read(const YAML::Node& node, const Slot& s, int64_t& out);
void read(const YAML::Node& node, const Slot& s, int& out);
void read(const YAML::Node& node, const Slot& s, uint64_t& out);
void read(const YAML::Node& node, const Slot& s, float& out);
void read(const YAML::Node& node, const Slot& s, std::optional<float>& out);  // null: none
void read(const YAML::Node& node, const Slot& s, bool& out);
void read(const YAML::Node& node, const Slot& s, std::string& out);
void read(const YAML::Node& node, const Slot& s, std::vector<int>& out);
// A list of strings; a single string is a list of one, null or [] none (env.plugin).
void read(const YAML::Node& node, const Slot& s, std::vector<std::string>& out);
// env.options: a free map of scalars, kept as text for the env registry to parse.
void read(const YAML::Node& node, const Slot& s, std::map<std::string, std::string>& out);

// YAML text that reads back as the same value.
std::string yaml_text(const std::string& v);
std::string yaml_text(int v);
std::string yaml_text(int64_t v);
std::string yaml_text(uint64_t v);
std::string yaml_text(bool v);
std::string yaml_text(float v);
std::string yaml_text(const std::optional<float>& v);  // null: none
std::string yaml_text(const std::vector<int>& v);
std::string yaml_text(const std::vector<std::string>& v);
std::string yaml_text(const std::map<std::string, std::string>& v);

}  // namespace recur::agent::config_values
