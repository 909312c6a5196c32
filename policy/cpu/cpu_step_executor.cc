#include "policy/cpu/cpu_step_executor.h"

#include "policy/cpu/gate_math.h"
#include "policy/eigen.h"
#include "policy/gemm.h"

#include <algorithm>
#include <cmath>

namespace recur::policy {
namespace {
using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
}  // namespace

CpuStepExecutor::CpuStepExecutor(const CoreSpec& spec, int slots) : StepExecutor(spec, slots) {
  const int H = spec.hidden, C = columns();
  for (int k = 0; k < spec.layers; ++k) {
    Layer l;
    l.w.assign(static_cast<size_t>(rows(k)) * C, 0.0f);
    l.bias.assign(static_cast<size_t>(C), 0.0f);
    l.bias_ih.assign(static_cast<size_t>(spec.bias_rows()), 0.0f);
    l.bias_hh.assign(static_cast<size_t>(spec.recurrent_bias_rows()), 0.0f);
    l.norm_weight.assign(static_cast<size_t>(spec.norm_size()), 0.0f);
    l.norm_bias.assign(static_cast<size_t>(spec.norm_size()), 0.0f);
    layers_.push_back(std::move(l));
  }
  const auto lbh = static_cast<size_t>(spec.layers) * slots * H;
  h_.assign(lbh, 0.0f);
  c_.assign(has_cell_state(spec.cell) ? lbh : 0, 0.0f);
  xh_.assign(static_cast<size_t>(slots) * (std::max(spec.input, H) + H), 0.0f);
  gates_.assign(static_cast<size_t>(slots) * C, 0.0f);
  if (has_layer_output(spec.cell, spec.layers - 1))  // some layer's output is not its h
    out_.assign(static_cast<size_t>(slots) * H, 0.0f);
}

int CpuStepExecutor::rows(int k) const {
  return spec().layer_input(k) + (has_recurrent_weights(spec().cell) ? spec().hidden : 0);
}

int CpuStepExecutor::columns() const {
  return spec().cell == CellType::kGru ? 4 * spec().hidden : spec().gates() * spec().hidden;
}

void CpuStepExecutor::load_impl(const CanonicalWeights& weights) {
  const int H = spec().hidden, G = spec().gates(), C = columns();
  const bool gru = spec().cell == CellType::kGru;
  const bool recurrent = has_recurrent_weights(spec().cell);
  for (int k = 0; k < spec().layers; ++k) {
    const auto& src = weights.layers[static_cast<size_t>(k)];
    Layer& l = layers_[static_cast<size_t>(k)];
    const int in = spec().layer_input(k);
    std::fill(l.w.begin(), l.w.end(), 0.0f);
    // Canonical row r = gate g's unit j (r = g*H + j) becomes column col(r) here.
    for (int r = 0; r < G * H; ++r) {
      const bool n_gate = gru && r >= 2 * H;
      const int col_x = r;                   // n_x for GRU's n gate
      const int col_h = n_gate ? r + H : r;  // n_h for GRU's n gate
      for (int i = 0; i < in; ++i)
        l.w[static_cast<size_t>(i) * C + col_x] = src.weight_ih[static_cast<size_t>(r) * in + i];
      if (!recurrent) continue;
      for (int i = 0; i < H; ++i)
        l.w[static_cast<size_t>(in + i) * C + col_h] =
            src.weight_hh[static_cast<size_t>(r) * H + i];
    }
    l.bias_ih.assign(src.bias_ih.begin(), src.bias_ih.end());
    l.bias_hh.assign(src.bias_hh.begin(), src.bias_hh.end());
    l.norm_weight.assign(src.norm_weight.begin(), src.norm_weight.end());
    l.norm_bias.assign(src.norm_bias.begin(), src.norm_bias.end());
    for (int r = 0; r < G * H && has_gate_biases(spec().cell); ++r) {
      if (gru && r >= 2 * H) {
        l.bias[static_cast<size_t>(r)] = src.bias_ih[static_cast<size_t>(r)];
        l.bias[static_cast<size_t>(r + H)] = src.bias_hh[static_cast<size_t>(r)];
      } else if (!recurrent) {
        l.bias[static_cast<size_t>(r)] = src.bias_ih[static_cast<size_t>(r)];
      } else {
        l.bias[static_cast<size_t>(r)] =
            src.bias_ih[static_cast<size_t>(r)] + src.bias_hh[static_cast<size_t>(r)];
      }
    }
    (void)C;
  }
}

CanonicalWeights CpuStepExecutor::weights_impl() const {
  CanonicalWeights w = CanonicalWeights::zeros(spec());
  const int H = spec().hidden, G = spec().gates(), C = columns();
  const bool gru = spec().cell == CellType::kGru;
  const bool recurrent = has_recurrent_weights(spec().cell);
  for (int k = 0; k < spec().layers; ++k) {
    auto& dst = w.layers[static_cast<size_t>(k)];
    const Layer& l = layers_[static_cast<size_t>(k)];
    const int in = spec().layer_input(k);
    for (int r = 0; r < G * H; ++r) {
      const int col_h = gru && r >= 2 * H ? r + H : r;
      for (int i = 0; i < in; ++i)
        dst.weight_ih[static_cast<size_t>(r) * in + i] = l.w[static_cast<size_t>(i) * C + r];
      if (!recurrent) continue;
      for (int i = 0; i < H; ++i)
        dst.weight_hh[static_cast<size_t>(r) * H + i] =
            l.w[static_cast<size_t>(in + i) * C + col_h];
    }
    dst.bias_ih.assign(l.bias_ih.begin(), l.bias_ih.end());
    dst.bias_hh.assign(l.bias_hh.begin(), l.bias_hh.end());
    dst.norm_weight.assign(l.norm_weight.begin(), l.norm_weight.end());
    dst.norm_bias.assign(l.norm_bias.begin(), l.norm_bias.end());
  }
  return w;
}

void CpuStepExecutor::step_impl(std::span<const float> x, std::span<const uint8_t> episode_start,
                                std::span<float> h_out) {
  const int B = slots(), H = spec().hidden, C = columns(), L = spec().layers;
  const bool lstm = has_cell_state(spec().cell);
  const bool stacked = !out_.empty();  // a minGRU stack: out_ is the running out_k
  const bool highway = has_highway_stack(spec().cell);
  const float clip = spec().cell_clip;
  // Resets first, as an explicit mask on every layer's state.
  for (int b = 0; b < B; ++b) {
    if (!episode_start[static_cast<size_t>(b)]) continue;
    for (int k = 0; k < L; ++k) {
      const size_t o = (static_cast<size_t>(k) * B + b) * H;
      std::fill_n(h_.begin() + o, H, 0.0f);
      if (lstm) std::fill_n(c_.begin() + o, H, 0.0f);
    }
  }
  for (int k = 0; k < L; ++k) {
    const int in = spec().layer_input(k);
    const int width = rows(k);  // in + H, or in alone for minGRU (no h rows)
    float* hk = h_.data() + static_cast<size_t>(k) * B * H;
    float* ck = lstm ? c_.data() + static_cast<size_t>(k) * B * H : nullptr;
    const float* input = k == 0    ? x.data()
                         : stacked ? out_.data()
                                   : h_.data() + static_cast<size_t>(k - 1) * B * H;
    for (int b = 0; b < B; ++b) {
      float* row = xh_.data() + static_cast<size_t>(b) * width;
      std::copy_n(input + static_cast<size_t>(b) * in, in, row);
      if (width > in) std::copy_n(hk + static_cast<size_t>(b) * H, H, row + in);
    }
    const Layer& l = layers_[static_cast<size_t>(k)];
    const auto b_rows = static_cast<size_t>(B), w_rows = static_cast<size_t>(width);
    gemm(B, C, width, {xh_.data(), b_rows * w_rows}, Transpose::kNo,
         {l.w.data(), w_rows * static_cast<size_t>(C)}, Transpose::kNo,
         {gates_.data(), b_rows * static_cast<size_t>(C)}, /*accumulate=*/false);
    Eigen::Map<Mat> gates(gates_.data(), B, C);
    if (has_gate_biases(spec().cell))
      gates.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(l.bias.data(), C);
    Eigen::Map<Mat> h(hk, B, H);
    switch (spec().cell) {
      case CellType::kLstmLn:
        gate_math::lstm_ln_forward<float>(gates, Eigen::Map<Mat>(ck, B, H), h, l.norm_weight.data(),
                                          l.norm_bias.data(), spec().norm_epsilon);
        break;
      case CellType::kLstm:
        gate_math::lstm_forward<float>(gates, Eigen::Map<Mat>(ck, B, H), h, clip);
        break;
      case CellType::kGru:
        gate_math::gru_forward<float>(gates.leftCols(2 * H), gates.middleCols(2 * H, H),
                                      gates.rightCols(H), h);
        break;
      case CellType::kRnnTanh:
      case CellType::kRnnRelu:
        gate_math::rnn_forward<float>(gates, h, spec().cell == CellType::kRnnRelu);
        break;
      case CellType::kMinGru:
        gate_math::mingru_forward<float>(gates, h);
        break;
      case CellType::kMinGruHighway:  // [z | h~ | p]: the scan, then the highway
        gate_math::mingru_forward<float>(gates.leftCols(2 * H), h);
        gate_math::highway_forward<float>(gates.rightCols(H), h, Eigen::Map<Mat>(out_.data(), B, H),
                                          k > 0);
        break;
    }
    if (stacked && !highway) {  // out_0 = h_0, out_k = h_k + out_{k-1} (core_spec.h)
      Eigen::Map<Mat> out(out_.data(), B, H);
      if (k == 0) {
        out = h;
      } else {
        out += h;
      }
    }
  }
  std::copy_n(stacked ? out_.data() : h_.data() + static_cast<size_t>(L - 1) * B * H,
              static_cast<size_t>(B) * H, h_out.data());
}

void CpuStepExecutor::get_state_impl(int slot, std::span<float> out) const {
  const int B = slots(), H = spec().hidden, L = spec().layers;
  for (int k = 0; k < L; ++k) {
    const size_t o = (static_cast<size_t>(k) * B + slot) * H;
    std::copy_n(h_.begin() + o, H, out.begin() + k * H);
    if (!c_.empty()) std::copy_n(c_.begin() + o, H, out.begin() + (L + k) * H);
  }
}

void CpuStepExecutor::set_state_impl(int slot, std::span<const float> state) {
  const int B = slots(), H = spec().hidden, L = spec().layers;
  for (int k = 0; k < L; ++k) {
    const size_t o = (static_cast<size_t>(k) * B + slot) * H;
    std::copy_n(state.begin() + k * H, H, h_.begin() + o);
    if (!c_.empty()) std::copy_n(state.begin() + (L + k) * H, H, c_.begin() + o);
  }
}

void CpuStepExecutor::reset_impl(int slot) {
  const int B = slots(), H = spec().hidden;
  for (int k = 0; k < spec().layers; ++k) {
    const size_t o = (static_cast<size_t>(k) * B + slot) * H;
    std::fill_n(h_.begin() + o, H, 0.0f);
    if (!c_.empty()) std::fill_n(c_.begin() + o, H, 0.0f);
  }
}

}  // namespace recur::policy
