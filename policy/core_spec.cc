#include "policy/core_spec.h"

#include <cmath>

#include "core/error.h"

namespace recur::policy {

std::string_view to_string(CellType cell) {
  switch (cell) {
    case CellType::kLstm:
      return "lstm";
    case CellType::kGru:
      return "gru";
    case CellType::kRnnTanh:
      return "rnn_tanh";
    case CellType::kRnnRelu:
      return "rnn_relu";
    case CellType::kMinGru:
      return "mingru";
    case CellType::kLstmLn:
      return "lstm_ln";
    case CellType::kMinGruHighway:
      return "mingru_highway";
  }
  return "?";
}

CellType parse_cell_type(std::string_view name) {
  for (CellType c : {CellType::kLstm, CellType::kGru, CellType::kRnnTanh, CellType::kRnnRelu,
                     CellType::kMinGru, CellType::kLstmLn, CellType::kMinGruHighway})
    if (to_string(c) == name) return c;
  throw Error(
      fmt::format("cell type '{}' is unknown; use lstm, gru, rnn_tanh, rnn_relu, mingru, "
                  "mingru_highway or lstm_ln",
                  name));
}

void CoreSpec::validate() const {
  RECUR_CHECK(input >= 1 && input <= (1 << 20), "core input size {} must be in [1, 2^20]", input);
  RECUR_CHECK(hidden >= 1 && hidden <= (1 << 16), "core hidden size {} must be in [1, 65536]",
              hidden);
  RECUR_CHECK(layers >= 1 && layers <= 64, "core layers {} must be in [1, 64]", layers);
  RECUR_CHECK(cell_clip >= 0, "cell_clip {} must be >= 0 (0 = no clipping)", cell_clip);
  RECUR_CHECK(cell_clip == 0 || cell == CellType::kLstm, "cell_clip applies to lstm only, not {}",
              to_string(cell));
  RECUR_CHECK(std::isfinite(norm_epsilon) && norm_epsilon > 0 && norm_epsilon <= 1,
              "norm_epsilon {} must be in (0, 1] (LayerNorm's eps; 1e-5 by default)", norm_epsilon);
}

void require_cuda_core(const CoreSpec& spec) {
  (void)spec;  // every cell has a CUDA step kernel (kernels/cell_gates.h)
}

void require_cudnn_core(const CoreSpec& spec) {
  RECUR_CHECK(!is_mingru(spec.cell),
              "policy.core = {}: cuDNN's RNN has no minGRU; the GPU learner runs it on recur's "
              "fused CUDA sequence executor (policy/cuda/cuda_sequence_executor.h), or set "
              "device.learner: cpu, or choose policy.core: gru",
              to_string(spec.cell));
  RECUR_CHECK(spec.cell != CellType::kLstmLn,
              "policy.core = lstm_ln: cuDNN's fused RNN has no layer norm; the GPU learner runs "
              "it on recur's fused CUDA sequence executor (policy/cuda/cuda_sequence_executor.h), "
              "or set device.learner: cpu, or choose policy.core: lstm");
}

}  // namespace recur::policy
