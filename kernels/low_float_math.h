// The CPU reference of kernels/low_float.h's conversions: fp32 to IEEE half and to bfloat16,
// rounding to nearest with ties to even, and back (exact). Plain host C++ on the bit patterns, so
// that CPU-only builds test it against known encodings and the GPU test holds the kernels (CUDA's
// __float2half_rn, __float2bfloat16_rn) to it bit for bit.
//
// NaN maps to a quiet NaN of the type (which payload is not part of the contract: the GPU test
// compares NaN-ness only). Half: finite values from 65520 (the midpoint between 65504, the largest
// half, and 2^16) up become infinities, values below 2^-14 become subnormals (steps of 2^-24),
// float subnormals become zero.
#pragma once

#include <bit>
#include <cstdint>

namespace recur::kernels {

// Shifts `value` right by `shift` (1..31), rounding to nearest, ties to even.
inline uint32_t shift_round_even(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
}

inline uint16_t float_to_half_bits(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 (and infinity): infinity
  if (a >= 0x38800000u) {                       // >= 2^-14: a normal half
    // Rebias the exponent (127 -> 15) and round the mantissa from 23 to 10 bits; a carry out
    // of the mantissa steps the exponent, as it should.
    return sign | static_cast<uint16_t>(shift_round_even(a - 0x38000000u, 13));
  }
  const int exponent = static_cast<int>(a >> 23);
  if (exponent < 102) return sign;  // below 2^-25 (float subnormals too): zero
  // A half subnormal counts steps of 2^-24: value = mantissa * 2^(exponent - 150), so the steps
  // are mantissa >> (126 - exponent), rounded (a round-up to 0x400 is the smallest normal).
  const uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
  return sign | static_cast<uint16_t>(shift_round_even(mantissa, 126 - exponent));
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float v = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline uint16_t float_to_bf16_bits(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN
  // The upper half, rounded on the lower (ties to an even upper half); a carry steps the
  // exponent, up to infinity. No overflow: the largest non-NaN pattern is 0xff800000.
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float bf16_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

}  // namespace recur::kernels
