// The parts of video writing that need no FFmpeg: file names and the RGB -> YUV 4:2:0 conversion
// (video_writer.h documents both).
#include <fmt/format.h>

#include "agent/record/video_writer.h"

namespace recur::agent::record {

void rgb_to_yuv420p(const uint8_t* rgb, int width, int height, uint8_t* y, int y_stride, uint8_t* u,
                    int u_stride, uint8_t* v, int v_stride) {
  rgb_to_yuv420p(rgb, width, height, y, y_stride, u, u_stride, v, v_stride, width * 3);
}

void rgb_to_yuv420p(const uint8_t* __restrict rgb, int width, int height, uint8_t* __restrict y,
                    int y_stride, uint8_t* __restrict u, int u_stride, uint8_t* __restrict v,
                    int v_stride, int rgb_stride) {
  // 8-bit fixed point BT.601 (ITU-R BT.601 / JFIF-style integer matrix, limited range):
  // Y = 16 + (66 R + 129 G + 25 B) / 256, U = 128 + (-38 R - 74 G + 112 B) / 256,
  // V = 128 + (112 R - 94 G - 18 B) / 256. Luma is one pass per row that the compiler
  // vectorises; chroma takes the sum of each 2x2 block (hence / 1024).
  const auto w = static_cast<size_t>(width);
  const auto stride = static_cast<size_t>(rgb_stride);
  for (int row = 0; row < height; ++row) {
    const uint8_t* __restrict p = rgb + static_cast<size_t>(row) * stride;
    uint8_t* __restrict out = y + static_cast<size_t>(row) * static_cast<size_t>(y_stride);
    for (size_t x = 0; x < w; ++x)
      out[x] = static_cast<uint8_t>(
          ((66 * p[3 * x] + 129 * p[3 * x + 1] + 25 * p[3 * x + 2] + 128) >> 8) + 16);
  }
  for (int row = 0; row < height; row += 2) {
    const uint8_t* __restrict a = rgb + static_cast<size_t>(row) * stride;
    const uint8_t* __restrict b = a + stride;
    uint8_t* __restrict uo = u + static_cast<size_t>(row / 2) * static_cast<size_t>(u_stride);
    uint8_t* __restrict vo = v + static_cast<size_t>(row / 2) * static_cast<size_t>(v_stride);
    for (size_t x = 0; x < w / 2; ++x) {
      const int r = a[6 * x] + a[6 * x + 3] + b[6 * x] + b[6 * x + 3];
      const int g = a[6 * x + 1] + a[6 * x + 4] + b[6 * x + 1] + b[6 * x + 4];
      const int bl = a[6 * x + 2] + a[6 * x + 5] + b[6 * x + 2] + b[6 * x + 5];
      uo[x] = static_cast<uint8_t>(((-38 * r - 74 * g + 112 * bl + 512) >> 10) + 128);
      vo[x] = static_cast<uint8_t>(((112 * r - 94 * g - 18 * bl + 512) >> 10) + 128);
    }
  }
}

std::string video_file_name(const std::string& name_prefix, int episode) {
  return fmt::format("{}-episode-{}.mp4", name_prefix, episode);
}

}  // namespace recur::agent::record
