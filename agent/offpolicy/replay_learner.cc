#include "agent/offpolicy/replay_learner.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "agent/algorithm.h"
#include "core/error.h"
#include "policy/squashed_action.h"

namespace recur::agent::offpolicy {

using policy::AlignedVector;
using policy::Mlp;
using policy::MlpSpec;
using policy::TensorMap;

namespace {

// A Q head: [h (, a)] -> widths of policy.head -> 1 (Box) or n (Discrete), nn.Linear's init.
MlpSpec q_head_spec(const policy::PolicySpec& spec, bool discrete) {
  MlpSpec s;
  s.widths = {spec.hidden + (discrete ? 0 : spec.action_dim)};
  s.widths.insert(s.widths.end(), spec.head.begin(), spec.head.end());
  s.widths.push_back(discrete ? spec.action_dim : 1);
  s.activation = spec.activation;
  s.activate_output = false;
  s.init = policy::InitScheme::kPyTorch;
  s.output_gain = 1.0f;
  return s;
}

double masked_sum(std::span<const float> mask) {
  double s = 0;
  for (const float m : mask) s += m;
  return s;
}

bool all_finite(std::span<const float> v) {
  for (const float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// Rows of a (rows, width) buffer starting at row `first`.
std::span<const float> rows(std::span<const float> v, size_t first, size_t count, size_t width) {
  return v.subspan(first * width, count * width);
}
std::span<float> rows_mut(std::span<float> v, size_t first, size_t count, size_t width) {
  return v.subspan(first * width, count * width);
}

}  // namespace

struct ReplayLearner::Nets {
  Nets(const policy::PolicySpec& spec, bool td3, const policy::Placement& placement)
      : encoder_spec(spec.encoder_spec()),
        actor(spec.encoder.empty() ? nullptr : &encoder_spec, spec.core_spec(), placement),
        critic(spec.encoder.empty() ? nullptr : &encoder_spec, spec.core_spec(), placement),
        target_critic(spec.encoder.empty() ? nullptr : &encoder_spec, spec.core_spec(), placement),
        actor_head(spec.actor_head_spec()),
        q1(q_head_spec(spec, spec.action_kind == policy::ActionKind::kDiscrete)),
        q2(q1.spec()),
        tq1(q1.spec()),
        tq2(q1.spec()) {
    if (td3) {
      target_actor = std::make_unique<RecurrentTower>(
          spec.encoder.empty() ? nullptr : &encoder_spec, spec.core_spec(), placement);
      target_actor_head = std::make_unique<Mlp>(spec.actor_head_spec());
    }
  }
  MlpSpec encoder_spec;
  RecurrentTower actor, critic, target_critic;
  std::unique_ptr<RecurrentTower> target_actor;  // TD3
  Mlp actor_head;
  std::unique_ptr<Mlp> target_actor_head;  // TD3
  Mlp q1, q2, tq1, tq2;
};

ReplayLearner::ReplayLearner(const policy::PolicySpec& spec, const LearnerConfig& config,
                             const policy::Placement& placement, Rng& init_rng, int threads)
    : spec_(spec), config_(config) {
  RECUR_CHECK_ARG(threads >= 1, "ReplayLearner: threads {} must be >= 1", threads);
  // Host towers only: a cuDNN core drives its own stream from the calling thread.
  if (threads >= 2 && placement.device == policy::Device::kCpu)
    pool_ = std::make_unique<WorkerPool>(2);
  const bool discrete = spec.action_kind == policy::ActionKind::kDiscrete;
  RECUR_CHECK(discrete == (config.method == Method::kSacDiscrete),
              "the replay learner's method does not fit the policy's {} actions",
              discrete ? "Discrete" : "Box");
  RECUR_CHECK(
      discrete || spec.squash == (config.method == Method::kTd3 ? policy::Squash::kTanh
                                                                : policy::Squash::kTanhGaussian),
      "the replay learner needs a tanh-squashed actor head (SAC: tanh_gaussian, TD3: tanh)");
  d_ = discrete ? 1 : spec.action_dim;
  width_ = spec.actor_head_spec().output();
  nets_ = std::make_unique<Nets>(spec, config.method == Method::kTd3, placement);
  // The actor and the critic tower from the policy's own initializer (separate cores), the Q
  // heads with nn.Linear's default; every target starts as a copy.
  policy::PolicySpec both = spec;
  both.shared_core = false;
  const TensorMap init = policy::init_policy(both, init_rng);
  Nets& n = *nets_;
  n.actor.load(init, "");
  n.actor_head.load_tensors(init, "actor.");
  n.critic.load(init, "critic_");
  n.target_critic.load(init, "critic_");
  n.q1.init(init_rng);
  n.q2.init(init_rng);
  std::copy(n.q1.parameters().begin(), n.q1.parameters().end(), n.tq1.parameters().begin());
  std::copy(n.q2.parameters().begin(), n.q2.parameters().end(), n.tq2.parameters().begin());
  if (n.target_actor) {
    n.target_actor->load(init, "");
    n.target_actor_head->load_tensors(init, "actor.");
  }
  log_alpha_.assign(1, std::log(config.init_alpha));
  log_alpha_grad_.assign(1, 0.0f);
  AdamConfig adam;
  adam.eps = config.adam_eps;
  // The groups' spans stay valid: no parameter buffer is ever reallocated.
  n.actor.append_groups(actor_groups_, "actor");
  actor_groups_.push_back(
      {"actor.head", n.actor_head.parameters(), n.actor_head.gradients(), nullptr});
  n.critic.append_groups(critic_groups_, "critic");
  critic_groups_.push_back({"q1", n.q1.parameters(), n.q1.gradients(), nullptr});
  critic_groups_.push_back({"q2", n.q2.parameters(), n.q2.gradients(), nullptr});
  alpha_groups_.push_back({"log_alpha", log_alpha_, log_alpha_grad_, nullptr});
  actor_opt_ = std::make_unique<Adam>(actor_groups_, adam);
  critic_opt_ = std::make_unique<Adam>(critic_groups_, adam);
  alpha_opt_ = std::make_unique<Adam>(alpha_groups_, adam);
}

ReplayLearner::~ReplayLearner() = default;

void ReplayLearner::run_jobs(int count, const std::function<void(int)>& fn) {
  if (pool_) {
    pool_->run(count, fn);
  } else {
    for (int i = 0; i < count; ++i) fn(i);
  }
}

int ReplayLearner::state_size() const {
  return nets_->actor.state_size() + nets_->critic.state_size();
}

double ReplayLearner::alpha() const {
  return std::exp(static_cast<double>(log_alpha_[0]));
}

void ReplayLearner::set_alpha(double alpha) {
  RECUR_CHECK(alpha > 0 && std::isfinite(alpha), "SAC temperature {}: use a finite value > 0",
              alpha);
  log_alpha_[0] = static_cast<float>(std::log(alpha));
}

void ReplayLearner::size_buffers(int L, int B) {
  if (L == L_ && B == B_) return;
  L_ = L, B_ = B;
  const auto n1 = static_cast<size_t>(L + 1) * B, n = static_cast<size_t>(L) * B;
  const auto H = static_cast<size_t>(spec_.hidden);
  const bool discrete = config_.method == Method::kSacDiscrete;
  const size_t q_in = discrete ? H : H + d_;
  const size_t q_out = discrete ? static_cast<size_t>(spec_.action_dim) : 1;
  state_a_.assign(static_cast<size_t>(B) * nets_->actor.state_size(), 0.0f);
  state_c_.assign(static_cast<size_t>(B) * nets_->critic.state_size(), 0.0f);
  noise_pi_.assign(n1 * d_, 0.0f);
  noise_next_.assign(n1 * d_, 0.0f);
  head_.assign(n1 * width_, 0.0f);
  target_head_.assign(n1 * width_, 0.0f);
  d_head_.assign(n1 * width_, 0.0f);
  y_.assign(n, 0.0f);
  qin_.assign(n * q_in, 0.0f);
  dqin_.assign(n * q_in, 0.0f);
  for (auto* v : {&q1_, &q2_, &dq1_, &dq2_}) v->assign(n * q_out, 0.0f);
  act_.assign(n1 * (discrete ? spec_.action_dim : d_), 0.0f);
  logp_.assign(n1 * (discrete ? spec_.action_dim : 1), 0.0f);
  d_hc_.assign(n1 * H, 0.0f);
  d_ha_.assign(n1 * H, 0.0f);
  Nets& nets = *nets_;
  for (Mlp* m : {&nets.actor_head, &nets.q1, &nets.q2, &nets.tq1, &nets.tq2})
    m->reserve(static_cast<int>(n1));
  if (nets.target_actor_head) nets.target_actor_head->reserve(static_cast<int>(n1));
}

void ReplayLearner::draw_noise(const ReplayBatch& batch, Rng& rng) {
  size_buffers(batch.L, batch.B);
  if (config_.method == Method::kSacDiscrete) return;  // exact expectations: no samples
  for (auto& e : noise_pi_) e = static_cast<float>(rng.normal());
  for (auto& e : noise_next_) e = static_cast<float>(rng.normal());
}

void ReplayLearner::split_states(const ReplayBatch& batch) {
  const auto sa = static_cast<size_t>(nets_->actor.state_size());
  const auto sc = static_cast<size_t>(nets_->critic.state_size());
  if (batch.initial_state.empty()) {  // zero-state sampling
    std::fill(state_a_.begin(), state_a_.end(), 0.0f);
    std::fill(state_c_.begin(), state_c_.end(), 0.0f);
    return;
  }
  RECUR_CHECK_ARG(batch.initial_state.size() == static_cast<size_t>(batch.B) * (sa + sc),
                  "replay batch: {} floats of initial state for {} sequences; the learner needs "
                  "{} per sequence (actor core {} + critic core {})",
                  batch.initial_state.size(), batch.B, sa + sc, sa, sc);
  for (size_t b = 0; b < static_cast<size_t>(batch.B); ++b) {
    const float* src = batch.initial_state.data() + b * (sa + sc);
    std::copy(src, src + sa, state_a_.begin() + static_cast<std::ptrdiff_t>(b * sa));
    std::copy(src + sa, src + sa + sc, state_c_.begin() + static_cast<std::ptrdiff_t>(b * sc));
  }
}

UpdateReport ReplayLearner::compute_gradients(const ReplayBatch& batch, bool with_actor) {
  RECUR_CHECK_ARG(batch.L >= 1 && batch.B >= 1, "replay batch: empty ({} x {})", batch.L, batch.B);
  size_buffers(batch.L, batch.B);
  Nets& n = *nets_;
  n.actor.zero_gradients();
  n.actor_head.zero_gradients();
  n.critic.zero_gradients();
  n.q1.zero_gradients();
  n.q2.zero_gradients();
  log_alpha_grad_[0] = 0;
  split_states(batch);
  const int L1 = batch.L + 1, B = batch.B;
  const auto n1 = static_cast<size_t>(L1) * B;
  // The towers over all L+1 rows; the target critic (and TD3's target actor) too. TD3 reads its
  // online actor only in the delayed actor pass. Each job writes its own buffers only.
  const bool td3 = config_.method == Method::kTd3;
  const auto forward_job = [&](int job) {
    switch (job) {
      case 0:
        n.critic.forward(L1, B, batch.obs, batch.episode_start, state_c_);
        break;
      case 1:
        n.target_critic.forward(L1, B, batch.obs, batch.episode_start, state_c_);
        break;
      case 2:
        if (!td3 || with_actor) {
          n.actor.forward(L1, B, batch.obs, batch.episode_start, state_a_);
          n.actor_head.forward(static_cast<int>(n1), n.actor.y(), head_);
        }
        break;
      default:
        n.target_actor->forward(L1, B, batch.obs, batch.episode_start, state_a_);
        n.target_actor_head->forward(static_cast<int>(n1), n.target_actor->y(), target_head_);
    }
  };
  run_jobs(n.target_actor ? 4 : 3, forward_job);
  UpdateReport r;
  r.alpha = alpha();
  // The actor pass runs the Q heads first on the policy's actions (only their input gradient is
  // used; the parameter gradients it leaves are cleared), then the critic pass on the replayed
  // actions: so one forward's activations are never overwritten before their backward.
  std::fill(d_head_.begin(), d_head_.end(), 0.0f);
  if (config_.method == Method::kSacDiscrete) {
    discrete_targets(batch);
    discrete_critic_pass(batch, r);  // also the actor's gradient (the same Q forward)
    if (with_actor) discrete_actor_pass(batch, r);
  } else {
    continuous_targets(batch);
    if (with_actor) {
      config_.method == Method::kTd3 ? td3_actor_pass(batch, r) : sac_actor_pass(batch, r);
      n.q1.zero_gradients();
      n.q2.zero_gradients();
    }
    critic_pass(batch, r);
  }
  // The critic tower's backward (d_hc_ from the critic pass) beside the actor's.
  run_jobs(with_actor ? 2 : 1, [&](int job) {
    if (job == 0) {
      n.critic.backward(d_hc_);
    } else {
      n.actor_head.backward(d_head_, d_ha_);
      n.actor.backward(d_ha_);
    }
  });
  r.actor_updated = with_actor;
  return r;
}

// SAC: a'_{k+1} sampled from the current actor at row k+1; TD3: the target actor's smoothed
// action. y_k from the target Q heads at row k+1.
void ReplayLearner::continuous_targets(const ReplayBatch& batch) {
  Nets& n = *nets_;
  const int L = batch.L, B = batch.B, d = d_;
  const auto nb = static_cast<size_t>(L) * B, H = static_cast<size_t>(spec_.hidden);
  const size_t w = H + d;
  const bool td3 = config_.method == Method::kTd3;
  const float alpha = static_cast<float>(this->alpha());
  const std::span<const float> hc_next = rows(n.target_critic.y(), B, nb, H);
  for (size_t i = 0; i < nb; ++i) {
    const size_t row = i + B;  // the next observation's row
    float* q = qin_.data() + i * w;
    std::copy_n(hc_next.data() + i * H, H, q);
    double logp = 0;
    for (int j = 0; j < d; ++j) {
      float a;
      if (td3) {
        const float mean = target_head_[row * width_ + j];
        const float noise = std::clamp(config_.target_noise * noise_next_[row * d + j],
                                       -config_.target_noise_clip, config_.target_noise_clip);
        a = std::clamp(std::tanh(mean) + noise, -1.0f, 1.0f);
      } else {
        const float mean = head_[row * width_ + j];
        const float log_std = policy::squash_log_std(head_[row * width_ + d + j]);
        const float eps = noise_next_[row * d + j];
        a = std::tanh(mean + std::exp(log_std) * eps);
        logp += policy::tanh_gaussian_log_prob_term(eps, log_std, a);
      }
      q[H + j] = a;
    }
    logp_[i] = static_cast<float>(logp);
  }
  n.tq1.forward(static_cast<int>(nb), rows(qin_, 0, nb, w), q1_);
  n.tq2.forward(static_cast<int>(nb), rows(qin_, 0, nb, w), q2_);
  for (size_t i = 0; i < nb; ++i) {
    float v = std::min(q1_[i], q2_[i]);
    if (!td3) v -= alpha * logp_[i];
    y_[i] = batch.rewards[i] + config_.gamma * (1.0f - batch.terminated[i]) * v;
  }
}

void ReplayLearner::sac_actor_pass(const ReplayBatch& batch, UpdateReport& r) {
  Nets& n = *nets_;
  const int L = batch.L, B = batch.B, d = d_;
  const auto nb = static_cast<size_t>(L) * B, H = static_cast<size_t>(spec_.hidden);
  const size_t w = H + d;
  const double msum = std::max(1.0, masked_sum(batch.loss_mask));
  const float alpha = static_cast<float>(this->alpha());
  const std::span<const float> hc = n.critic.y();
  for (size_t i = 0; i < nb; ++i) {
    float* q = qin_.data() + i * w;
    std::copy_n(hc.data() + i * H, H, q);
    double logp = 0;
    for (int j = 0; j < d; ++j) {
      const float log_std = policy::squash_log_std(head_[i * width_ + d + j]);
      const float eps = noise_pi_[i * d + j];
      const float a = std::tanh(head_[i * width_ + j] + std::exp(log_std) * eps);
      act_[i * d + j] = a;
      q[H + j] = a;
      logp += policy::tanh_gaussian_log_prob_term(eps, log_std, a);
    }
    logp_[i] = static_cast<float>(logp);
  }
  n.q1.forward(static_cast<int>(nb), rows(qin_, 0, nb, w), q1_);
  n.q2.forward(static_cast<int>(nb), rows(qin_, 0, nb, w), q2_);
  double loss = 0, alpha_grad = 0, entropy = 0;
  for (size_t i = 0; i < nb; ++i) {
    const float m = batch.loss_mask[i];
    const bool first = q1_[i] <= q2_[i];
    loss += m * (alpha * logp_[i] - std::min(q1_[i], q2_[i]));
    entropy -= m * logp_[i];
    alpha_grad -= m * (logp_[i] + config_.target_entropy);
    dq1_[i] = first ? static_cast<float>(-m / msum) : 0.0f;
    dq2_[i] = first ? 0.0f : static_cast<float>(-m / msum);
  }
  r.actor_loss = loss / msum;
  r.entropy = entropy / msum;
  if (config_.auto_alpha) {
    log_alpha_grad_[0] = static_cast<float>(alpha_grad / msum);
    r.alpha_loss = -static_cast<double>(log_alpha_[0]) * (-alpha_grad / msum);
  }
  // dL/da from the Q heads (their parameter gradients are cleared by the caller).
  std::span<float> da1 = rows_mut(dqin_, 0, nb, w), da2 = da1;  // reused in turn
  n.q1.backward(rows(dq1_, 0, nb, 1), da1);
  for (size_t i = 0; i < nb; ++i)
    for (int j = 0; j < d; ++j) d_head_[i * width_ + j] = dqin_[i * w + H + j];  // stash dQ1/da
  n.q2.backward(rows(dq2_, 0, nb, 1), da2);
  for (size_t i = 0; i < nb; ++i) {
    const float m = batch.loss_mask[i];
    const auto g_logp = static_cast<float>(alpha * m / msum);
    for (int j = 0; j < d; ++j) {
      const float raw = head_[i * width_ + d + j];
      const float log_std = policy::squash_log_std(raw);
      const float stdv = std::exp(log_std);
      const float eps = noise_pi_[i * d + j];
      const float a = act_[i * d + j];
      const float g_a = d_head_[i * width_ + j] + dqin_[i * w + H + j];
      const float one_minus = 1.0f - a * a;
      const float g_u =
          g_a * one_minus + g_logp * 2.0f * a * one_minus / (one_minus + policy::kTanhEps);
      d_head_[i * width_ + j] = g_u;
      d_head_[i * width_ + d + j] = (g_u * stdv * eps - g_logp) * policy::squash_log_std_grad(raw);
    }
  }
}

void ReplayLearner::td3_actor_pass(const ReplayBatch& batch, UpdateReport& r) {
  Nets& n = *nets_;
  const int L = batch.L, B = batch.B, d = d_;
  const auto nb = static_cast<size_t>(L) * B, H = static_cast<size_t>(spec_.hidden);
  const size_t w = H + d;
  const double msum = std::max(1.0, masked_sum(batch.loss_mask));
  const std::span<const float> hc = n.critic.y();
  for (size_t i = 0; i < nb; ++i) {
    float* q = qin_.data() + i * w;
    std::copy_n(hc.data() + i * H, H, q);
    for (int j = 0; j < d; ++j) q[H + j] = act_[i * d + j] = std::tanh(head_[i * width_ + j]);
  }
  n.q1.forward(static_cast<int>(nb), rows(qin_, 0, nb, w), q1_);
  double loss = 0;
  for (size_t i = 0; i < nb; ++i) {
    loss -= batch.loss_mask[i] * q1_[i];
    dq1_[i] = static_cast<float>(-batch.loss_mask[i] / msum);
  }
  r.actor_loss = loss / msum;
  n.q1.backward(rows(dq1_, 0, nb, 1), rows_mut(dqin_, 0, nb, w));
  for (size_t i = 0; i < nb; ++i)
    for (int j = 0; j < d; ++j) {
      const float a = act_[i * d + j];
      d_head_[i * width_ + j] = dqin_[i * w + H + j] * (1.0f - a * a);
    }
}

// Leaves the critic tower's output gradient in d_hc_ (compute_gradients runs its backward).
void ReplayLearner::critic_pass(const ReplayBatch& batch, UpdateReport& r) {
  Nets& n = *nets_;
  const int L = batch.L, B = batch.B, d = d_;
  const auto nb = static_cast<size_t>(L) * B, H = static_cast<size_t>(spec_.hidden);
  const size_t w = H + d;
  const double msum = std::max(1.0, masked_sum(batch.loss_mask));
  const std::span<const float> hc = n.critic.y();
  for (size_t i = 0; i < nb; ++i) {
    float* q = qin_.data() + i * w;
    std::copy_n(hc.data() + i * H, H, q);
    std::copy_n(batch.actions.data() + i * d, d, q + H);
  }
  n.q1.forward(static_cast<int>(nb), rows(qin_, 0, nb, w), q1_);
  n.q2.forward(static_cast<int>(nb), rows(qin_, 0, nb, w), q2_);
  double loss = 0, qsum = 0;
  for (size_t i = 0; i < nb; ++i) {
    const float m = batch.loss_mask[i];
    const float e1 = q1_[i] - y_[i], e2 = q2_[i] - y_[i];
    loss += 0.5 * m * (double{e1} * e1 + double{e2} * e2);
    qsum += m * q1_[i];
    dq1_[i] = static_cast<float>(m * e1 / msum);
    dq2_[i] = static_cast<float>(m * e2 / msum);
  }
  r.critic_loss = loss / msum;
  r.q_mean = qsum / msum;
  std::fill(d_hc_.begin(), d_hc_.end(), 0.0f);
  for (Mlp* q : {&n.q1, &n.q2}) {
    q->backward(rows(q == &n.q1 ? dq1_ : dq2_, 0, nb, 1), rows_mut(dqin_, 0, nb, w));
    for (size_t i = 0; i < nb; ++i)
      for (size_t h = 0; h < H; ++h) d_hc_[i * H + h] += dqin_[i * w + h];
  }
}

// Discrete SAC: pi and log pi at every row from the logits (log-softmax).
void ReplayLearner::discrete_targets(const ReplayBatch& batch) {
  Nets& n = *nets_;
  const int L = batch.L, B = batch.B, A = spec_.action_dim;
  const auto n1 = static_cast<size_t>(L + 1) * B, nb = static_cast<size_t>(L) * B;
  const auto H = static_cast<size_t>(spec_.hidden);
  for (size_t i = 0; i < n1; ++i) {
    const float* z = head_.data() + i * A;
    const float zmax = *std::max_element(z, z + A);
    double s = 0;
    for (int a = 0; a < A; ++a) s += std::exp(double{z[a]} - zmax);
    const double lse = zmax + std::log(s);
    for (int a = 0; a < A; ++a) {
      logp_[i * A + a] = static_cast<float>(z[a] - lse);
      act_[i * A + a] = static_cast<float>(std::exp(z[a] - lse));
    }
  }
  n.tq1.forward(static_cast<int>(nb), rows(n.target_critic.y(), B, nb, H), q1_);
  n.tq2.forward(static_cast<int>(nb), rows(n.target_critic.y(), B, nb, H), q2_);
  const float alpha = static_cast<float>(this->alpha());
  for (size_t i = 0; i < nb; ++i) {
    const size_t row = i + B;
    double v = 0;
    for (int a = 0; a < A; ++a) {
      const size_t k = i * A + a;
      v += act_[row * A + a] * (std::min(q1_[k], q2_[k]) - alpha * logp_[row * A + a]);
    }
    y_[i] = batch.rewards[i] + config_.gamma * (1.0f - batch.terminated[i]) * static_cast<float>(v);
  }
}

// As critic_pass: the critic tower's output gradient goes to d_hc_.
void ReplayLearner::discrete_critic_pass(const ReplayBatch& batch, UpdateReport& r) {
  Nets& n = *nets_;
  const int L = batch.L, B = batch.B, A = spec_.action_dim;
  const auto nb = static_cast<size_t>(L) * B, H = static_cast<size_t>(spec_.hidden);
  const double msum = std::max(1.0, masked_sum(batch.loss_mask));
  n.q1.forward(static_cast<int>(nb), rows(n.critic.y(), 0, nb, H), q1_);
  n.q2.forward(static_cast<int>(nb), rows(n.critic.y(), 0, nb, H), q2_);
  double loss = 0, qsum = 0;
  std::fill(dq1_.begin(), dq1_.end(), 0.0f);
  std::fill(dq2_.begin(), dq2_.end(), 0.0f);
  for (size_t i = 0; i < nb; ++i) {
    const float m = batch.loss_mask[i];
    const int a = std::clamp(static_cast<int>(batch.actions[i]), 0, A - 1);
    const size_t k = i * A + a;
    const float e1 = q1_[k] - y_[i], e2 = q2_[k] - y_[i];
    loss += 0.5 * m * (double{e1} * e1 + double{e2} * e2);
    qsum += m * q1_[k];
    dq1_[k] = static_cast<float>(m * e1 / msum);
    dq2_[k] = static_cast<float>(m * e2 / msum);
  }
  r.critic_loss = loss / msum;
  r.q_mean = qsum / msum;
  std::fill(d_hc_.begin(), d_hc_.end(), 0.0f);
  n.q1.backward(dq1_, rows_mut(dqin_, 0, nb, H));
  for (size_t i = 0; i < nb * H; ++i) d_hc_[i] += dqin_[i];
  n.q2.backward(dq2_, rows_mut(dqin_, 0, nb, H));
  for (size_t i = 0; i < nb * H; ++i) d_hc_[i] += dqin_[i];
}

// Uses the online Q values of the critic pass (held fixed: no gradient reaches the critic).
void ReplayLearner::discrete_actor_pass(const ReplayBatch& batch, UpdateReport& r) {
  const int L = batch.L, B = batch.B, A = spec_.action_dim;
  const auto nb = static_cast<size_t>(L) * B;
  const double msum = std::max(1.0, masked_sum(batch.loss_mask));
  const float alpha = static_cast<float>(this->alpha());
  double loss = 0, alpha_grad = 0, entropy = 0;
  for (size_t i = 0; i < nb; ++i) {
    const float m = batch.loss_mask[i];
    double expected = 0, ent = 0;
    for (int a = 0; a < A; ++a) {
      const size_t k = i * A + a;
      const double f = alpha * logp_[k] - std::min(q1_[k], q2_[k]);
      expected += act_[k] * f;
      ent -= act_[k] * logp_[k];
    }
    for (int a = 0; a < A; ++a) {
      const size_t k = i * A + a;
      const double f = alpha * logp_[k] - std::min(q1_[k], q2_[k]);
      d_head_[i * A + a] = static_cast<float>(m / msum * act_[k] * (f - expected));
    }
    loss += m * expected;
    entropy += m * ent;
    alpha_grad -= m * (-ent + config_.target_entropy);
  }
  r.actor_loss = loss / msum;
  r.entropy = entropy / msum;
  if (config_.auto_alpha) {
    log_alpha_grad_[0] = static_cast<float>(alpha_grad / msum);
    r.alpha_loss = -static_cast<double>(log_alpha_[0]) * (-alpha_grad / msum);
  }
}

void ReplayLearner::check_finite(const UpdateReport& r, bool with_actor) const {
  const Nets& n = *nets_;
  const char* bad = nullptr;
  if (!std::isfinite(r.critic_loss))
    bad = "critic loss";
  else if (with_actor && !std::isfinite(r.actor_loss))
    bad = "actor loss";
  else if (!all_finite(n.q1.gradients()) || !all_finite(n.q2.gradients()))
    bad = "Q-head gradient";
  else if (with_actor && !all_finite(n.actor_head.gradients()))
    bad = "actor-head gradient";
  else if (!std::isfinite(log_alpha_grad_[0]))
    bad = "temperature gradient";
  if (bad)
    throw NonFiniteUpdate(
        fmt::format("update {}: the {} is not finite (critic loss {}, actor "
                    "loss {}, alpha {})",
                    updates_ + 1, bad, r.critic_loss, r.actor_loss, r.alpha));
}

UpdateReport ReplayLearner::update(const ReplayBatch& batch, Rng& rng) {
  draw_noise(batch, rng);
  const bool with_actor =
      config_.method != Method::kTd3 || (updates_ + 1) % config_.policy_delay == 0;
  UpdateReport r = compute_gradients(batch, with_actor);
  check_finite(r, with_actor);
  const auto& critic = critic_groups_;
  const auto& actor = actor_groups_;
  const auto guard = [&](const std::vector<policy::ParamGroup>& g, const char* what) {
    const double norm =
        config_.max_grad_norm > 0 ? clip_grad_norm(g, config_.max_grad_norm) : global_grad_norm(g);
    if (!std::isfinite(norm))
      throw NonFiniteUpdate(
          fmt::format("update {}: the {} gradient's norm is {}", updates_ + 1, what, norm));
  };
  guard(critic, "critic");
  if (with_actor) guard(actor, "actor");
  critic_opt_->step(critic, config_.critic_lr);
  if (with_actor) {
    actor_opt_->step(actor, config_.actor_lr);
    if (config_.auto_alpha && config_.method != Method::kTd3)
      alpha_opt_->step(alpha_groups_, config_.alpha_lr);
  }
  step_targets(with_actor);
  ++updates_;
  return r;
}

void ReplayLearner::step_targets(bool with_actor) {
  Nets& n = *nets_;
  const bool td3 = config_.method == Method::kTd3;
  if (td3 && !with_actor) return;  // TD3 moves its targets with the delayed actor
  const float tau = config_.tau;
  n.target_critic.polyak_from(n.critic, tau);
  polyak(n.tq1.parameters(), n.q1.parameters(), tau);
  polyak(n.tq2.parameters(), n.q2.parameters(), tau);
  if (td3) {
    n.target_actor->polyak_from(n.actor, tau);
    polyak(n.target_actor_head->parameters(), n.actor_head.parameters(), tau);
  }
}

TensorMap ReplayLearner::actor_tensors() const {
  TensorMap out;
  nets_->actor.to_tensors(out, "");
  out.merge(nets_->actor_head.to_tensors("actor."));
  return out;
}

TensorMap ReplayLearner::parameter_tensors() const {
  const Nets& n = *nets_;
  TensorMap out = actor_tensors();
  n.critic.to_tensors(out, "critic_");
  out.merge(n.q1.to_tensors("q1."));
  out.merge(n.q2.to_tensors("q2."));
  n.target_critic.to_tensors(out, "target.critic_");
  out.merge(n.tq1.to_tensors("target.q1."));
  out.merge(n.tq2.to_tensors("target.q2."));
  if (n.target_actor) {
    n.target_actor->to_tensors(out, "target.");
    out.merge(n.target_actor_head->to_tensors("target.actor."));
  }
  out["log_alpha"] = policy::Tensor({1}, {log_alpha_[0]});
  return out;
}

TensorMap ReplayLearner::gradient_tensors() const {
  const Nets& n = *nets_;
  TensorMap out;
  n.actor.gradient_tensors(out, "");
  out.merge(n.actor_head.gradient_tensors("actor."));
  n.critic.gradient_tensors(out, "critic_");
  out.merge(n.q1.gradient_tensors("q1."));
  out.merge(n.q2.gradient_tensors("q2."));
  out["log_alpha"] = policy::Tensor({1}, {log_alpha_grad_[0]});
  return out;
}

void ReplayLearner::load_parameters(const TensorMap& t) {
  Nets& n = *nets_;
  n.actor.load(t, "");
  n.actor_head.load_tensors(t, "actor.");
  n.critic.load(t, "critic_");
  n.q1.load_tensors(t, "q1.");
  n.q2.load_tensors(t, "q2.");
  n.target_critic.load(t, "target.critic_");
  n.tq1.load_tensors(t, "target.q1.");
  n.tq2.load_tensors(t, "target.q2.");
  if (n.target_actor) {
    n.target_actor->load(t, "target.");
    n.target_actor_head->load_tensors(t, "target.actor.");
  }
  const auto it = t.find("log_alpha");
  RECUR_CHECK(it != t.end() && it->second.data.size() == 1,
              "replay learner state: tensor 'log_alpha' (1 float) is missing or misshapen");
  log_alpha_[0] = it->second.data[0];
}

namespace {
const char* const kOptimizers[] = {"actor_optim.", "critic_optim.", "alpha_optim."};
}

TensorMap ReplayLearner::state_tensors() const {
  TensorMap out = parameter_tensors();
  const Adam* opts[] = {actor_opt_.get(), critic_opt_.get(), alpha_opt_.get()};
  for (int i = 0; i < 3; ++i)
    for (auto& [name, t] : opts[i]->to_tensors()) out[kOptimizers[i] + name] = std::move(t);
  return out;
}

void ReplayLearner::load_state(const TensorMap& t) {
  load_parameters(t);
  Adam* opts[] = {actor_opt_.get(), critic_opt_.get(), alpha_opt_.get()};
  for (int i = 0; i < 3; ++i) {
    TensorMap mine;
    const std::string p = kOptimizers[i];
    for (const auto& [name, tensor] : t)
      if (name.starts_with(p)) mine[name.substr(p.size())] = tensor;
    opts[i]->load_tensors(mine);
  }
}

}  // namespace recur::agent::offpolicy
