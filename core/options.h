// Named scalar options given to a component (an env's `g`, `max_episode_steps`, ...), as they come
// from a YAML config or the command line: key -> text. A component reads them through an
// OptionReader, which parses and validates each value, remembers which keys exist for that
// component, and afterwards rejects unknown keys with a "did you mean".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace recur {

struct Options {
  std::map<std::string, std::string> values;
  // Where these options came from, for messages: "configs/cartpole.yaml:12", "--option", ...
  std::string source = "options";

  Options& set(const std::string& key, const std::string& value) {
    values[key] = value;
    return *this;
  }
  bool empty() const { return values.empty(); }
};

// `over` on top of `base` (a checkpoint's env options under `--option`): its values win, and the
// source names both, so that a bad key's message says where it may have come from.
Options layered(const Options& base, const Options& over);

// Parses "key=value" (as in `--option g=9.81`); throws recur::Error naming the text otherwise.
std::pair<std::string, std::string> parse_key_value(const std::string& text);

class OptionReader {
 public:
  // `owner` names the component in messages, e.g. "env Pendulum-v1".
  OptionReader(const Options& options, std::string owner);

  // Each getter returns the option's value, or `fallback` when it is absent; a value that does not
  // parse as the type throws recur::Error naming the key, value, owner and expected type.
  double get_double(const std::string& key, double fallback);
  long long get_int(const std::string& key, long long fallback);
  bool get_bool(const std::string& key, bool fallback);
  // Text as given (a path, a name); empty text is an error naming the key.
  std::string get_string(const std::string& key, const std::string& fallback);
  // One of `allowed` (e.g. {"colors", "suits", "ranks"}); anything else throws naming them all.
  std::string get_choice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& allowed);

  // Throws recur::Error if an option was given that no getter asked for.
  void reject_unknown() const;

  const std::vector<std::string>& known_keys() const { return known_; }

 private:
  const std::string* find(const std::string& key);
  const Options& options_;
  std::string owner_;
  std::vector<std::string> known_;
};

}  // namespace recur
