// Dumps float32 values and kernels/low_float_math.h's half and bfloat16 encodings of them, for
// low_float_oracle.py to hold against NumPy's float16 and ml_dtypes' bfloat16 (independent
// implementations of round-to-nearest-even). Half the values are random bit patterns, half exact
// ties of each type (a kept part followed by exactly a half unit). Not part of CI (it needs
// ml_dtypes); the CI test checks the half reference against GCC's _Float16.
//
//   g++ -O2 -std=c++20 -I. tools/check/low_float_oracle.cc -o /tmp/low_float_oracle
//   /tmp/low_float_oracle 2000000 /tmp/lf && python3 tools/check/low_float_oracle.py /tmp/lf
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/rng.h"
#include "kernels/low_float_math.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s COUNT OUT_PREFIX\n", argv[0]);
    return 2;
  }
  const long count = std::atol(argv[1]);
  const std::string prefix = argv[2];
  FILE* x_file = std::fopen((prefix + ".f32").c_str(), "wb");
  FILE* h_file = std::fopen((prefix + ".f16").c_str(), "wb");
  FILE* b_file = std::fopen((prefix + ".bf16").c_str(), "wb");
  if (!x_file || !h_file || !b_file) {
    std::fprintf(stderr, "cannot write %s.*\n", prefix.c_str());
    return 1;
  }
  recur::Rng rng(2026);
  for (long i = 0; i < count; ++i) {
    auto u = static_cast<uint32_t>(rng.next_u64());
    switch (i % 4) {
      case 1:  // a bfloat16 tie: the low 16 bits exactly 0x8000
        u = (u & 0xffff0000u) | 0x8000u;
        break;
      case 2:  // a half tie in the normal range: 13 low mantissa bits exactly 0x1000
        u = (u & 0x8f800000u) | 0x38800000u | (u & 0x007fe000u) | 0x1000u;
        break;
      case 3:  // a value in the half's subnormal range, ties included (24-bit mantissas)
        u = std::bit_cast<uint32_t>(std::ldexp(static_cast<float>(u >> 8), -48 - (u & 3)));
        break;
      default:
        break;
    }
    const float x = std::bit_cast<float>(u);
    if (std::isnan(x)) continue;
    const uint16_t h = recur::kernels::float_to_half_bits(x);
    const uint16_t b = recur::kernels::float_to_bf16_bits(x);
    std::fwrite(&x, sizeof x, 1, x_file);
    std::fwrite(&h, sizeof h, 1, h_file);
    std::fwrite(&b, sizeof b, 1, b_file);
  }
  std::fclose(x_file);
  std::fclose(h_file);
  std::fclose(b_file);
  return 0;
}
