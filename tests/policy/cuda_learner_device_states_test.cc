// CudaPolicyLearner::evaluate with the initial states kept on the device (a table of stored
// states and one row per env, gathered per core by kernels/state_gather.h) against evaluate with
// the same states copied on the host: the log-probs, entropies, values and, after backward,
// every gradient must be the same bits (tolerance 0: both paths hand cuDNN the same hx/cx values
// and run the same calls; cuDNN repeats itself bit for bit, cudnn_sequence_executor_test.cc).
// Discrete/continuous actions, shared/separate cores, LSTM/GRU; resets inside the sequences so
// that some sub-sequences start from zeros. Skipped (with a message) without a usable GPU.
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

TEST_CASE("CUDA learner with device-resident initial states equals host-copied states") {
  if (!recur::test::gpu_or_skip("CUDA learner device-resident initial states")) return;
  using recur::test::to_device;
  using recur::test::to_host;
  for (ActionKind kind : {ActionKind::kDiscrete, ActionKind::kContinuous})
    for (bool shared : {true, false})
      for (CellType cell : {CellType::kLstm, CellType::kGru}) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(shared);
        CAPTURE(to_string(cell));
        PolicySpec spec;
        spec.obs_dim = 5;
        spec.action_kind = kind;
        spec.action_dim = kind == ActionKind::kDiscrete ? 3 : 2;
        spec.encoder = {16};
        spec.cell = cell;
        spec.hidden = 24;
        spec.layers = 2;
        spec.shared_core = shared;
        recur::Rng rng(5);
        const TensorMap params = init_policy(spec, rng);
        const int T = 12, B = 6, n_env = 9;
        const auto tb = static_cast<size_t>(T) * B;
        const auto S = static_cast<size_t>(spec.state_size());
        const int adim = kind == ActionKind::kDiscrete ? 1 : spec.action_dim;
        std::vector<float> obs(tb * spec.obs_dim), actions(tb * adim), table(n_env * S);
        std::vector<uint8_t> starts(tb);
        for (auto& v : obs) v = static_cast<float>(rng.uniform(-2, 2));
        for (auto& v : actions)
          v = kind == ActionKind::kDiscrete ? static_cast<float>(rng.uniform_int(3))
                                            : static_cast<float>(rng.uniform(-1, 1));
        for (auto& v : table) v = static_cast<float>(rng.uniform(-0.8, 0.8));
        for (auto& s : starts) s = rng.uniform() < 0.15 ? 1 : 0;
        const std::vector<int32_t> rows = {5, 1, 7, 0, 3, 8};
        std::vector<float> s0(B * S);  // the host path's copy of the envs' states
        for (int b = 0; b < B; ++b)
          std::copy_n(table.begin() + static_cast<ptrdiff_t>(rows[static_cast<size_t>(b)] * S), S,
                      s0.begin() + static_cast<ptrdiff_t>(b * S));
        std::vector<float> ca(tb), cb(tb), cc(tb);
        for (size_t i = 0; i < tb; ++i) {
          ca[i] = static_cast<float>(rng.uniform(-1, 1));
          cb[i] = static_cast<float>(rng.uniform(-1, 1));
          cc[i] = static_cast<float>(rng.uniform(-1, 1));
        }
        auto d_obs = to_device(obs), d_actions = to_device(actions), d_table = to_device(table);
        auto d_ca = to_device(ca), d_cb = to_device(cb), d_cc = to_device(cc);
        std::vector<float> out[2][3];
        TensorMap grads[2];
        for (int path = 0; path < 2; ++path) {
          CudaPolicyLearner learner(spec, CudnnSequenceOptions{});
          learner.load(params);
          recur::kernels::DeviceBuffer<float> lp(tb), ent(tb), v(tb);
          if (path == 0)
            learner.evaluate(T, B, d_obs.data(), d_actions.data(), starts, s0, lp.data(),
                             ent.data(), v.data());
          else
            learner.evaluate(T, B, d_obs.data(), d_actions.data(), starts, d_table.data(), S, rows,
                             lp.data(), ent.data(), v.data());
          learner.zero_gradients();
          learner.backward(d_ca.data(), d_cb.data(), d_cc.data());
          CUDA_CHECK(cudaStreamSynchronize(learner.stream()));
          out[path][0] = to_host(lp);
          out[path][1] = to_host(ent);
          out[path][2] = to_host(v);
          grads[path] = learner.gradient_tensors();
        }
        for (int k = 0; k < 3; ++k) CHECK(out[1][k] == out[0][k]);
        CHECK(grads[1] == grads[0]);
      }
}

#endif
