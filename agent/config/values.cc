// Reading and writing the values of config keys as YAML (see values.h).
#include "agent/config/values.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/text.h"

namespace recur::agent::config_values {
namespace {

[[noreturn]] void wrong_type(const Slot& s, const YAML::Node& node, std::string_view expected,
                             std::string_view example = "") {
  std::string_view is = "not";
  if (!node.IsDefined() || node.IsNull()) is = "empty, not";
  if (node.IsSequence()) is = "a list, not";
  if (node.IsMap()) is = "a map, not";
  if (node.IsScalar() && node.Tag() == "!") is = "quoted text, not";
  throw Error(fmt::format("{}: {} = {} is {} {}. Write e.g. `{}: {}`{}.", s.where, s.path,
                          flow_text(node), is, expected, s.key,
                          example.empty() ? s.example : example,
                          example.empty() ? " (the default)" : ""));
}

// A plain (unquoted) scalar's text; quoted text is a string, never a number or a bool.
const std::string* plain_scalar(const YAML::Node& node) {
  if (!node.IsScalar() || node.Tag() == "!") return nullptr;
  return &node.Scalar();
}

bool parse_int64(std::string_view text, int64_t& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  if (ec == std::errc() && p == end) return true;
  // SB3 configs write step counts as 1e5 or 1.0e6: accept a float that is a whole number.
  double d = 0;
  auto [q, ec2] = std::from_chars(text.data(), end, d);
  if (ec2 != std::errc() || q != end || !std::isfinite(d) || std::trunc(d) != d ||
      std::fabs(d) >= 9.2e18)
    return false;
  out = static_cast<int64_t>(d);
  return true;
}

}  // namespace

std::string flow_text(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "(nothing)";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  YAML::Emitter out;
  out.SetSeqFormat(YAML::Flow);
  out.SetMapFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

void read(const YAML::Node& node, const Slot& s, int64_t& out) {
  const std::string* text = plain_scalar(node);
  if (!text || !parse_int64(*text, out)) wrong_type(s, node, "an integer");
}

void read(const YAML::Node& node, const Slot& s, int& out) {
  int64_t wide = 0;
  read(node, s, wide);
  RECUR_CHECK(wide >= std::numeric_limits<int>::min() && wide <= std::numeric_limits<int>::max(),
              "{}: {} = {} does not fit in a 32-bit integer (at most {}). Use a smaller value.",
              s.where, s.path, wide, std::numeric_limits<int>::max());
  out = static_cast<int>(wide);
}

void read(const YAML::Node& node, const Slot& s, uint64_t& out) {
  const std::string* text = plain_scalar(node);
  int64_t wide = -1;
  if (text) {
    const char* end = text->data() + text->size();
    auto [p, ec] = std::from_chars(text->data(), end, out);
    if (ec == std::errc() && p == end) return;
    if (parse_int64(*text, wide) && wide >= 0) {
      out = static_cast<uint64_t>(wide);
      return;
    }
  }
  wrong_type(s, node, "a non-negative integer");
}

void read(const YAML::Node& node, const Slot& s, float& out) {
  const std::string* text = plain_scalar(node);
  if (!text) wrong_type(s, node, "a number");
  std::string_view t = *text;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  const char* end = t.data() + t.size();
  auto [p, ec] = std::from_chars(t.data(), end, out);
  RECUR_CHECK(ec != std::errc::result_out_of_range,
              "{}: {} = {} is out of the range of a float (about 3.4e38). Use a smaller value.",
              s.where, s.path, *text);
  if (ec != std::errc() || p != end || !std::isfinite(out)) {
    wrong_type(s, node, "a finite number");
  }
}

// null (or ~) for none, else a finite number.
void read(const YAML::Node& node, const Slot& s, std::optional<float>& out) {
  if (node.IsNull()) {
    out.reset();
    return;
  }
  if (const std::string* text = plain_scalar(node)) {
    std::string_view t = *text;
    if (!t.empty() && t.front() == '+') t.remove_prefix(1);
    float v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc() && p == t.data() + t.size() && std::isfinite(v)) {
      out = v;
      return;
    }
  }
  wrong_type(s, node, "a number or null");
}

void read(const YAML::Node& node, const Slot& s, bool& out) {
  const std::string* text = plain_scalar(node);
  if (text && (*text == "true" || *text == "True" || *text == "TRUE")) {
    out = true;
  } else if (text && (*text == "false" || *text == "False" || *text == "FALSE")) {
    out = false;
  } else {
    wrong_type(s, node, "true or false");
  }
}

void read(const YAML::Node& node, const Slot& s, std::string& out) {
  if (!node.IsScalar()) wrong_type(s, node, "a string");
  out = node.Scalar();
}

void read(const YAML::Node& node, const Slot& s, std::vector<int>& out) {
  if (!node.IsSequence()) wrong_type(s, node, "a list of integers");
  std::vector<int> values;
  for (size_t i = 0; i < node.size(); ++i) {
    int64_t v = 0;
    const std::string* text = plain_scalar(node[i]);
    if (!text || !parse_int64(*text, v) || v < std::numeric_limits<int>::min() ||
        v > std::numeric_limits<int>::max()) {
      throw Error(
          fmt::format("{}: {} = {}: element {} ({}) is not an integer. Write e.g. `{}: "
                      "[64, 64]` ([] for none).",
                      s.where, s.path, flow_text(node), i + 1, flow_text(node[i]), s.key));
    }
    values.push_back(static_cast<int>(v));
  }
  out = std::move(values);
}

void read(const YAML::Node& node, const Slot& s, std::vector<std::string>& out) {
  if (node.IsNull()) {
    out.clear();
    return;
  }
  if (node.IsScalar()) {
    out = {node.Scalar()};
    return;
  }
  if (!node.IsSequence())
    wrong_type(s, node, "a path or a list of paths", "[build/libtmaze_plugin.so]");
  std::vector<std::string> values;
  for (size_t i = 0; i < node.size(); ++i) {
    RECUR_CHECK(node[i].IsScalar() && !node[i].Scalar().empty(),
                "{}: {} = {}: item {} is {}, but each item is a path. Write e.g. `{}: "
                "[build/libtmaze_plugin.so]`.",
                s.where, s.path, flow_text(node), i + 1, flow_text(node[i]), s.key);
    values.push_back(node[i].Scalar());
  }
  out = std::move(values);
}

// env.options: a free map of scalars, kept as text for the env registry to parse.
void read(const YAML::Node& node, const Slot& s, std::map<std::string, std::string>& out) {
  if (node.IsNull()) {
    out.clear();
    return;
  }
  if (!node.IsMap()) wrong_type(s, node, "a map of option: value", "{max_episode_steps: 200}");
  std::map<std::string, std::string> values;
  for (const auto& kv : node) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : flow_text(kv.first);
    RECUR_CHECK(kv.first.IsScalar() && kv.second.IsScalar(),
                "{}: {}.{} = {}: env options take single values (numbers, words, true/false), "
                "not lists, maps or nothing. Write e.g. `{}: 9.81`.",
                s.where, s.path, name, flow_text(kv.second), name);
    RECUR_CHECK(!values.contains(name), "{}: env option '{}' is given twice in {}. Keep one.",
                s.where, name, s.path);
    values[name] = kv.second.Scalar();
  }
  out = std::move(values);
}

// ---- Writing values as YAML text that reads back exactly. ----

// Plain when YAML reads it back as the same text; double-quoted otherwise.
std::string yaml_text(const std::string& v) {
  const bool plain =
      !v.empty() &&
      (std::isalnum(static_cast<unsigned char>(v[0])) || v[0] == '_' || v[0] == '.' ||
       v[0] == '/') &&
      v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+/-") ==
          std::string::npos &&
      v != "null" && v != "Null" && v != "NULL";
  if (plain) return v;
  std::string out = "\"";
  for (const char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}
std::string yaml_text(int v) {
  return fmt::format("{}", v);
}
std::string yaml_text(int64_t v) {
  return fmt::format("{}", v);
}
std::string yaml_text(uint64_t v) {
  return fmt::format("{}", v);
}
std::string yaml_text(bool v) {
  return v ? "true" : "false";
}
std::string yaml_text(float v) {
  // fmt's shortest representation reads back to the same float; ".0" keeps it looking like one.
  std::string out = fmt::format("{}", v);
  if (out.find_first_of(".eEn") == std::string::npos) out += ".0";
  return out;
}
std::string yaml_text(const std::optional<float>& v) {
  return v ? yaml_text(*v) : "null";
}
std::string yaml_text(const std::vector<int>& v) {
  std::vector<std::string> items;
  for (const int x : v) items.push_back(yaml_text(x));
  return fmt::format("[{}]", join(items));
}
std::string yaml_text(const std::vector<std::string>& v) {
  std::vector<std::string> items;
  for (const auto& x : v) items.push_back(yaml_text(x));
  return fmt::format("[{}]", join(items));
}
std::string yaml_text(const std::map<std::string, std::string>& v) {
  std::vector<std::string> items;
  for (const auto& [k, x] : v) items.push_back(yaml_text(k) + ": " + yaml_text(x));
  return fmt::format("{{{}}}", join(items));
}

}  // namespace recur::agent::config_values
