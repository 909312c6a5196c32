// The replay learner's losses and gradients (recurrent SAC, discrete SAC, TD3) against an
// independent double-precision reference written here from the equations in
// agent/offpolicy/replay_learner.h: the loss values, and central finite differences of the
// reference losses for every parameter of the network each loss trains. Batches have non-zero
// initial states, a reset, masked burn-in and padding rows, and L + 1 = 7 rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "agent/offpolicy/replay_learner.h"
#include "policy/policy_actor.h"
#include "policy/squashed_action.h"

#ifdef RECUR_WITH_CUDA
#include "tests/support/gpu_skip.h"
#include "tests/support/rel_err.h"
#endif

using namespace recur;
using agent::offpolicy::Method;
using agent::offpolicy::ReplayBatch;
using agent::offpolicy::ReplayLearner;

namespace {

using Params = std::map<std::string, std::vector<double>>;

Params to_double(const policy::TensorMap& t) {
  Params p;
  for (const auto& [name, tensor] : t) p[name].assign(tensor.data.begin(), tensor.data.end());
  return p;
}

constexpr int kObs = 3, kHidden = 4, kL = 6, kB = 3, kBurnIn = 2;
const std::vector<int> kEncoder = {5}, kHead = {4};

// y = MLP(x) with recur's (PyTorch's) names: "{p}{2k}.weight", or "{p}weight" for a lone Linear
// without activation; tanh between layers (and after the last when activate_output).
std::vector<double> mlp(const Params& P, const std::string& p, const std::vector<int>& widths,
                        bool activate_output, const std::vector<double>& x) {
  const int layers = static_cast<int>(widths.size()) - 1;
  const bool bare = layers == 1 && !activate_output;
  std::vector<double> in = x;
  for (int k = 0; k < layers; ++k) {
    const std::string base = bare ? p : p + std::to_string(2 * k) + ".";
    const auto& W = P.at(base + "weight");
    const auto& b = P.at(base + "bias");
    const int I = widths[k], O = widths[k + 1];
    std::vector<double> out(O);
    for (int o = 0; o < O; ++o) {
      double s = b[o];
      for (int i = 0; i < I; ++i) s += W[o * I + i] * in[i];
      out[o] = (k + 1 < layers || activate_output) ? std::tanh(s) : s;
    }
    in = std::move(out);
  }
  return in;
}

double sigmoid(double v) {
  return 1 / (1 + std::exp(-v));
}

// [encoder ->] LSTM over (L+1, B): returns h (L+1, B, H). Gates i, f, g, o; state h then c.
std::vector<double> tower(const Params& P, const std::string& p, const ReplayBatch& batch,
                          const std::vector<double>& state0 /* (B, 2H) */) {
  const int H = kHidden, L1 = batch.L + 1, B = batch.B;
  const int in = kEncoder.back();
  std::vector<double> out(static_cast<size_t>(L1) * B * H);
  const auto& Wi = P.at(p + "core.weight_ih_l0");
  const auto& Wh = P.at(p + "core.weight_hh_l0");
  const auto& bi = P.at(p + "core.bias_ih_l0");
  const auto& bh = P.at(p + "core.bias_hh_l0");
  for (int b = 0; b < B; ++b) {
    std::vector<double> h(state0.begin() + b * 2 * H, state0.begin() + b * 2 * H + H);
    std::vector<double> c(state0.begin() + b * 2 * H + H, state0.begin() + (b + 1) * 2 * H);
    for (int t = 0; t < L1; ++t) {
      if (batch.episode_start[static_cast<size_t>(t) * B + b]) {
        std::fill(h.begin(), h.end(), 0.0);
        std::fill(c.begin(), c.end(), 0.0);
      }
      const std::vector<double> o(batch.obs.begin() + (static_cast<size_t>(t) * B + b) * kObs,
                                  batch.obs.begin() + (static_cast<size_t>(t) * B + b + 1) * kObs);
      const auto x = mlp(P, p + "encoder.", {kObs, kEncoder[0]}, true, o);
      std::vector<double> g(4 * H);
      for (int r = 0; r < 4 * H; ++r) {
        double s = bi[r] + bh[r];
        for (int i = 0; i < in; ++i) s += Wi[r * in + i] * x[i];
        for (int j = 0; j < H; ++j) s += Wh[r * H + j] * h[j];
        g[r] = s;
      }
      for (int j = 0; j < H; ++j) {
        const double ig = sigmoid(g[j]), fg = sigmoid(g[H + j]), gg = std::tanh(g[2 * H + j]),
                     og = sigmoid(g[3 * H + j]);
        c[j] = fg * c[j] + ig * gg;
        h[j] = og * std::tanh(c[j]);
      }
      std::copy(h.begin(), h.end(), out.begin() + (static_cast<size_t>(t) * B + b) * H);
    }
  }
  return out;
}

struct Losses {
  double critic = 0, actor = 0, alpha_grad = 0;
};

std::vector<double> slice(const std::vector<double>& v, size_t row, int width) {
  return {v.begin() + row * width, v.begin() + (row + 1) * width};
}
std::vector<double> cat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The reference of one update's three losses (and d loss_alpha / d log_alpha) at P.
Losses reference(Method method, const Params& P, const ReplayBatch& batch, int A,
                 const std::vector<float>& noise_pi, const std::vector<float>& noise_next,
                 double gamma, double target_entropy, double target_noise, double noise_clip) {
  const int L = batch.L, B = batch.B, H = kHidden;
  const bool discrete = method == Method::kSacDiscrete, td3 = method == Method::kTd3;
  const int d = discrete ? 1 : A;
  const int width = method == Method::kSac ? 2 * A : A;
  std::vector<double> s0a(static_cast<size_t>(B) * 2 * H), s0c(s0a.size());
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < 2 * H; ++j) {
      s0a[b * 2 * H + j] = batch.initial_state[b * 4 * H + j];
      s0c[b * 2 * H + j] = batch.initial_state[b * 4 * H + 2 * H + j];
    }
  const auto ha = tower(P, "", batch, s0a);
  const auto hc = tower(P, "critic_", batch, s0c);
  const auto hct = tower(P, "target.critic_", batch, s0c);
  const std::vector<int> head_w = {H, kHead[0], width};
  const std::vector<int> q_w = {discrete ? H : H + A, kHead[0], discrete ? A : 1};
  const double alpha = std::exp(P.at("log_alpha")[0]);
  const std::vector<double> hta = td3 ? tower(P, "target.", batch, s0a) : std::vector<double>{};
  double msum = 0;
  for (const float m : batch.loss_mask) msum += m;
  Losses out;
  for (int k = 0; k < L; ++k)
    for (int b = 0; b < B; ++b) {
      const size_t i = static_cast<size_t>(k) * B + b, nx = i + B;
      const double m = batch.loss_mask[i] / msum;
      const auto head = mlp(P, "actor.", head_w, false, slice(ha, i, H));
      const auto head_next = mlp(P, "actor.", head_w, false, slice(ha, nx, H));
      double y;
      if (discrete) {
        auto logpi = [&](const std::vector<double>& z) {
          double mx = *std::max_element(z.begin(), z.end()), s = 0;
          for (double v : z) s += std::exp(v - mx);
          std::vector<double> lp(z.size());
          for (size_t a = 0; a < z.size(); ++a) lp[a] = z[a] - mx - std::log(s);
          return lp;
        };
        const auto lpn = logpi(head_next);
        const auto t1 = mlp(P, "target.q1.", q_w, false, slice(hct, nx, H));
        const auto t2 = mlp(P, "target.q2.", q_w, false, slice(hct, nx, H));
        double v = 0;
        for (int a = 0; a < A; ++a)
          v += std::exp(lpn[a]) * (std::min(t1[a], t2[a]) - alpha * lpn[a]);
        y = batch.rewards[i] + gamma * (1 - batch.terminated[i]) * v;
        const auto q1 = mlp(P, "q1.", q_w, false, slice(hc, i, H));
        const auto q2 = mlp(P, "q2.", q_w, false, slice(hc, i, H));
        const int at = static_cast<int>(batch.actions[i]);
        out.critic += 0.5 * m * (std::pow(q1[at] - y, 2) + std::pow(q2[at] - y, 2));
        const auto lp = logpi(head);
        double ex = 0, ent = 0;
        for (int a = 0; a < A; ++a) {
          ex += std::exp(lp[a]) * (alpha * lp[a] - std::min(q1[a], q2[a]));
          ent -= std::exp(lp[a]) * lp[a];
        }
        out.actor += m * ex;
        out.alpha_grad -= m * (-ent + target_entropy);
        continue;
      }
      // Box: the next action, then the TD target.
      std::vector<double> an(A);
      double logp_next = 0;
      const auto tah =
          td3 ? mlp(P, "target.actor.", head_w, false, slice(hta, nx, H)) : std::vector<double>{};
      for (int j = 0; j < A; ++j) {
        const double e = noise_next[nx * d + j];
        if (td3) {
          const double nz = std::clamp(target_noise * e, -noise_clip, noise_clip);
          an[j] = std::clamp(std::tanh(tah[j]) + nz, -1.0, 1.0);
        } else {
          const double ls = policy::squash_log_std(head_next[A + j]);
          an[j] = std::tanh(head_next[j] + std::exp(ls) * e);
          logp_next += policy::tanh_gaussian_log_prob_term(e, ls, an[j]);
        }
      }
      const double tq = std::min(mlp(P, "target.q1.", q_w, false, cat(slice(hct, nx, H), an))[0],
                                 mlp(P, "target.q2.", q_w, false, cat(slice(hct, nx, H), an))[0]);
      y = batch.rewards[i] +
          gamma * (1 - batch.terminated[i]) * (tq - (td3 ? 0 : alpha * logp_next));
      const std::vector<double> ar(batch.actions.begin() + i * A,
                                   batch.actions.begin() + (i + 1) * A);
      const double q1 = mlp(P, "q1.", q_w, false, cat(slice(hc, i, H), ar))[0];
      const double q2 = mlp(P, "q2.", q_w, false, cat(slice(hc, i, H), ar))[0];
      out.critic += 0.5 * m * (std::pow(q1 - y, 2) + std::pow(q2 - y, 2));
      std::vector<double> api(A);
      double logp = 0;
      for (int j = 0; j < A; ++j) {
        if (td3) {
          api[j] = std::tanh(head[j]);
        } else {
          const double e = noise_pi[i * d + j];
          const double ls = policy::squash_log_std(head[A + j]);
          api[j] = std::tanh(head[j] + std::exp(ls) * e);
          logp += policy::tanh_gaussian_log_prob_term(e, ls, api[j]);
        }
      }
      const double p1 = mlp(P, "q1.", q_w, false, cat(slice(hc, i, H), api))[0];
      if (td3) {
        out.actor -= m * p1;
      } else {
        const double p2 = mlp(P, "q2.", q_w, false, cat(slice(hc, i, H), api))[0];
        out.actor += m * (alpha * logp - std::min(p1, p2));
        out.alpha_grad -= m * (logp + target_entropy);
      }
    }
  return out;
}

ReplayBatch make_batch(Method method, int A, uint64_t seed) {
  Rng rng(seed);
  ReplayBatch b;
  b.L = kL, b.B = kB;
  const size_t n1 = (kL + 1) * kB, n = kL * kB;
  const int d = method == Method::kSacDiscrete ? 1 : A;
  b.obs.resize(n1 * kObs);
  for (auto& v : b.obs) v = static_cast<float>(rng.normal());
  b.actions.resize(n * d);
  for (auto& v : b.actions)
    v = method == Method::kSacDiscrete ? static_cast<float>(rng.uniform_int(A))
                                       : static_cast<float>(rng.uniform(-0.95, 0.95));
  b.rewards.resize(n);
  for (auto& v : b.rewards) v = static_cast<float>(rng.normal());
  b.terminated.assign(n, 0.0f);
  b.valid.assign(n, 1.0f);
  b.loss_mask.assign(n, 1.0f);
  b.episode_start.assign(n1, 0);
  b.length.assign(kB, kL);
  for (int k = 0; k < kBurnIn; ++k)
    for (int s = 0; s < kB; ++s) b.loss_mask[k * kB + s] = 0;  // burn-in
  // Sequence 1 ends (terminated) at k = 4: rows after are padding.
  b.terminated[4 * kB + 1] = 1;
  b.length[1] = 5;
  for (int k = 5; k < kL; ++k) b.valid[k * kB + 1] = b.loss_mask[k * kB + 1] = 0;
  // Sequence 2 starts an episode (state zeroed); sequence 0 has a reset inside.
  b.episode_start[0 * kB + 2] = 1;
  b.episode_start[3 * kB + 0] = 1;
  b.initial_state.resize(kB * 4 * kHidden);
  for (auto& v : b.initial_state) v = static_cast<float>(0.8 * rng.normal());
  return b;
}

policy::PolicySpec make_spec(Method method, int A) {
  policy::PolicySpec s;
  s.obs_dim = kObs;
  s.encoder = kEncoder;
  s.head = kHead;
  s.hidden = kHidden;
  s.activation = policy::Activation::kTanh;
  s.action_dim = A;
  if (method == Method::kSacDiscrete) {
    s.action_kind = policy::ActionKind::kDiscrete;
  } else {
    s.action_kind = policy::ActionKind::kContinuous;
    s.squash = method == Method::kTd3 ? policy::Squash::kTanh : policy::Squash::kTanhGaussian;
    s.action_low.assign(A, -2.0f);
    s.action_high.assign(A, 2.0f);
  }
  s.actor_gain = 1.0f;  // not a near-zero head: gradients of a useful size
  return s;
}

void check_method(Method method, int A) {
  const policy::PolicySpec spec = make_spec(method, A);
  agent::offpolicy::LearnerConfig cfg;
  cfg.method = method;
  cfg.gamma = 0.9f;
  cfg.init_alpha = 0.3f;
  cfg.target_entropy = method == Method::kSacDiscrete ? 0.4f : -1.5f;
  Rng init(7);
  ReplayLearner learner(spec, cfg, {}, init);
  // Targets differ from the online networks, as after some updates.
  policy::TensorMap params = learner.parameter_tensors();
  Rng jitter(11);
  for (auto& [name, t] : params)
    if (name.starts_with("target.") || name == "log_alpha")
      for (auto& v : t.data) v += static_cast<float>(0.1 * jitter.normal());
  learner.load_parameters(params);

  const ReplayBatch batch = make_batch(method, A, 3);
  Rng noise(5);
  learner.draw_noise(batch, noise);
  const std::vector<float> npi(learner.noise(0).begin(), learner.noise(0).end());
  const std::vector<float> nnext(learner.noise(1).begin(), learner.noise(1).end());
  const auto r = learner.compute_gradients(batch, true);
  const policy::TensorMap grads = learner.gradient_tensors();

  const Params P = to_double(learner.parameter_tensors());
  auto ref = [&](const Params& p) {
    return reference(method, p, batch, A, npi, nnext, cfg.gamma, cfg.target_entropy,
                     cfg.target_noise, cfg.target_noise_clip);
  };
  const Losses base = ref(P);
  CHECK(r.critic_loss == doctest::Approx(base.critic).epsilon(2e-4));
  CHECK(r.actor_loss == doctest::Approx(base.actor).epsilon(2e-4));
  if (method != Method::kTd3)
    CHECK(grads.at("log_alpha").data[0] == doctest::Approx(base.alpha_grad).epsilon(2e-4));

  // Finite differences: the critic loss for the critic's parameters, the actor loss for the
  // actor's (y and the critic's features are constants of the actor's loss).
  int checked = 0;
  for (const auto& [name, g] : grads) {
    if (name == "log_alpha") continue;
    const bool critic =
        name.starts_with("critic_") || name.starts_with("q1.") || name.starts_with("q2.");
    double err = 0, scale = 0;
    for (size_t i = 0; i < g.data.size(); ++i) {
      Params p = P;
      const double h = 1e-5;
      p[name][i] += h;
      const Losses up = ref(p);
      p[name][i] -= 2 * h;
      const Losses down = ref(p);
      const double fd =
          critic ? (up.critic - down.critic) / (2 * h) : (up.actor - down.actor) / (2 * h);
      err = std::max(err, std::abs(fd - g.data[i]));
      scale = std::max(scale, std::abs(fd));
      ++checked;
    }
    INFO(name << ": max |fd - grad| " << err << " at scale " << scale);
    CHECK(err <= 1e-3 * std::max(scale, 1e-2));
  }
  CHECK(checked > 200);
}

}  // namespace

TEST_CASE("recurrent SAC's losses and gradients match a double-precision reference") {
  check_method(Method::kSac, 2);
}

TEST_CASE("discrete SAC's losses and gradients match a double-precision reference") {
  check_method(Method::kSacDiscrete, 3);
}

TEST_CASE("TD3's losses and gradients match a double-precision reference") {
  check_method(Method::kTd3, 2);
}

TEST_CASE("burn-in and padding rows carry no gradient") {
  for (const Method method : {Method::kSac, Method::kSacDiscrete, Method::kTd3}) {
    const int A = method == Method::kSacDiscrete ? 3 : 2;
    const policy::PolicySpec spec = make_spec(method, A);
    agent::offpolicy::LearnerConfig cfg;
    cfg.method = method;
    Rng init(1);
    ReplayLearner learner(spec, cfg, {}, init);
    ReplayBatch batch = make_batch(method, A, 9);
    Rng noise(2);
    learner.draw_noise(batch, noise);
    learner.compute_gradients(batch, true);
    const policy::TensorMap before = learner.gradient_tensors();
    // What a masked row holds (its action, reward, termination) must not matter.
    const int d = method == Method::kSacDiscrete ? 1 : A;
    for (int k = 0; k < kL; ++k)
      for (int b = 0; b < kB; ++b) {
        const size_t i = static_cast<size_t>(k) * kB + b;
        if (batch.loss_mask[i] != 0) continue;
        batch.rewards[i] += 100;
        batch.terminated[i] = 1 - batch.terminated[i];
        for (int j = 0; j < d; ++j)
          batch.actions[i * d + j] = method == Method::kSacDiscrete
                                         ? float((int(batch.actions[i * d + j]) + 1) % A)
                                         : -batch.actions[i * d + j];
      }
    learner.compute_gradients(batch, true);
    const policy::TensorMap after = learner.gradient_tensors();
    for (const auto& [name, t] : before) {
      INFO(name);
      CHECK(t.data == after.at(name).data);
    }
  }
}

// Two learner threads run the towers two at a time; they share no data, so every parameter after
// several updates (TD3: delayed and not) must equal the one-thread learner's bit for bit.
TEST_CASE("two learner threads give bitwise the updates of one") {
  for (const Method method : {Method::kSac, Method::kSacDiscrete, Method::kTd3}) {
    const int A = method == Method::kSacDiscrete ? 3 : 2;
    const policy::PolicySpec spec = make_spec(method, A);
    agent::offpolicy::LearnerConfig cfg;
    cfg.method = method;
    cfg.policy_delay = 2;
    Rng init1(1), init2(1);
    ReplayLearner one(spec, cfg, {}, init1, 1), two(spec, cfg, {}, init2, 2);
    const ReplayBatch batch = make_batch(method, A, 9);
    Rng rng1(2), rng2(2);
    for (int u = 0; u < 3; ++u) {
      const auto r1 = one.update(batch, rng1);
      const auto r2 = two.update(batch, rng2);
      CHECK(r1.critic_loss == r2.critic_loss);
      CHECK(r1.actor_loss == r2.actor_loss);
      CHECK(r1.actor_updated == r2.actor_updated);
    }
    const policy::TensorMap p1 = one.state_tensors(), p2 = two.state_tensors();
    REQUIRE(p1.size() == p2.size());
    for (const auto& [name, t] : p1) {
      INFO(name);
      CHECK(t.data == p2.at(name).data);
    }
  }
}

// A one-step bandit through the whole update (noise, optimizers, targets): reward -(a - 0.5)^2
// with gamma 0. The critic learns it and the actor's deterministic action moves to 0.5.
TEST_CASE("SAC and TD3 learn a one-step bandit") {
  for (const Method method : {Method::kSac, Method::kTd3}) {
    policy::PolicySpec spec = make_spec(method, 1);
    spec.actor_gain = 0.01f;
    spec.head = {32};  // a critic that can fit the parabola
    spec.hidden = 16;
    spec.activation = policy::Activation::kRelu;
    agent::offpolicy::LearnerConfig cfg;
    cfg.method = method;
    cfg.gamma = 0.0f;
    cfg.actor_lr = cfg.critic_lr = 3e-3f;
    cfg.init_alpha = 0.01f;
    cfg.auto_alpha = false;
    cfg.policy_delay = 1;
    Rng init(1), rng(2), data(3);
    ReplayLearner learner(spec, cfg, {}, init);
    ReplayBatch b = make_batch(method, 1, 4);
    std::fill(b.loss_mask.begin(), b.loss_mask.end(), 1.0f);
    std::fill(b.terminated.begin(), b.terminated.end(), 0.0f);
    b.initial_state.clear();  // zero state
    double final_mean = 0;
    for (int it = 0; it < 800; ++it) {
      for (size_t i = 0; i < b.actions.size(); ++i) {
        b.actions[i] = static_cast<float>(data.uniform(-1, 1));
        b.rewards[i] = -(b.actions[i] - 0.5f) * (b.actions[i] - 0.5f);
      }
      learner.update(b, rng);
    }
    // The deterministic action of the actor on the batch's observations: tanh(mean).
    const auto p = learner.actor_tensors();
    policy::PolicySpec acting = spec;
    policy::PolicyActor actor(acting, kB);
    Rng pi(7);
    policy::TensorMap all = policy::init_policy(acting, pi);
    for (auto& [k, v] : p) all[k] = v;
    actor.load(all);
    std::vector<float> act(kB), lp(kB), val(kB);
    std::vector<uint8_t> start(kB, 1);
    std::vector<float> obs(b.obs.begin(), b.obs.begin() + kB * kObs);
    actor.act(obs, start, pi, true, act, lp, val);
    for (const float a : act) final_mean += policy::from_env_action(a, -2.0f, 2.0f) / kB;
    INFO("method " << static_cast<int>(method) << ": mean deterministic action " << final_mean);
    CHECK(final_mean == doctest::Approx(0.5).epsilon(0.2));
  }
}

#ifdef RECUR_WITH_CUDA
// The replay learner with its towers' cores on cuDNN (device.learner: cuda; the heads, losses and
// optimizers stay on the host) against the CPU learner: from the same parameters and noise, the
// losses and every gradient (float32 both sides, cuDNN's FMA math vs Eigen, summation orders
// differ: 1e-4 relative per tensor), then three whole updates (1e-4 relative per parameter
// tensor). Recurrent SAC, discrete SAC and TD3. Never run on a GPU before this test.
TEST_CASE("the replay learner on cuDNN gives the CPU learner's gradients and updates") {
  if (!test::gpu_or_skip("replay learner on cuDNN")) return;
  policy::Placement cuda;
  cuda.device = policy::Device::kCuda;
  for (const Method method : {Method::kSac, Method::kSacDiscrete, Method::kTd3}) {
    CAPTURE(static_cast<int>(method));
    const int A = method == Method::kSacDiscrete ? 3 : 2;
    const policy::PolicySpec spec = make_spec(method, A);
    agent::offpolicy::LearnerConfig cfg;
    cfg.method = method;
    cfg.policy_delay = 1;  // TD3's actor every update: its gradient is compared too
    Rng init1(1), init2(1);
    ReplayLearner cpu(spec, cfg, {}, init1, 1), gpu(spec, cfg, cuda, init2, 1);
    const ReplayBatch batch = make_batch(method, A, 11);
    Rng n1(3), n2(3);
    cpu.draw_noise(batch, n1);
    gpu.draw_noise(batch, n2);
    const auto rc = cpu.compute_gradients(batch, true);
    const auto rg = gpu.compute_gradients(batch, true);
    CHECK(std::abs(rg.critic_loss - rc.critic_loss) <=
          1e-4 * std::max(1.0, std::abs(rc.critic_loss)));
    CHECK(std::abs(rg.actor_loss - rc.actor_loss) <= 1e-4 * std::max(1.0, std::abs(rc.actor_loss)));
    const policy::TensorMap gc = cpu.gradient_tensors(), gg = gpu.gradient_tensors();
    REQUIRE(gc.size() == gg.size());
    for (const auto& [name, t] : gc) {
      INFO(name);
      CHECK(test::rel_err(gg.at(name).data, t.data) <= 1e-4);
    }
    Rng u1(4), u2(4);
    for (int u = 0; u < 3; ++u) {
      cpu.update(batch, u1);
      gpu.update(batch, u2);
    }
    const policy::TensorMap pc = cpu.parameter_tensors(), pg = gpu.parameter_tensors();
    for (const auto& [name, t] : pc) {
      INFO(name);
      CHECK(test::rel_err(pg.at(name).data, t.data) <= 1e-4);
    }
  }
}
#endif
