// Checked readers of JSON values for the resume files (resume_state.cc,
// ppo/trainer_state_parse.cc, offpolicy/trainer.cc, env_snapshot_json.cc). nlohmann's get<T>()
// casts a float to an integer type without a range check (undefined behaviour for 1e300, found by
// tools/fuzz/trainer_state_fuzzer), so numbers go through these: each throws recur::Error naming
// the value (`what`) and what was expected.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/rng.h"

namespace recur::agent::json_read {

using nlohmann::json;

// An integer in [lo, hi]: JSON integers only (the writers never write 3.0 for a count).
inline int64_t integer(const json& j, const char* what,
                       int64_t lo = std::numeric_limits<int64_t>::min(),
                       int64_t hi = std::numeric_limits<int64_t>::max()) {
  RECUR_CHECK(j.is_number_integer(), "{} is {}, not an integer", what, j.dump());
  RECUR_CHECK(!j.is_number_unsigned() || j.get<uint64_t>() <= static_cast<uint64_t>(hi),
              "{} = {} is out of range", what, j.dump());
  const int64_t v = j.get<int64_t>();
  RECUR_CHECK(v >= lo && v <= hi, "{} = {} is out of range [{}, {}]", what, v, lo, hi);
  return v;
}
inline uint64_t unsigned64(const json& j, const char* what) {
  RECUR_CHECK(j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0),
              "{} is {}, not an unsigned integer", what, j.dump());
  return j.get<uint64_t>();
}
inline double real(const json& j, const char* what) {
  RECUR_CHECK(j.is_number(), "{} is {}, not a number", what, j.dump());
  return j.get<double>();
}
inline bool boolean(const json& j, const char* what) {
  RECUR_CHECK(j.is_boolean(), "{} is {}, not true or false", what, j.dump());
  return j.get<bool>();
}
inline const json& array(const json& j, const char* what) {
  RECUR_CHECK(j.is_array(), "{} is {}, not a list", what, j.dump());
  return j;
}
inline const std::string& string(const json& j, const char* what) {
  RECUR_CHECK(j.is_string(), "{} is {}, not a string", what, j.dump());
  return j.get_ref<const std::string&>();
}

inline std::vector<double> reals(const json& j, const char* what) {
  std::vector<double> out;
  for (const json& x : array(j, what)) out.push_back(real(x, what));
  return out;
}
inline std::vector<float> floats(const json& j, const char* what) {
  std::vector<float> out;
  for (const json& x : array(j, what)) out.push_back(static_cast<float>(real(x, what)));
  return out;
}
inline std::vector<uint8_t> flags(const json& j, const char* what) {
  std::vector<uint8_t> out;
  for (const json& x : array(j, what)) out.push_back(static_cast<uint8_t>(integer(x, what, 0, 1)));
  return out;
}
// An Rng's four state words, as rng_json (agent/run/env_snapshot_json.h) writes them.
inline Rng::State rng_state(const json& j, const char* what) {
  RECUR_CHECK(array(j, what).size() == 4, "{} holds {} values, not 4", what, j.size());
  Rng::State s{};
  for (size_t i = 0; i < 4; ++i) s[i] = unsigned64(j[i], what);
  return s;
}

}  // namespace recur::agent::json_read
