#include "core/options.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/error.h"
#include "core/text.h"

namespace recur {

Options layered(const Options& base, const Options& over) {
  Options out = base;
  if (over.empty()) return out;
  for (const auto& [k, v] : over.values) out.set(k, v);
  out.source += " and " + over.source;
  return out;
}

std::pair<std::string, std::string> parse_key_value(const std::string& text) {
  const auto eq = text.find('=');
  RECUR_CHECK(eq != std::string::npos && eq > 0,
              "'{}' is not key=value; write e.g. g=9.81 or max_episode_steps=100", text);
  return {text.substr(0, eq), text.substr(eq + 1)};
}

OptionReader::OptionReader(const Options& options, std::string owner)
    : options_(options), owner_(std::move(owner)) {}

const std::string* OptionReader::find(const std::string& key) {
  known_.push_back(key);
  const auto it = options_.values.find(key);
  return it == options_.values.end() ? nullptr : &it->second;
}

double OptionReader::get_double(const std::string& key, double fallback) {
  const std::string* text = find(key);
  if (!text) return fallback;
  double value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  RECUR_CHECK(ec == std::errc() && end == text->data() + text->size() && std::isfinite(value),
              "{}: option '{}' = '{}' (from {}) is not a finite number", owner_, key, *text,
              options_.source);
  return value;
}

long long OptionReader::get_int(const std::string& key, long long fallback) {
  const std::string* text = find(key);
  if (!text) return fallback;
  long long value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  RECUR_CHECK(ec == std::errc() && end == text->data() + text->size(),
              "{}: option '{}' = '{}' (from {}) is not an integer", owner_, key, *text,
              options_.source);
  return value;
}

bool OptionReader::get_bool(const std::string& key, bool fallback) {
  const std::string* text = find(key);
  if (!text) return fallback;
  if (*text == "true" || *text == "1") return true;
  if (*text == "false" || *text == "0") return false;
  throw Error(fmt::format("{}: option '{}' = '{}' (from {}) is not a boolean; use true or false",
                          owner_, key, *text, options_.source));
}

std::string OptionReader::get_string(const std::string& key, const std::string& fallback) {
  const std::string* text = find(key);
  if (!text) return fallback;
  if (text->empty())
    throw Error(fmt::format("{}: option '{}' (from {}) is empty; give a value or leave it out",
                            owner_, key, options_.source));
  return *text;
}

std::string OptionReader::get_choice(const std::string& key, const std::string& fallback,
                                     const std::vector<std::string>& allowed) {
  const std::string* text = find(key);
  if (!text) return fallback;
  if (std::find(allowed.begin(), allowed.end(), *text) != allowed.end()) return *text;
  throw Error(fmt::format("{}: option '{}' = '{}' (from {}) is not one of: {}", owner_, key, *text,
                          options_.source, join(allowed)));
}

void OptionReader::reject_unknown() const {
  for (const auto& [key, value] : options_.values) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const auto near = closest_matches(key, known_);
    std::string hint = near.empty() ? "" : fmt::format(" Did you mean '{}'?", near.front());
    throw Error(fmt::format("{}: unknown option '{}' (from {}).{} Options it takes: {}", owner_,
                            key, options_.source, hint,
                            known_.empty() ? std::string("none") : join(known_)));
  }
}

}  // namespace recur
