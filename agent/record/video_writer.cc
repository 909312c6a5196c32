#include "agent/record/video_writer.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"

namespace recur::agent::record {

namespace {

std::string av_error_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  if (av_strerror(err, buf, sizeof buf) < 0) return fmt::format("FFmpeg error {}", err);
  return buf;
}

// x264 prints its settings and statistics at AV_LOG_INFO; keep warnings and errors.
void quiet_ffmpeg_logging() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (av_log_get_level() > AV_LOG_WARNING) av_log_set_level(AV_LOG_WARNING);
  });
}

}  // namespace

void VideoWriter::fail(const char* what, int av_error) const {
  throw Error(fmt::format("video {}: {}: {}", path_, what, av_error_text(av_error)));
}

VideoWriter::VideoWriter(const std::string& path, int width, int height, int fps)
    : path_(path), width_(width), height_(height) {
  RECUR_CHECK(width >= 2 && height >= 2 && fps > 0,
              "video {}: frames of {}x{} at {} fps: a video needs frames of at least 2x2 and an "
              "fps > 0",
              path, width, height, fps);
  quiet_ffmpeg_logging();
  const std::filesystem::path target(path);
  remove_stale_temps(target.has_parent_path() ? target.parent_path() : ".", "*.mp4");
  temp_path_ = temp_path_for(target).string();
  try {
    // The muxer writes (and, for +faststart, rereads) the temp file; "mp4" is named because the
    // temp name does not end in .mp4.
    int err = avformat_alloc_output_context2(&format_, nullptr, "mp4", temp_path_.c_str());
    if (err < 0 || !format_) fail("cannot set up the MP4 muxer", err);

    const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
    if (!codec) codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    RECUR_CHECK(codec,
                "video {}: this FFmpeg (libavcodec) has neither the libx264 nor the mpeg4 encoder",
                path);
    codec_ = codec->name;

    stream_ = avformat_new_stream(format_, nullptr);
    encoder_ = avcodec_alloc_context3(codec);
    if (!stream_ || !encoder_) fail("cannot allocate the encoder", AVERROR(ENOMEM));
    encoder_->width = video_width();  // 4:2:0 chroma: even (an odd frame loses a column or row)
    encoder_->height = video_height();
    encoder_->pix_fmt = AV_PIX_FMT_YUV420P;
    encoder_->time_base = AVRational{1, fps};
    encoder_->framerate = AVRational{fps, 1};
    encoder_->thread_count = 1;
    stream_->time_base = encoder_->time_base;
    stream_->avg_frame_rate = encoder_->framerate;
    if (format_->oformat->flags & AVFMT_GLOBALHEADER)
      encoder_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (codec_ == "libx264") {
      av_opt_set(encoder_->priv_data, "preset", "ultrafast", 0);  // why: video_writer.h
      av_opt_set(encoder_->priv_data, "crf", "23", 0);
    } else {
      // mpeg4 has no crf: a fixed quantiser (2 best .. 31 worst) gives comparable quality.
      encoder_->gop_size = 10 * fps;
      encoder_->flags |= AV_CODEC_FLAG_QSCALE;
      encoder_->global_quality = FF_QP2LAMBDA * 4;
    }
    if ((err = avcodec_open2(encoder_, codec, nullptr)) < 0)
      fail(fmt::format("cannot open the {} encoder", codec_).c_str(), err);
    if ((err = avcodec_parameters_from_context(stream_->codecpar, encoder_)) < 0)
      fail("cannot set the stream parameters", err);

    if ((err = avio_open(&format_->pb, temp_path_.c_str(), AVIO_FLAG_WRITE)) < 0)
      fail("cannot open the file for writing", err);
    AVDictionary* mux_options = nullptr;
    av_dict_set(&mux_options, "movflags", "+faststart", 0);
    err = avformat_write_header(format_, &mux_options);
    av_dict_free(&mux_options);
    if (err < 0) fail("cannot write the MP4 header", err);

    frame_ = av_frame_alloc();
    packet_ = av_packet_alloc();
    if (!frame_ || !packet_) fail("cannot allocate a frame", AVERROR(ENOMEM));
    frame_->format = AV_PIX_FMT_YUV420P;
    frame_->width = video_width();
    frame_->height = video_height();
    if ((err = av_frame_get_buffer(frame_, 0)) < 0) fail("cannot allocate a frame", err);
  } catch (...) {
    discard();  // a header without frames is not a video
    throw;
  }
}

VideoWriter::~VideoWriter() {
  if (!committed_) discard();
}

void VideoWriter::discard() noexcept {
  release();
  if (!temp_path_.empty()) std::remove(temp_path_.c_str());
}

void VideoWriter::write(const envs::render::Frame& frame) {
  RECUR_CHECK_ARG(!closed_, "video {}: write() after close()", path_);
  RECUR_CHECK_ARG(frame.width == width_ && frame.height == height_ &&
                      frame.pixels.size() == static_cast<size_t>(width_) * height_ * 3,
                  "video {}: frame of {}x{} ({} bytes) given, the video is {}x{} RGB", path_,
                  frame.width, frame.height, frame.pixels.size(), width_, height_);
  // The encoder may still hold a reference to the last frame's buffers; make_writable copies
  // only in that case (libx264 copies its input, so in practice it never does).
  int err = av_frame_make_writable(frame_);
  if (err < 0) fail("cannot reuse the frame buffer", err);
  rgb_to_yuv420p(frame.pixels.data(), video_width(), video_height(), frame_->data[0],
                 frame_->linesize[0], frame_->data[1], frame_->linesize[1], frame_->data[2],
                 frame_->linesize[2], width_ * 3);
  frame_->pts = frames_;
  encode(frame_);
  ++frames_;
}

void VideoWriter::encode(AVFrame* frame) {
  int err = avcodec_send_frame(encoder_, frame);
  if (err < 0) fail("cannot encode a frame", err);
  for (;;) {
    err = avcodec_receive_packet(encoder_, packet_);
    if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return;
    if (err < 0) fail("cannot encode a frame", err);
    // The MP4 muxer picks its own stream time base (e.g. 1/12800) in write_header.
    av_packet_rescale_ts(packet_, encoder_->time_base, stream_->time_base);
    packet_->stream_index = stream_->index;
    err = av_interleaved_write_frame(format_, packet_);  // takes the packet's reference
    if (err < 0) fail("cannot write to the file", err);
  }
}

void VideoWriter::close() {
  if (closed_ || !format_) return;
  closed_ = true;
  try {
    encode(nullptr);
    int err = av_write_trailer(format_);
    if (err < 0) fail("cannot finish the MP4 file", err);
    if ((err = avio_closep(&format_->pb)) < 0) fail("cannot close the file", err);
    commit_temp_file(temp_path_, path_);
  } catch (const Error& e) {
    discard();
    // commit_temp_file's message names the temp; the user knows the video by its name.
    const std::string what = e.what();
    if (what.rfind("video " + path_, 0) == 0) throw;
    throw Error(fmt::format("video {}: {}", path_, what));
  } catch (...) {
    discard();
    throw;
  }
  committed_ = true;
  release();
}

void VideoWriter::release() noexcept {
  if (format_ && format_->pb) avio_closep(&format_->pb);
  av_packet_free(&packet_);
  av_frame_free(&frame_);
  avcodec_free_context(&encoder_);
  avformat_free_context(format_);  // frees stream_ too
  format_ = nullptr;
  stream_ = nullptr;
}

// ---- probe -------------------------------------------------------------------------------------

VideoProbe probe_video(const std::string& path) {
  quiet_ffmpeg_logging();
  auto fail = [&](const char* what, int err) {
    throw Error(fmt::format("video {}: {}: {}", path, what, av_error_text(err)));
  };
  AVFormatContext* raw = nullptr;
  int err = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (err < 0) fail("cannot open", err);
  std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> input(
      raw, [](AVFormatContext* p) { avformat_close_input(&p); });
  if ((err = avformat_find_stream_info(input.get(), nullptr)) < 0)
    fail("cannot read the streams", err);
  const AVCodec* decoder = nullptr;
  const int index = av_find_best_stream(input.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
  if (index < 0 || !decoder) fail("no decodable video stream", index < 0 ? index : AVERROR(EINVAL));
  const AVStream* stream = input->streams[index];

  std::unique_ptr<AVCodecContext, void (*)(AVCodecContext*)> dec(
      avcodec_alloc_context3(decoder), [](AVCodecContext* p) { avcodec_free_context(&p); });
  if (!dec) fail("cannot allocate a decoder", AVERROR(ENOMEM));
  if ((err = avcodec_parameters_to_context(dec.get(), stream->codecpar)) < 0 ||
      (err = avcodec_open2(dec.get(), decoder, nullptr)) < 0)
    fail("cannot open the decoder", err);

  VideoProbe probe;
  probe.codec = avcodec_get_name(stream->codecpar->codec_id);
  probe.width = stream->codecpar->width;
  probe.height = stream->codecpar->height;
  const char* pix = av_get_pix_fmt_name(static_cast<AVPixelFormat>(stream->codecpar->format));
  probe.pix_fmt = pix ? pix : "";
  const AVRational rate =
      stream->avg_frame_rate.num > 0 ? stream->avg_frame_rate : stream->r_frame_rate;
  probe.fps = rate.den > 0 ? av_q2d(rate) : 0.0;

  std::unique_ptr<AVPacket, void (*)(AVPacket*)> packet(av_packet_alloc(),
                                                        [](AVPacket* p) { av_packet_free(&p); });
  std::unique_ptr<AVFrame, void (*)(AVFrame*)> frame(av_frame_alloc(),
                                                     [](AVFrame* p) { av_frame_free(&p); });
  if (!packet || !frame) fail("cannot allocate a frame", AVERROR(ENOMEM));
  auto drain = [&] {
    for (;;) {
      const int r = avcodec_receive_frame(dec.get(), frame.get());
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
      if (r < 0) fail("cannot decode", r);
      ++probe.frames;
      av_frame_unref(frame.get());
    }
  };
  while ((err = av_read_frame(input.get(), packet.get())) >= 0) {
    if (packet->stream_index == index) {
      const int r = avcodec_send_packet(dec.get(), packet.get());
      av_packet_unref(packet.get());
      if (r < 0) fail("cannot decode", r);
      drain();
    } else {
      av_packet_unref(packet.get());
    }
  }
  if (err != AVERROR_EOF) fail("cannot read", err);
  avcodec_send_packet(dec.get(), nullptr);
  drain();
  return probe;
}

}  // namespace recur::agent::record
