// libFuzzer harness for the C++ side of Minari metadata.json. recur writes metadata.json but
// never reads one back (Python's minari and tools/check_minari.py do), so this fuzzes the code
// that turns user- and env-given values into it: check_dataset_id (Minari's id grammar, by
// regex), python_json_string (a UTF-8 decoder and JSON escaper for ids, authors, descriptions
// and the space strings), python_float_repr (Python's repr of a float), space_to_minari_json
// and minari_env_spec_json. The input is cut at '\0' bytes into: dataset id, env id, entry
// point, free text, and a binary tail of doubles (threshold, then box bounds). Besides "no crash,
// only recur::Error", it checks what Python will read: every string is valid JSON giving back
// the text (when that is valid UTF-8), every finite float reads back exactly.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "agent/record/minari_writer.h"
#include "agent/record/space_json.h"
#include "core/error.h"
#include "tools/fuzz/fuzz_util.h"

namespace {
using nlohmann::json;
namespace rec = recur::agent::record;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_json_string(const std::string& text) {
  const std::string quoted = rec::python_json_string(text);
  check(json::accept(quoted));
  std::string valid_utf8;
  try {
    valid_utf8 = json(text).dump();  // throws on invalid UTF-8
  } catch (const json::type_error&) {
    return;
  }
  check(json::parse(quoted).get<std::string>() == text);
}

void check_float(double x) {
  const std::string repr = rec::python_float_repr(x);
  if (std::isnan(x)) return check(repr == "NaN");
  if (std::isinf(x)) return check(repr == (x > 0 ? "Infinity" : "-Infinity"));
  check(std::strtod(repr.c_str(), nullptr) == x && json::accept(repr));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts = recur::fuzz::split(recur::fuzz::as_text(data, size), '\0');
  parts.resize(std::max<size_t>(parts.size(), 5));
  const std::string& id = parts[0];
  // The binary tail: everything after the fourth separator.
  std::string tail;
  for (size_t i = 4; i < parts.size(); ++i) tail += (i > 4 ? std::string(1, '\0') : "") + parts[i];
  std::vector<double> numbers(tail.size() / sizeof(double));
  if (!numbers.empty()) std::memcpy(numbers.data(), tail.data(), numbers.size() * sizeof(double));

  try {
    rec::check_dataset_id(id);
  } catch (const recur::Error&) {
    // Not a Minari id: rejected with a message.
  }
  for (size_t i = 0; i < 4; ++i) check_json_string(parts[i]);
  for (double x : numbers) check_float(x);

  rec::DatasetInfo info;
  info.dataset_id = id;
  info.env_id = parts[1];
  info.env_entry_point = parts[2].empty() ? rec::gymnasium_entry_point(parts[1]) : parts[2];
  if (!numbers.empty() && !std::isnan(numbers[0])) info.reward_threshold = numbers[0];
  info.max_episode_steps = static_cast<int>(tail.size());
  const std::string spec = rec::minari_env_spec_json(info);
  if (!spec.empty() && (!info.reward_threshold || std::isfinite(*info.reward_threshold)))
    check(json::accept(spec));
  check_json_string(spec);

  // A Box space from the remaining doubles: shape (k) with k pairs of bounds, or Discrete.
  const size_t k = numbers.size() > 1 ? (numbers.size() - 1) / 2 : 0;
  std::vector<float> low, high;
  bool finite = true;
  for (size_t i = 0; i < k; ++i) {
    low.push_back(static_cast<float>(numbers[1 + i]));
    high.push_back(static_cast<float>(numbers[1 + k + i]));
    finite = finite && std::isfinite(low.back()) && std::isfinite(high.back());
  }
  std::optional<recur::envs::Space> space;
  try {
    space = k > 0 ? recur::envs::Space::box(low, high, {static_cast<int>(k)})
                  : recur::envs::Space::discrete(static_cast<int64_t>(parts[3].size()));
  } catch (const std::invalid_argument&) {
    return 0;  // bounds that make no space (low > high, NaN, n = 0): the env's bug, not ours
  }
  const std::string space_json = rec::space_to_minari_json(*space);
  if (finite) check(json::accept(space_json));
  check_json_string(space_json);
  return 0;
}
