// What the safetensors writer (checkpoint.cc) and reader (checkpoint_parse.cc) share. Internal
// to recur_policy: it includes nlohmann/json, which the library links privately.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace recur::policy::safetensors {

// The data area is copied to and from float vectors byte for byte.
static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian data; recur copies float32 bytes unchanged");

using Json = nlohmann::json;

constexpr uint64_t kLengthBytes = 8;               // the little-endian u64 header length
constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's limit
constexpr std::string_view kMetadataKey = "__metadata__";

// The bytes of `numel(shape)` float32 values, or nothing when a dimension is negative or the
// product overflows 64 bits (the reference implementation rejects such shapes even when one
// dimension is 0).
inline std::optional<uint64_t> f32_bytes(const std::vector<int64_t>& shape) {
  uint64_t bytes = sizeof(float);
  for (const int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      return std::nullopt;
  return bytes;
}

// Names come from untrusted files and may be long or hold control characters: show them
// JSON-escaped and cut short, so that an error message stays one readable line.
inline std::string json_quoted(std::string_view s) {
  constexpr size_t kMaxShown = 80;
  const std::string shown = Json(std::string(s.substr(0, kMaxShown)))
                                .dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > kMaxShown ? shown + "..." : shown;
}

}  // namespace recur::policy::safetensors
