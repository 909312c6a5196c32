// LSTM cell clipping as cuDNN computes it (CUDNN_RNN_CLIP_MINMAX), pinned by the numbers cuDNN
// 9.19 printed on an H100 (docs/PERFORMANCE.md, the first H100 run): the cell
// state is kept raw and clipped on every read, c_0 included, and the final state is returned
// raw. TF's store-the-clipped-state form gives h = +0.145656 at t = 0 for c_0 = 2, bg = -10, and
// c_T = -0.3; every executor here must give cuDNN's -0.145656 and -1.145036 instead.
#include <doctest/doctest.h>

#include <cmath>
#include <span>
#include <vector>

#include "policy/cpu/cpu_sequence_executor.h"
#include "policy/cpu/cpu_step_executor.h"
#include "policy/reference_core.h"

using namespace recur::policy;

namespace {

struct ProbeCase {
  float c0, bg;
  float h;   // h at every one of the 4 steps (the probe prints 6 digits)
  float cT;  // the raw final cell state
};

// The probe's rows: clip 0.3, one unit, x = 0, zero weights, biases i = f = 2, o = 0, g = bg.
const ProbeCase kProbe[] = {
    {0.0f, 0.4f, 0.145656f, 0.598897f},     {0.0f, 10.0f, 0.145656f, 1.145036f},
    {0.0f, -10.0f, -0.145656f, -1.145036f}, {2.0f, 0.4f, 0.145656f, 0.598897f},
    {2.0f, 10.0f, 0.145656f, 1.145036f},    {2.0f, -10.0f, -0.145656f, -1.145036f},
};
constexpr int kT = 4;
constexpr float kProbeDigits =
    1e-6f;  // the probe printed 6 decimals: +-0.5e-6, plus float rounding

CanonicalWeights probe_weights(const CoreSpec& spec, float bg) {
  CanonicalWeights w = CanonicalWeights::zeros(spec);
  auto& b = w.layers[0].bias_ih;  // gates i, f, g, o (cuDNN order); bias_hh stays 0
  b[0] = 2.0f;
  b[1] = 2.0f;
  b[2] = bg;
  b[3] = 0.0f;
  return w;
}

}  // namespace

TEST_CASE("lstm cell clip: every CPU executor gives cuDNN's probed values") {
  const CoreSpec spec{CellType::kLstm, 1, 1, 1, 0.3f};
  for (const ProbeCase& pc : kProbe) {
    CAPTURE(pc.c0);
    CAPTURE(pc.bg);
    const CanonicalWeights w = probe_weights(spec, pc.bg);
    const std::vector<float> x(kT, 0.0f);
    const std::vector<uint8_t> starts(kT, 0);
    const std::vector<float> state0 = {0.0f, pc.c0};  // h_0, c_0 (c_0 = 2 lies outside the clip)

    // Double reference.
    ReferenceCore<double> ref(w);
    std::vector<double> s_ref = {0.0, pc.c0};
    const std::vector<double> xd(kT, 0.0);
    std::vector<double> y_ref(kT);
    ref.forward(kT, 1, xd.data(), starts.data(), s_ref.data(), y_ref.data());
    for (int t = 0; t < kT; ++t) CHECK(std::abs(y_ref[t] - pc.h) < kProbeDigits);
    CHECK(std::abs(s_ref[1] - pc.cT) < kProbeDigits);

    // The learner's fused sequence executor.
    CpuSequenceExecutor seq(spec);
    seq.load(w);
    std::vector<float> y_seq(kT), s_seq(2);
    seq.forward(kT, 1, x, starts, state0, y_seq, s_seq);
    for (int t = 0; t < kT; ++t) CHECK(std::abs(y_seq[t] - pc.h) < kProbeDigits);
    CHECK(std::abs(s_seq[1] - pc.cT) < kProbeDigits);
    CHECK(s_seq[0] == doctest::Approx(y_seq[kT - 1]));

    // The actor's step executor, one step at a time, state carried inside.
    CpuStepExecutor step(spec, 1);
    step.load(w);
    step.set_states(state0);
    for (int t = 0; t < kT; ++t) {
      float h = 0;
      step.step(std::span(x).subspan(t, 1), std::span(starts).subspan(t, 1), std::span(&h, 1));
      CHECK(std::abs(h - pc.h) < kProbeDigits);
    }
    std::vector<float> s_step(2);
    step.get_states(s_step);
    CHECK(std::abs(s_step[1] - pc.cT) < kProbeDigits);
  }
}

TEST_CASE("lstm cell clip: a state handed across chunks means the same thing") {
  // The actor hands its raw state to the learner (and rollout chunk n to chunk n + 1): running
  // 2 + 2 steps through that state equals running 4 in one go, exactly as cuDNN's cy -> hx does.
  const CoreSpec spec{CellType::kLstm, 1, 1, 1, 0.3f};
  const CanonicalWeights w = probe_weights(spec, -10.0f);
  const std::vector<float> x(kT, 0.0f);
  const std::vector<uint8_t> starts(kT, 0);
  const std::vector<float> state0 = {0.0f, 2.0f};
  CpuSequenceExecutor seq(spec);
  seq.load(w);
  std::vector<float> y_all(kT), s_all(2);
  seq.forward(kT, 1, x, starts, state0, y_all, s_all);
  std::vector<float> y_a(2), s_a(2), y_b(2), s_b(2);
  seq.forward(2, 1, std::span(x).first(2), std::span(starts).first(2), state0, y_a, s_a);
  CHECK(std::abs(s_a[1]) > 0.3f);  // the handed-over state is raw, outside the clip
  seq.forward(2, 1, std::span(x).last(2), std::span(starts).last(2), s_a, y_b, s_b);
  CHECK(y_a[0] == y_all[0]);
  CHECK(y_a[1] == y_all[1]);
  CHECK(y_b[0] == y_all[2]);
  CHECK(y_b[1] == y_all[3]);
  CHECK(s_b == s_all);
}
