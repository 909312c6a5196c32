// MP4 videos: written with VideoWriter, read back with probe_video (libavformat/libavcodec
// decode every frame); refusals name the path and the reason. The throughput case prints the
// encode rate at 600x400 (CartPole's size) and never asserts time.
#include "agent/record/video_writer.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "tests/support/temp_dir.h"

extern "C" {
#include <libavutil/pixfmt.h>
#include <libswscale/swscale.h>
}

namespace fs = std::filesystem;
using namespace recur;
using namespace recur::agent::record;

using recur::test::error_of;
using recur::test::TempDir;

namespace {

// A white frame with a dark box that moves with t (like a cart on a track).
envs::render::Frame test_frame(int width, int height, int t) {
  envs::render::Frame f;
  f.width = width;
  f.height = height;
  f.pixels.assign(static_cast<size_t>(width) * height * 3, 255);
  const int x0 = (t * 7) % (width - width / 8), y0 = height / 2 - height / 10;
  for (int y = y0; y < y0 + height / 5; ++y)
    for (int x = x0; x < x0 + width / 8; ++x) {
      uint8_t* p = f.pixels.data() + (static_cast<size_t>(y) * width + x) * 3;
      p[0] = 202;
      p[1] = 152;
      p[2] = static_cast<uint8_t>(101 + t % 50);
    }
  return f;
}

}  // namespace

TEST_CASE("video: 25 frames at 50 fps round trip") {
  TempDir tmp("video_test");
  const std::string path = (tmp.path / video_file_name("rl-video", 0)).string();
  CHECK(fs::path(path).filename() == "rl-video-episode-0.mp4");
  std::string codec;
  {
    VideoWriter v(path, 64, 48, 50);
    codec = v.codec();
    CHECK((codec == "libx264" || codec == "mpeg4"));
    for (int t = 0; t < 25; ++t) v.write(test_frame(64, 48, t));
    CHECK(v.frames() == 25);
    v.close();
    v.close();  // idempotent
    CHECK_THROWS_AS(v.write(test_frame(64, 48, 0)), std::invalid_argument);
  }
  const VideoProbe p = probe_video(path);
  CHECK(p.codec == (codec == "libx264" ? "h264" : "mpeg4"));
  CHECK(p.width == 64);
  CHECK(p.height == 48);
  CHECK(p.frames == 25);
  CHECK(p.fps == doctest::Approx(50.0));
  CHECK(p.pix_fmt == "yuv420p");
  MESSAGE("encoder " << codec << ", " << fs::file_size(path) << " bytes");
}

TEST_CASE("video: written under a temp name and renamed on close, unclosed, nothing is left") {
  TempDir tmp("video_test");
  const std::string path = (tmp.path / "rl-video-episode-8.mp4").string();
  auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(tmp.path)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  };
  // A temp of a writer that was killed (its process is gone) goes when the next one starts.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const std::string stale = fmt::format(".rl-video-episode-1.mp4.tmp.{}.0", child);
  recur::test::write_all(tmp.path / stale, std::string(48, 'x'));
  {
    VideoWriter v(path, 32, 32, 15);
    for (int t = 0; t < 4; ++t) v.write(test_frame(32, 32, t));
    const auto during = entries();
    REQUIRE(during.size() == 1);  // the stale temp is gone, the final name not there yet
    CHECK(during[0].rfind(".rl-video-episode-8.mp4.tmp." + std::to_string(::getpid()) + ".", 0) ==
          0);
  }
  CHECK(entries().empty());  // destroyed without close(): discarded
  {
    VideoWriter v(path, 32, 32, 15);
    for (int t = 0; t < 4; ++t) v.write(test_frame(32, 32, t));
    v.close();
  }
  CHECK(entries() == std::vector<std::string>{"rl-video-episode-8.mp4"});
  const VideoProbe p = probe_video(path);
  CHECK(p.frames == 4);
  CHECK(p.fps == doctest::Approx(15.0));
}

TEST_CASE("video: wrong frame sizes, odd sizes cropped, unwritable directories, bad files") {
  TempDir tmp("video_test");
  const std::string path = (tmp.path / "v.mp4").string();
  {
    VideoWriter v(path, 64, 48, 30);
    CHECK_THROWS_AS(v.write(test_frame(48, 64, 0)), std::invalid_argument);
    envs::render::Frame short_frame = test_frame(64, 48, 0);
    short_frame.pixels.pop_back();
    CHECK_THROWS_AS(v.write(short_frame), std::invalid_argument);
    v.write(test_frame(64, 48, 0));
  }
  {
    // Odd sizes: the frames are the given size, the video leaves out their last column and row.
    VideoWriter v(path, 63, 47, 30);
    CHECK(v.video_width() == 62);
    CHECK(v.video_height() == 46);
    CHECK_THROWS_AS(v.write(test_frame(62, 46, 0)), std::invalid_argument);
    for (int t = 0; t < 3; ++t) v.write(test_frame(63, 47, t));
    v.close();
    const VideoProbe p = probe_video(path);
    CHECK(p.width == 62);
    CHECK(p.height == 46);
    CHECK(p.frames == 3);
  }
  std::string e = error_of([&] { VideoWriter(path, 1, 48, 30); });
  CHECK(e.find(path) != std::string::npos);
  CHECK(e.find("at least 2x2") != std::string::npos);
  e = error_of([&] { VideoWriter(path, 64, 48, 0); });
  CHECK(e.find(path) != std::string::npos);

  const fs::path no_dir = tmp.path / "missing_dir" / "v.mp4";
  e = error_of([&] { VideoWriter(no_dir.string(), 64, 48, 30); });
  CHECK(e.find(no_dir.string()) != std::string::npos);
  CHECK(e.find("No such file or directory") != std::string::npos);
  CHECK_FALSE(fs::exists(no_dir));
  MESSAGE(e);

  const fs::path not_video = tmp.path / "not_a_video.mp4";
  std::ofstream(not_video) << "hello";
  e = error_of([&] { probe_video(not_video.string()); });
  CHECK(e.find(not_video.string()) != std::string::npos);
  CHECK_THROWS_AS(probe_video((tmp.path / "absent.mp4").string()), recur::Error);
}

TEST_CASE("video: RGB -> YUV 4:2:0 agrees with swscale") {
  // Planes of an image converted by rgb_to_yuv420p and by swscale (accurate rounding): Y, U, V.
  const int w = 64, h = 48;
  auto convert = [&](const envs::render::Frame& f, bool use_sws) {
    std::vector<uint8_t> out(static_cast<size_t>(w * h * 3 / 2));
    uint8_t* planes[3] = {out.data(), out.data() + w * h, out.data() + w * h * 5 / 4};
    const int strides[3] = {w, w / 2, w / 2};
    if (!use_sws) {
      rgb_to_yuv420p(f.pixels.data(), w, h, planes[0], strides[0], planes[1], strides[1], planes[2],
                     strides[2]);
      return out;
    }
    SwsContext* sws = sws_getContext(w, h, AV_PIX_FMT_RGB24, w, h, AV_PIX_FMT_YUV420P,
                                     SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr, nullptr);
    REQUIRE(sws);
    const uint8_t* src[1] = {f.pixels.data()};
    const int src_stride[1] = {3 * w};
    sws_scale(sws, src, src_stride, 0, h, planes, strides);
    sws_freeContext(sws);
    return out;
  };
  auto worst = [&](const envs::render::Frame& f, size_t begin, size_t end) {
    const auto a = convert(f, false), b = convert(f, true);
    int d = 0;
    for (size_t i = begin; i < end; ++i) d = std::max(d, std::abs(a[i] - b[i]));
    return d;
  };
  const size_t luma = static_cast<size_t>(w * h), all = luma * 3 / 2;
  // Luma of random pixels: the same matrix, rounding apart.
  envs::render::Frame noise = test_frame(w, h, 0);
  uint32_t seed = 12345;
  for (auto& p : noise.pixels)
    p = static_cast<uint8_t>((seed = seed * 1664525u + 1013904223u) >> 24);
  const int worst_luma = worst(noise, 0, luma);
  // Chroma of a smooth image (swscale filters and sites chroma differently from a 2x2 mean, which
  // only matters where colour changes within a few pixels).
  envs::render::Frame smooth = noise;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = smooth.pixels.data() + (static_cast<size_t>(y) * w + x) * 3;
      p[0] = static_cast<uint8_t>(2 * x + 40);
      p[1] = static_cast<uint8_t>(3 * y + 20);
      p[2] = static_cast<uint8_t>(200 - x - y);
    }
  const int worst_chroma = worst(smooth, luma, all);
  MESSAGE("largest difference to swscale: luma " << worst_luma << ", chroma " << worst_chroma);
  CHECK(worst_luma <= 1);
  CHECK(worst_chroma <= 2);
  // White is (235, 128, 128) and black (16, 128, 128): limited range.
  uint8_t y4[4], u1, v1;
  const uint8_t white[12] = {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};
  const uint8_t black[12] = {};
  rgb_to_yuv420p(white, 2, 2, y4, 2, &u1, 1, &v1, 1);
  CHECK((y4[0] == 235 && u1 == 128 && v1 == 128));
  rgb_to_yuv420p(black, 2, 2, y4, 2, &u1, 1, &v1, 1);
  CHECK((y4[3] == 16 && u1 == 128 && v1 == 128));
}

TEST_CASE("video: encode throughput at 600x400 (printed, not asserted)") {
  // Frames are made before timing: the figure is RGB -> YUV conversion plus encoding plus
  // muxing. RECUR_VIDEO_BENCH_FRAMES overrides the count (default 200: quick in the suite).
  const char* env = std::getenv("RECUR_VIDEO_BENCH_FRAMES");
  const int n = env ? std::max(1, std::atoi(env)) : 200;
  TempDir tmp("video_test");
  std::vector<envs::render::Frame> frames;
  for (int t = 0; t < 50; ++t) frames.push_back(test_frame(600, 400, t));
  const std::string path = (tmp.path / "bench.mp4").string();
  // Thread CPU time as well as wall time: with one encoder thread all the work is on this thread,
  // and CPU time stays meaningful on a machine busy with other jobs.
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  const double cpu0 = cpu_now();
  const auto t0 = std::chrono::steady_clock::now();
  std::string codec;
  {
    VideoWriter v(path, 600, 400, 50);
    codec = v.codec();
    for (int t = 0; t < n; ++t) v.write(frames[static_cast<size_t>(t) % frames.size()]);
    v.close();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_now() - cpu0;
  MESSAGE(codec << " 600x400, one encoder thread: " << n << " frames, " << s << " s wall = "
                << n / s << " frames/s; " << cpu << " s CPU = " << n / cpu << " frames/s");
  CHECK(probe_video(path).frames == n);
}
