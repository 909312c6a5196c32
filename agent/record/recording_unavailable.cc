// VideoWriter, probe_video and MinariWriter in a build without FFmpeg and HDF5
// (-DRECUR_RECORDING=OFF, see CMakeLists.txt): constructing either writer throws the build's
// message, so their other members are unreachable and do nothing. `recur record`, `recur eval
// --video` and training videos therefore fail with that message instead of missing.
#include "core/recording_unavailable.h"
#include "agent/record/minari_writer.h"
#include "agent/record/video_writer.h"
#include "core/error.h"

namespace recur::agent::record {

VideoWriter::VideoWriter(const std::string&, int, int, int) {
  throw Error(kRecordingUnavailable);
}
VideoWriter::~VideoWriter() = default;
void VideoWriter::write(const envs::render::Frame&) {}
void VideoWriter::close() {}

VideoProbe probe_video(const std::string&) {
  throw Error(kRecordingUnavailable);
}

struct MinariWriter::Files {};

MinariWriter::MinariWriter(const std::string&, DatasetInfo) {
  throw Error(kRecordingUnavailable);
}
MinariWriter::~MinariWriter() = default;
void MinariWriter::add(const Episode&) {}
std::string MinariWriter::commit() {
  return {};
}

}  // namespace recur::agent::record
