// MP4 videos of episodes, as Gymnasium's RecordVideo writes them: one frame per observation
// (N+1 frames for an N-step episode, frame t showing observations[t]), H.264 yuv420p at the env's
// render_fps, named "<prefix>-episode-<i>.mp4".
//
//   VideoWriter video(video_file_name("rl-video", 0), 600, 400, 50);
//   for (...) video.write(renderer.frame());
//   video.close();                            // flushes the encoder and writes the MP4 trailer
//
// Encoder: libx264 (preset ultrafast, crf 23, one thread), or FFmpeg's native mpeg4 encoder where
// libavcodec has no libx264. ultrafast, measured on the 2-core machine recording CartPole on one
// core (docs/PERFORMANCE.md): 1449 frames/s rendered + encoded against 806 for veryfast, files
// ~3x larger (~120 KB for a 10 s episode): RL scenes are flat colours, and speed is the point.
// Frame t has pts t in time base 1/fps; movflags +faststart puts the
// index first for web playback. The frame and the packet are made once: write() allocates
// nothing of its own. RGB -> YUV 4:2:0 is recur's own conversion (rgb_to_yuv420p below), about
// twice as fast as swscale's unscaled RGB24 path. FFmpeg's informational logging is lowered to
// warnings once (av_log_set_level), since x264 otherwise prints its settings and statistics.
//
// Crash safety: the file is written under a hidden temp name in the same directory,
// ".<name>.tmp.<pid>.<n>" (core/atomic_file.h), fsynced and renamed to its name by close(). A
// process killed mid-episode leaves no half video under a final name, only the temp, which the
// next VideoWriter in that directory removes once its process is gone; a writer that fails, or is
// destroyed without close(), removes its temp at once.
#pragma once

#include <cstdint>
#include <string>

#include "envs/render/frame.h"

struct AVFormatContext;
struct AVCodecContext;
struct AVStream;
struct AVFrame;
struct AVPacket;

namespace recur::agent::record {

class VideoWriter {
 public:
  // Opens a temp file beside `path` for writing (and removes the stale temps of dead writers in
  // that directory). width x height is the frames' size, each at least 2, fps > 0. 4:2:0 chroma
  // needs an even size, so an odd width or height is cropped by one: the video leaves out the
  // frames' last column or row (recur's one rule for odd frames, whatever films them). Throws
  // recur::Error naming the path and the reason (bad size, no encoder, unwritable directory).
  VideoWriter(const std::string& path, int width, int height, int fps);
  // Without a successful close(), discards the video: its temp file is removed and nothing
  // appears under `path` (the path of an exception mid-episode). Never throws.
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  // Encodes one (height, width, 3) RGB frame; its size must be the video's
  // (std::invalid_argument otherwise). Throws recur::Error when encoding or writing fails.
  void write(const envs::render::Frame& frame);
  // Flushes the encoder, writes the trailer and moves the finished file to `path`; throws
  // recur::Error naming `path` and the reason (ENOSPC: "No space left on device") on failure,
  // after removing the temp. Idempotent.
  void close();

  const std::string& codec() const { return codec_; }  // "libx264" or "mpeg4"
  int frames() const { return frames_; }
  const std::string& path() const { return path_; }
  // The encoded size: the frames' size, each rounded down to even.
  int video_width() const { return width_ & ~1; }
  int video_height() const { return height_ & ~1; }

 private:
  void encode(AVFrame* frame);  // nullptr flushes
  void release() noexcept;
  void discard() noexcept;  // release() and remove the temp file
  [[noreturn]] void fail(const char* what, int av_error) const;

  std::string path_;
  std::string temp_path_;  // where the bytes go until close() renames the file to path_
  std::string codec_;
  int width_ = 0, height_ = 0;  // the frames' (the video's: rounded down to even)
  int frames_ = 0;
  bool closed_ = false;     // close() was called (whatever its outcome)
  bool committed_ = false;  // the file is at path_
  AVFormatContext* format_ = nullptr;
  AVCodecContext* encoder_ = nullptr;
  AVStream* stream_ = nullptr;
  AVFrame* frame_ = nullptr;
  AVPacket* packet_ = nullptr;
};

// RGB24 (height, width, 3) -> planar YUV 4:2:0 with BT.601 limited-range coefficients (as
// swscale's default for yuv420p; values agree within 2 steps), chroma from the mean of each 2x2
// block. width and height even; strides in bytes.
void rgb_to_yuv420p(const uint8_t* rgb, int width, int height, uint8_t* y, int y_stride, uint8_t* u,
                    int u_stride, uint8_t* v, int v_stride);
// The same on the top-left width x height of an image whose rows are rgb_stride bytes apart
// (>= 3 * width): how VideoWriter crops a frame of odd size.
void rgb_to_yuv420p(const uint8_t* rgb, int width, int height, uint8_t* y, int y_stride, uint8_t* u,
                    int u_stride, uint8_t* v, int v_stride, int rgb_stride);

// Gymnasium's RecordVideo name: "<name_prefix>-episode-<episode>.mp4".
std::string video_file_name(const std::string& name_prefix, int episode);

// What a video file holds, read back with libavformat/libavcodec (every frame is decoded and
// counted): for tests and for `recur record` to report.
struct VideoProbe {
  std::string codec;  // decoder name: "h264", "mpeg4"
  int width = 0, height = 0;
  int64_t frames = 0;
  double fps = 0;       // the stream's average frame rate
  std::string pix_fmt;  // "yuv420p"
};
// Throws recur::Error naming the path when the file cannot be opened or decoded.
VideoProbe probe_video(const std::string& path);

}  // namespace recur::agent::record
