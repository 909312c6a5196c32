// write_png (renderer.h): a Frame to an 8-bit RGB PNG through Cairo's PNG writer.
#include <cairo.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "envs/render/renderer.h"

namespace recur::envs::render {
namespace {

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

cairo_status_t write_to_file(void* closure, const unsigned char* data, unsigned int length) {
  return std::fwrite(data, 1, length, static_cast<std::FILE*>(closure)) == length
             ? CAIRO_STATUS_SUCCESS
             : CAIRO_STATUS_WRITE_ERROR;
}

}  // namespace

void write_png(const Frame& frame, const std::string& path) {
  RECUR_CHECK_ARG(frame.width > 0 && frame.height > 0 &&
                      frame.pixels.size() == static_cast<size_t>(frame.width) * frame.height * 3,
                  "write_png({}): the frame is {}x{} with {} bytes, not (H, W, 3)", path,
                  frame.width, frame.height, frame.pixels.size());
  std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, frame.width, frame.height));
  RECUR_CHECK(cairo_surface_status(surface.get()) == CAIRO_STATUS_SUCCESS,
              "write_png({}): cannot create a {}x{} image: {}", path, frame.width, frame.height,
              cairo_status_to_string(cairo_surface_status(surface.get())));
  // RGB bytes -> native-endian 0x00RRGGBB words.
  cairo_surface_flush(surface.get());
  unsigned char* data = cairo_image_surface_get_data(surface.get());
  const int stride = cairo_image_surface_get_stride(surface.get());
  for (int y = 0; y < frame.height; ++y) {
    for (int x = 0; x < frame.width; ++x) {
      const uint8_t* p = frame.at(x, y);
      const uint32_t v = (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
      std::memcpy(data + static_cast<size_t>(y) * stride + 4 * x, &v, 4);
    }
  }
  cairo_surface_mark_dirty(surface.get());

  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
  RECUR_CHECK(file != nullptr, "write_png: cannot open {} for writing: {}", path,
              std::strerror(errno));
  const cairo_status_t status =
      cairo_surface_write_to_png_stream(surface.get(), write_to_file, file.get());
  const int write_errno = errno;
  RECUR_CHECK(status == CAIRO_STATUS_SUCCESS, "write_png: writing {} failed: {} ({})", path,
              cairo_status_to_string(status), std::strerror(write_errno));
  RECUR_CHECK(std::fclose(file.release()) == 0, "write_png: closing {} failed: {}", path,
              std::strerror(errno));
}

}  // namespace recur::envs::render
