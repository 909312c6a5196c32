// The ONNX export in a build without libonnx (RECUR_ONNX=OFF, or AUTO that did not find it): the
// same functions, saying how to get a build that has it.
#include "core/error.h"
#include "policy/convert/onnx.h"

namespace recur::policy::convert {
namespace {

[[noreturn]] void unavailable() {
  throw Error(
      "this build of recur has no ONNX export: libonnx was not found when it was configured "
      "(RECUR_ONNX=AUTO) or it was turned off (RECUR_ONNX=OFF). Install Debian's libonnx-dev "
      "(tools/install-deps.sh does) and reconfigure, e.g. tools/build.sh -DRECUR_ONNX=ON");
}

}  // namespace

bool onnx_export_available() {
  return false;
}

void require_onnx_export() {
  unavailable();
}

std::string policy_to_onnx(const PolicySpec&, const TensorMap&, const OnnxExportOptions&) {
  unavailable();
}

void save_policy_onnx(const std::filesystem::path&, const PolicySpec&, const TensorMap&,
                      const OnnxExportOptions&) {
  unavailable();
}

OnnxModelInfo read_onnx(const std::filesystem::path&) {
  unavailable();
}

}  // namespace recur::policy::convert
