// CudaPolicyLearner with device.tower_streams 2 (the critic's encoder and core on a stream of their
// own, forked and joined by events) against one stream: the log-probs, entropies, values and,
// after backward, every gradient must be the same bits (tolerance 0: the same kernels and
// library calls on the same inputs; only their overlap differs, and every reduction is
// deterministic). Two minibatches back to back without a host wait between them (the deferred
// steps' pattern: the second's fork must wait for the first's critic head, its critic forward
// for the first's backward), gradients accumulated over both; discrete and continuous actions,
// cuDNN's LSTM and the fused minGRU kernels, a shared core (nothing to fork). Skipped (with a
// message) without a usable GPU.
#include <doctest/doctest.h>

#ifdef RECUR_WITH_CUDA

#include <vector>

#include "core/rng.h"
#include "kernels/cuda_memory.h"
#include "policy/cuda/cuda_policy_learner.h"
#include "policy/policy_spec.h"
#include "tests/support/device_copy.h"
#include "tests/support/gpu_skip.h"

using namespace recur::policy;

TEST_CASE("CUDA learner with the critic's tower on its own stream equals one stream bit for bit") {
  if (!recur::test::gpu_or_skip("CUDA learner tower streams")) return;
  using recur::test::to_device;
  using recur::test::to_host;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous})
    for (CellType cell : {CellType::kLstm, CellType::kMinGru})
      for (bool shared : {false, true}) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(to_string(cell));
        CAPTURE(shared);
        PolicySpec spec;
        spec.obs_dim = 5;
        spec.action_kind = kind;
        spec.action_dim = kind == ActionKind::kDiscrete ? 3 : 2;
        spec.encoder = {16};
        spec.cell = cell;
        spec.hidden = 32;
        spec.layers = 2;
        spec.shared_core = shared;
        recur::Rng rng(9);
        const TensorMap params = init_policy(spec, rng);
        const int T = 16, B = 8, n_env = 12;
        const auto tb = static_cast<size_t>(T) * B;
        const auto S = static_cast<size_t>(spec.state_size());
        const int adim = kind == ActionKind::kDiscrete ? 1 : spec.action_dim;
        // Two minibatches: their inputs, episode starts, state rows and loss gradients.
        std::vector<float> obs[2], actions[2], d_out[2][3];
        std::vector<uint8_t> starts[2];
        std::vector<int32_t> rows[2] = {{5, 1, 7, 0, 3, 8, 11, 2}, {4, 6, 9, 10, 0, 1, 2, 3}};
        std::vector<float> table(n_env * S);
        for (auto& v : table) v = static_cast<float>(rng.uniform(-0.8, 0.8));
        for (int k = 0; k < 2; ++k) {
          obs[k].resize(tb * spec.obs_dim);
          actions[k].resize(tb * adim);
          starts[k].resize(tb);
          for (auto& v : obs[k]) v = static_cast<float>(rng.uniform(-2, 2));
          for (auto& v : actions[k])
            v = kind == ActionKind::kDiscrete ? static_cast<float>(rng.uniform_int(3))
                                              : static_cast<float>(rng.uniform(-1, 1));
          for (auto& s : starts[k]) s = rng.uniform() < 0.15 ? 1 : 0;
          for (auto& d : d_out[k]) {
            d.resize(tb);
            for (auto& v : d) v = static_cast<float>(rng.uniform(-1, 1));
          }
        }
        auto d_table = to_device(table);
        std::vector<recur::kernels::DeviceBuffer<float>> d_obs, d_actions, d_grad;
        for (int k = 0; k < 2; ++k) {
          d_obs.push_back(to_device(obs[k]));
          d_actions.push_back(to_device(actions[k]));
          for (auto& d : d_out[k]) d_grad.push_back(to_device(d));
        }
        std::vector<float> out[2][2][3];  // [streams - 1][minibatch][log-prob, entropy, value]
        TensorMap grads[2], weights[2];
        for (int streams = 1; streams <= 2; ++streams) {
          CudnnSequenceOptions options;
          options.tower_streams = streams;
          CudaPolicyLearner learner(spec, options);
          learner.load(params);
          learner.zero_gradients();
          recur::kernels::DeviceBuffer<float> lp[2], ent[2], v[2];
          for (int k = 0; k < 2; ++k) {
            for (auto* b : {&lp[k], &ent[k], &v[k]}) b->resize(tb);
            learner.evaluate(T, B, d_obs[k].data(), d_actions[k].data(), starts[k], d_table.data(),
                             S, rows[k], lp[k].data(), ent[k].data(), v[k].data());
            learner.backward(d_grad[3 * k].data(), d_grad[3 * k + 1].data(),
                             d_grad[3 * k + 2].data());  // added to the first's
          }
          CUDA_CHECK(cudaStreamSynchronize(learner.stream()));
          for (int k = 0; k < 2; ++k) {
            out[streams - 1][k][0] = to_host(lp[k]);
            out[streams - 1][k][1] = to_host(ent[k]);
            out[streams - 1][k][2] = to_host(v[k]);
          }
          grads[streams - 1] = learner.gradient_tensors();
          weights[streams - 1] = learner.to_tensors();  // the critic's core read on its stream
        }
        for (int k = 0; k < 2; ++k)
          for (int q = 0; q < 3; ++q) CHECK(out[1][k][q] == out[0][k][q]);
        CHECK(grads[1] == grads[0]);
        CHECK(weights[1] == weights[0]);
      }
}

#endif
