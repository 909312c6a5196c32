// The 16-bit casts of device.cudnn_data (kernels/low_float.h): the CPU reference
// (kernels/low_float_math.h) against known encodings of IEEE half and bfloat16, ties to even,
// overflow, subnormals, and exact round trips; on a GPU, the four kernels against the reference
// bit for bit over random values of every magnitude (NaNs by NaN-ness), the scale, and the layout
// gather and scatter-add with gaps.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "kernels/low_float_math.h"

#ifdef RECUR_WITH_CUDA
#include "kernels/low_float.h"
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"
#endif

using namespace recur::kernels;

TEST_CASE("half reference: known encodings, ties to even, overflow and subnormals") {
  CHECK(float_to_half_bits(0.0f) == 0x0000);
  CHECK(float_to_half_bits(-0.0f) == 0x8000);
  CHECK(float_to_half_bits(1.0f) == 0x3c00);
  CHECK(float_to_half_bits(-2.0f) == 0xc000);
  CHECK(float_to_half_bits(0.5f) == 0x3800);
  CHECK(float_to_half_bits(65504.0f) == 0x7bff);  // largest half
  CHECK(float_to_half_bits(65519.0f) == 0x7bff);  // below the midpoint
  CHECK(float_to_half_bits(65520.0f) == 0x7c00);  // the midpoint: to even (inf)
  CHECK(float_to_half_bits(1e10f) == 0x7c00);
  CHECK(float_to_half_bits(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK((float_to_half_bits(std::numeric_limits<float>::quiet_NaN()) & 0x7c00) == 0x7c00);
  CHECK((float_to_half_bits(std::numeric_limits<float>::quiet_NaN()) & 0x03ff) != 0);
  // 1 + 2^-11 is the tie between 1 and 1 + 2^-10: to even (1); 1 + 3 * 2^-11 to 1 + 2^-9.
  CHECK(float_to_half_bits(1.0f + 0x1p-11f) == 0x3c00);
  CHECK(float_to_half_bits(1.0f + 3 * 0x1p-11f) == 0x3c02);
  CHECK(float_to_half_bits(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);  // past the tie: up
  CHECK(float_to_half_bits(0x1p-14f) == 0x0400);                    // smallest normal
  CHECK(float_to_half_bits(0x1p-24f) == 0x0001);                    // smallest subnormal
  CHECK(float_to_half_bits(0x1p-25f) == 0x0000);                    // its half: tie to even 0
  CHECK(float_to_half_bits(0x1p-25f * 1.5f) == 0x0001);             // past it: up
  CHECK(float_to_half_bits(3 * 0x1p-25f) == 0x0002);                // 1.5 steps: tie to 2
  CHECK(float_to_half_bits(0x1p-14f - 0x1p-26f) == 0x0400);         // rounds up to normal
  CHECK(float_to_half_bits(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(half_bits_to_float(0x3c00) == 1.0f);
  CHECK(half_bits_to_float(0x7bff) == 65504.0f);
  CHECK(half_bits_to_float(0x0001) == 0x1p-24f);
  CHECK(half_bits_to_float(0x83ff) == -1023 * 0x1p-24f);
  CHECK(std::isinf(half_bits_to_float(0xfc00)));
  CHECK(std::isnan(half_bits_to_float(0x7e00)));
  // Every finite half survives the round trip through float.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;
    const auto bits = static_cast<uint16_t>(h);
    REQUIRE(float_to_half_bits(half_bits_to_float(bits)) == bits);
  }
}

#ifdef __FLT16_MAX__
// An independent oracle where the compiler has one: GCC's _Float16 conversion (F16C or its
// soft-float routine, both round to nearest even) on random bit patterns and on values of the
// half range's magnitudes, ties included (24-bit mantissas shifted into the rounding position).
TEST_CASE("half reference equals the compiler's _Float16 conversion") {
  recur::Rng rng(11);
  size_t mismatches = 0, checked = 0;
  for (int i = 0; i < 400000; ++i) {
    float x = 0;
    if (i % 2 == 0) {
      x = std::bit_cast<float>(static_cast<uint32_t>(rng.next_u64()));
      if (std::isnan(x)) continue;
    } else {
      const auto mantissa = static_cast<float>(rng.next_u64() % (1u << 24));
      x = std::ldexp(mantissa, static_cast<int>(rng.next_u64() % 60) - 70);
    }
    const auto h = static_cast<_Float16>(x);
    ++checked;
    mismatches += std::bit_cast<uint16_t>(h) == float_to_half_bits(x) ? 0 : 1;
  }
  CHECK(checked > 300000);
  CHECK(mismatches == 0);
}
#endif

TEST_CASE("bfloat16 reference: known encodings, ties to even and overflow") {
  CHECK(float_to_bf16_bits(1.0f) == 0x3f80);
  CHECK(float_to_bf16_bits(-1.0f) == 0xbf80);
  CHECK(float_to_bf16_bits(0.0f) == 0x0000);
  // 1 + 2^-8 is the tie between 1 and 1 + 2^-7: to even (1); 1 + 3 * 2^-8 to 1 + 2^-6.
  CHECK(float_to_bf16_bits(1.0f + 0x1p-8f) == 0x3f80);
  CHECK(float_to_bf16_bits(1.0f + 3 * 0x1p-8f) == 0x3f82);
  CHECK(float_to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);
  CHECK(float_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7f80);  // rounds to inf
  CHECK(float_to_bf16_bits(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(
      std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(bf16_bits_to_float(0x3f80) == 1.0f);
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7f80) == 0x7f80) continue;
    const auto bits = static_cast<uint16_t>(b);
    REQUIRE(float_to_bf16_bits(bf16_bits_to_float(bits)) == bits);
  }
}

#ifdef RECUR_WITH_CUDA

namespace {

// Values of every magnitude from 2^-30 to 2^20, both signs, plus the special ones.
std::vector<float> sweep(size_t n, uint64_t seed) {
  recur::Rng rng(seed);
  std::vector<float> v;
  for (size_t i = 0; i < n; ++i) {
    const double magnitude = std::exp2(rng.uniform(-30.0, 20.0));
    v.push_back(static_cast<float>(rng.uniform() < 0.5 ? -magnitude : magnitude));
  }
  for (const float special :
       {0.0f, -0.0f, 65504.0f, 65520.0f, 1.0f + 0x1p-11f, 0x1p-25f,
        std::numeric_limits<float>::infinity(), std::numeric_limits<float>::max(),
        std::numeric_limits<float>::quiet_NaN()})
    v.push_back(special);
  return v;
}

uint16_t reference(float x, LowFloat type) {
  return type == LowFloat::kHalf ? float_to_half_bits(x) : float_to_bf16_bits(x);
}
float reference_back(uint16_t b, LowFloat type) {
  return type == LowFloat::kHalf ? half_bits_to_float(b) : bf16_bits_to_float(b);
}

}  // namespace

TEST_CASE("16-bit cast kernels equal the CPU reference") {
  if (!recur::test::gpu_or_skip("16-bit cast kernels")) return;
  const std::vector<float> x = sweep(200000, 5);
  for (const LowFloat type : {LowFloat::kHalf, LowFloat::kBfloat16}) {
    CAPTURE(type == LowFloat::kHalf ? "half" : "bfloat16");
    const float scale = type == LowFloat::kHalf ? 1024.0f : 1.0f;
    auto d_x = recur::test::to_device(x);
    recur::kernels::DeviceBuffer<uint16_t> d_low(x.size());
    launch_to_low_float(d_x.data(), d_low.data(), x.size(), scale, type, nullptr);
    const std::vector<uint16_t> low = recur::test::to_host(d_low);
    size_t mismatches = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t want = reference(scale * x[i], type);
      if (std::isnan(x[i])) {
        mismatches += std::isnan(reference_back(low[i], type)) ? 0 : 1;
      } else {
        mismatches += low[i] == want ? 0 : 1;
      }
    }
    CHECK(mismatches == 0);

    // Back, unscaled: exact.
    recur::kernels::DeviceBuffer<float> d_back(x.size());
    launch_from_low_float(d_low.data(), d_back.data(), x.size(), 1.0f / scale, type, nullptr);
    const std::vector<float> back = recur::test::to_host(d_back);
    mismatches = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = reference_back(low[i], type) / scale;
      if (std::isnan(want)) {
        mismatches += std::isnan(back[i]) ? 0 : 1;
      } else {
        mismatches += std::bit_cast<uint32_t>(back[i]) == std::bit_cast<uint32_t>(want) ? 0 : 1;
      }
    }
    CHECK(mismatches == 0);

    // A layout: the 16-bit buffer has gaps (-1) and takes the master elements out of order; the
    // scatter-add is its transpose onto existing values.
    const std::vector<float> master = {1.5f, -2.25f, 3.0f, 0.125f, -7.0f};
    const std::vector<int64_t> index = {4, -1, 0, 2, -1, 1, 3};
    auto d_master = recur::test::to_device(master);
    auto d_index = recur::test::to_device(index);
    recur::kernels::DeviceBuffer<uint16_t> d_w(index.size());
    launch_gather_to_low_float(d_master.data(), d_w.data(), d_index.data(), index.size(), type,
                               nullptr);
    const std::vector<uint16_t> w = recur::test::to_host(d_w);
    for (size_t i = 0; i < index.size(); ++i)
      CHECK(w[i] == (index[i] >= 0 ? reference(master[static_cast<size_t>(index[i])], type) : 0));
    std::vector<float> acc = {10.0f, 20.0f, 30.0f, 40.0f, 50.0f};
    auto d_acc = recur::test::to_device(acc);
    launch_scatter_add_from_low_float(d_w.data(), d_acc.data(), d_index.data(), index.size(), 0.5f,
                                      type, nullptr);
    const std::vector<float> sum = recur::test::to_host(d_acc);
    for (size_t i = 0; i < index.size(); ++i)
      if (index[i] >= 0) {
        const auto j = static_cast<size_t>(index[i]);
        CHECK(sum[j] == acc[j] + 0.5f * reference_back(w[i], type));
      }
  }
}

#endif
