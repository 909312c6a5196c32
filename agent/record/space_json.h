// JSON text exactly as Python writes it for Minari's metadata.json: json.dumps with its default
// separators (", " and ": "), floats as repr() prints them (shortest round-trip digits; float32
// bounds widened to double first, as numpy's tolist() does) and the non-standard Infinity,
// -Infinity and NaN that Python's json emits and reads. General-purpose JSON writers print null
// for infinities, which is why these strings are built by hand.
//
//   space_to_minari_json(Space::discrete(2))
//     == R"({"type": "Discrete", "dtype": "int64", "start": 0, "n": 2})"
//   CartPole-v1's observation space:
//     {"type": "Box", "dtype": "float32", "shape": [4], "low": [-4.800000190734863, -Infinity,
//      -0.41887903213500977, -Infinity], "high": [4.800000190734863, Infinity, ...]}
//   (minari/serialization.py; one line in the real string.)
#pragma once

#include <string>

#include "envs/space.h"

namespace recur::agent::record {

// Python's repr(float) / json.dumps(float): "1.0", "0.1", "1e-05", "1e+16", "-Infinity", "NaN".
std::string python_float_repr(double value);

// A JSON string literal, quotes included, escaped as Python's json.dumps (ensure_ascii=True)
// escapes it: non-ASCII as \uXXXX (surrogate pairs beyond the BMP). Invalid UTF-8 bytes become
// U+FFFD.
std::string python_json_string(const std::string& text);

// minari.serialization.serialize_space for recur's spaces (Discrete and float32 Box).
std::string space_to_minari_json(const envs::Space& space);

}  // namespace recur::agent::record
