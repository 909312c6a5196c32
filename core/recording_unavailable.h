// The one message of a build configured with -DRECUR_RECORDING=OFF (the slim GPU-verification
// bundle: tools/gpu/bundle.sh) when asked to render, encode video or write a dataset.
#pragma once

namespace recur {

inline constexpr const char* kRecordingUnavailable =
    "this build of recur has no rendering, video or dataset recording: it was configured with "
    "-DRECUR_RECORDING=OFF (the slim bundle for GPU checks). Use a default build (tools/build.sh) "
    "to render or record";

}  // namespace recur
