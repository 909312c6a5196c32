// The learner's network on one GPU (see cuda_policy_learner.h).
#include "policy/cuda/cuda_policy_learner.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/distribution_eval.h"
#include "kernels/elementwise.h"
#include "kernels/reduction.h"
#include "policy/canonical_weights.h"

namespace recur::policy {
namespace {

// As the CUDA actor: a preallocated cuBLAS workspace, so that cuBLAS never allocates mid-update.
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

const CudnnSequenceOptions& select_device(const CudnnSequenceOptions& options) {
  RECUR_CHECK_ARG(options.device >= 0, "CudaPolicyLearner: device {} is not a CUDA device ordinal",
                  options.device);
  CUDA_CHECK(cudaSetDevice(options.device));
  return options;
}

size_t floats(size_t a, size_t b) {
  return a * b;
}

}  // namespace

CudaPolicyLearner::CudaPolicyLearner(const PolicySpec& spec, const CudnnSequenceOptions& options)
    : spec_(spec),
      options_(select_device(options)),
      host_actor_head_(spec.actor_head_spec()),
      host_critic_head_(spec.critic_head_spec()) {
  spec.validate();
  // As PolicyLearner: the PPO heads only (a squashed actor is the off-policy learner's).
  RECUR_CHECK(spec.squash == Squash::kNone,
              "the PPO learner trains categorical and Gaussian actors only; policy.squash '{}' "
              "is an off-policy actor (algo.type sac / td3, which train it with their own learner)",
              to_string(spec.squash));
  // Refused here, before any training, rather than at the first update.
  RECUR_CHECK(
      spec.action_kind != ActionKind::kContinuous || spec.action_dim <= kernels::kMaxGaussianDim,
      "the CUDA learner supports continuous actions of up to {} dimensions, this policy "
      "has {}; set device.learner: cpu",
      kernels::kMaxGaussianDim, spec.action_dim);
  RECUR_CHECK_ARG(options.tower_streams == 1 || options.tower_streams == 2,
                  "CudaPolicyLearner: tower_streams {} must be 1 or 2", options.tower_streams);
  const cudaStream_t s = stream_.get();
  cublas_ = std::make_unique<CublasHandle>(s, kCublasWorkspaceBytes);
  if (two_streams()) critic_ = std::make_unique<SideStream>(kCublasWorkspaceBytes);

  for (int c = 0; c < towers(); ++c) {
    Tower& t = tower_[c];
    if (!spec.encoder.empty()) {
      t.encoder = std::make_unique<CudaTrainMlp>(spec.encoder_spec(), tower_stream(c));
      host_encoders_[c] = std::make_unique<Mlp>(spec.encoder_spec());
    }
    // cuDNN or the fused kernels, on the tower's stream.
    t.core = make_device_sequence(spec.core_spec(), options_, tower_stream(c));
    t.core->set_device_resident(true);
  }
  actor_head_ = std::make_unique<CudaTrainMlp>(spec.actor_head_spec(), s);
  critic_head_ = std::make_unique<CudaTrainMlp>(spec.critic_head_spec(), s);
  if (spec.action_kind == ActionKind::kContinuous) {
    log_std_.resize(static_cast<size_t>(spec.action_dim));
    log_std_grad_.resize(log_std_.size());
    log_std_.zero(s);
    log_std_grad_.zero(s);
  }
  scratch_.resize(static_cast<size_t>(kernels::kReductionScratch));
  host_log_std_.assign(static_cast<size_t>(spec.action_dim), 0.0f);
  stream_.synchronize();
  if (critic_) critic_->synchronize();
}

CudaPolicyLearner::~CudaPolicyLearner() {
  // Nothing may still run on buffers about to be freed; errors cannot be reported here.
  static_cast<void>(cudaSetDevice(options_.device));
  static_cast<void>(cudaStreamSynchronize(stream_.get()));
  if (critic_) static_cast<void>(cudaStreamSynchronize(critic_->get()));
}

void CudaPolicyLearner::activate() const {
  CUDA_CHECK(cudaSetDevice(options_.device));
}

void CudaPolicyLearner::load(const TensorMap& tensors) {
  activate();
  // The critic's core uploads on its own stream: nothing on stream() may still write it.
  if (two_streams()) stream_.synchronize();
  Mlp* const encoders[2] = {host_encoders_[0].get(), host_encoders_[1].get()};
  DeviceSequenceExecutor* const cores[2] = {tower_[0].core.get(), tower_[1].core.get()};
  load_network(spec_, tensors, encoders, cores, host_actor_head_, host_critic_head_,
               host_log_std_);  // the cores upload (device-resident: the device copy is loaded)
  const cudaStream_t s = stream_.get();
  for (int c = 0; c < towers(); ++c)
    if (tower_[c].encoder) tower_[c].encoder->upload(host_encoders_[c]->parameters(), s);
  actor_head_->upload(host_actor_head_.parameters(), s);
  critic_head_->upload(host_critic_head_.parameters(), s);
  if (log_std_.size()) log_std_.upload(host_log_std_, s);
  stream_.synchronize();
}

TensorMap CudaPolicyLearner::to_tensors() const {
  return collect(false);
}

TensorMap CudaPolicyLearner::gradient_tensors() const {
  return collect(true);
}

// Parameters or their gradients under the same canonical names, staged through the host MLPs
// (their parameter or gradient buffer) and the cores' canonical views of the device copies.
TensorMap CudaPolicyLearner::collect(bool gradients) const {
  activate();
  const cudaStream_t s = stream_.get();
  // The critic's core downloads on its own stream what the optimizer wrote on stream().
  if (two_streams()) stream_.synchronize();
  TensorMap out;
  auto add = [&](const TensorMap& m) { out.insert(m.begin(), m.end()); };
  auto mlp = [&](const CudaTrainMlp& device, Mlp& host, const std::string& prefix) {
    if (gradients) {
      device.download_gradients(host.gradients(), s);
      add(host.gradient_tensors(prefix));
    } else {
      device.download(host.parameters(), s);
      add(host.to_tensors(prefix));
    }
  };
  for (int c = 0; c < towers(); ++c) {
    const std::string p = c == 0 ? "" : "critic_";
    if (tower_[c].encoder) mlp(*tower_[c].encoder, *host_encoders_[c], p + "encoder.");
    const DeviceSequenceExecutor& core = *tower_[c].core;
    add((gradients ? core.gradients() : core.weights()).to_tensors(p + "core."));
  }
  mlp(*actor_head_, host_actor_head_, "actor.");
  mlp(*critic_head_, host_critic_head_, "critic.");
  if (spec_.action_kind == ActionKind::kContinuous) {
    std::vector<float> v(log_std_.size());
    (gradients ? log_std_grad_ : log_std_).download(v, s);
    stream_.synchronize();
    out["actor.log_std"] = Tensor({spec_.action_dim}, std::move(v));
  }
  return out;
}

void CudaPolicyLearner::evaluate(int T, int B, const float* obs, const float* actions,
                                 std::span<const uint8_t> episode_start,
                                 std::span<const float> initial_state, float* log_probs,
                                 float* entropies, float* values) {
  RECUR_CHECK_ARG(T >= 1 && B >= 1, "evaluate: T {} and B {} must be >= 1", T, B);
  const auto tb = static_cast<size_t>(T) * static_cast<size_t>(B);
  RECUR_CHECK_ARG(episode_start.size() == tb &&
                      initial_state.size() == static_cast<size_t>(B) * spec_.state_size(),
                  "evaluate: episode_start must be (T, B) = {} and initial_state (B, S) = {}", tb,
                  static_cast<size_t>(B) * spec_.state_size());
  RECUR_CHECK_ARG(obs && actions && log_probs && entropies && values,
                  "evaluate: every buffer must be device memory");
  evaluate_impl(T, B, obs, actions, episode_start, initial_state, nullptr, log_probs, entropies,
                values);
}

void CudaPolicyLearner::evaluate(int T, int B, const float* obs, const float* actions,
                                 std::span<const uint8_t> episode_start, const float* state_table,
                                 size_t table_stride, std::span<const int32_t> table_rows,
                                 float* log_probs, float* entropies, float* values) {
  RECUR_CHECK_ARG(T >= 1 && B >= 1, "evaluate: T {} and B {} must be >= 1", T, B);
  const auto tb = static_cast<size_t>(T) * static_cast<size_t>(B);
  RECUR_CHECK_ARG(episode_start.size() == tb && table_rows.size() == static_cast<size_t>(B),
                  "evaluate: episode_start must be (T, B) = {} and table_rows (B) = {}", tb, B);
  RECUR_CHECK_ARG(table_stride >= static_cast<size_t>(spec_.state_size()),
                  "evaluate: state table rows of {} floats are shorter than the policy state {}",
                  table_stride, spec_.state_size());
  RECUR_CHECK_ARG(obs && actions && state_table && log_probs && entropies && values,
                  "evaluate: every buffer must be device memory");
  DeviceSequenceExecutor::DeviceStateTable states;
  states.table = state_table;
  states.stride = table_stride;
  states.rows = table_rows;
  evaluate_impl(T, B, obs, actions, episode_start, {}, &states, log_probs, entropies, values);
}

void CudaPolicyLearner::evaluate_impl(int T, int B, const float* obs, const float* actions,
                                      std::span<const uint8_t> episode_start,
                                      std::span<const float> initial_state,
                                      const DeviceSequenceExecutor::DeviceStateTable* device_states,
                                      float* log_probs, float* entropies, float* values) {
  const auto tb = static_cast<size_t>(T) * static_cast<size_t>(B);
  activate();
  const cudaStream_t s = stream_.get();
  cublasHandle_t cublas = cublas_->get();
  t_ = T;
  b_ = B;
  actions_ = actions;
  const int rows = static_cast<int>(tb);
  // Per slot the initial state is [actor core | critic core]; each tower takes its part.
  const auto cs = static_cast<size_t>(spec_.core_spec().state_size());
  fork();  // with two streams, the critic's waits for the inputs and the last step's Adam
  for (int k = 0; k < towers(); ++k) {
    const int c = critic_ ? 1 - k : k;  // the side stream's work first, so that it starts first
    Tower& t = tower_[c];
    if (!device_states) {
      t.state0.resize(static_cast<size_t>(B) * cs);
      for (int b = 0; b < B; ++b)
        std::copy_n(
            initial_state.begin() +
                static_cast<std::ptrdiff_t>(static_cast<size_t>(b) * spec_.state_size() + c * cs),
            cs, t.state0.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(b) * cs));
    }
    const float* x = obs;
    if (t.encoder) {
      x = t.encoder->forward(tower_cublas(c), rows, obs, tower_stream(c));
      mark_tower(c, c == 0 ? "actor encoder fwd" : "critic encoder fwd");
    }
    t.y.reserve(floats(tb, static_cast<size_t>(spec_.hidden)));
    if (device_states) {
      DeviceSequenceExecutor::DeviceStateTable part = *device_states;
      part.table += c * cs;  // this tower's core state inside the policy state
      t.core->forward_device(T, B, x, episode_start, part, t.y.data());
    } else {
      t.core->forward_device(T, B, x, episode_start, t.state0, t.y.data());
    }
    mark_tower(c, c == 0 ? "actor core fwd (plan + cuDNN)" : "critic core fwd (plan + cuDNN)");
  }
  head_out_ = actor_head_->forward(cublas, rows, tower_[0].y.data(), s);
  if (spec_.action_kind == ActionKind::kDiscrete) {
    kernels::launch_categorical_evaluate(head_out_, actions, rows, spec_.action_dim, log_probs,
                                         entropies, s);
  } else {
    kernels::launch_gaussian_evaluate(head_out_, log_std_.data(), actions, rows, spec_.action_dim,
                                      log_probs, entropies, s);
  }
  mark("actor head + distribution fwd");
  join();  // the critic head reads the critic's core output
  const Tower& value_tower = spec_.shared_core ? tower_[0] : tower_[1];
  const float* v = critic_head_->forward(cublas, rows, value_tower.y.data(), s);  // (T*B, 1)
  CUDA_CHECK(cudaMemcpyAsync(values, v, tb * sizeof(float), cudaMemcpyDeviceToDevice, s));
  mark("critic head fwd");
}

void CudaPolicyLearner::backward(const float* d_log_probs, const float* d_entropies,
                                 const float* d_values) {
  RECUR_CHECK_ARG(t_ > 0 && b_ > 0, "backward called before evaluate");
  RECUR_CHECK_ARG(d_log_probs && d_entropies && d_values,
                  "backward: the gradients must be device memory");
  activate();
  const cudaStream_t s = stream_.get();
  cublasHandle_t cublas = cublas_->get();
  const auto tb = static_cast<size_t>(t_) * static_cast<size_t>(b_);
  const int rows = static_cast<int>(tb);
  const auto H = static_cast<size_t>(spec_.hidden);

  // Heads: the distribution's gradient w.r.t. logits / means (log_std's is added), then the MLPs.
  d_head_.reserve(floats(tb, static_cast<size_t>(spec_.action_dim)));
  if (spec_.action_kind == ActionKind::kDiscrete) {
    kernels::launch_categorical_backward(head_out_, actions_, d_log_probs, d_entropies, rows,
                                         spec_.action_dim, d_head_.data(), s);
  } else {
    kernels::launch_gaussian_backward(head_out_, log_std_.data(), actions_, d_log_probs,
                                      d_entropies, rows, spec_.action_dim, d_head_.data(),
                                      log_std_grad_.data(), scratch_.data(), s);
  }
  Tower& actor = tower_[0];
  actor.d_y.reserve(floats(tb, H));
  actor_head_->backward(cublas, d_head_.data(), actor.d_y.data(), s);
  mark("distribution + actor head bwd");
  if (spec_.shared_core) {
    // One core feeds both heads: its output gradient is the sum of theirs.
    d_y_value_.reserve(floats(tb, H));
    critic_head_->backward(cublas, d_values, d_y_value_.data(), s);
    kernels::launch_add_inplace(actor.d_y.data(), d_y_value_.data(), static_cast<long long>(tb * H),
                                s);
  } else {
    tower_[1].d_y.reserve(floats(tb, H));
    critic_head_->backward(cublas, d_values, tower_[1].d_y.data(), s);
  }
  mark("critic head bwd");
  // Cores and encoders; with two streams the critic's run beside the actor's.
  fork();
  for (int k = 0; k < towers(); ++k) {
    const int c = critic_ ? 1 - k : k;  // the side stream's work first, so that it starts first
    Tower& t = tower_[c];
    if (t.encoder) {
      t.d_features.reserve(floats(tb, static_cast<size_t>(spec_.feature_dim())));
      t.core->backward_device(t.d_y.data(), t.d_features.data());
      mark_tower(c, c == 0 ? "actor core bwd (cuDNN)" : "critic core bwd (cuDNN)");
      t.encoder->backward(tower_cublas(c), t.d_features.data(), nullptr, tower_stream(c));
      mark_tower(c, c == 0 ? "actor encoder bwd" : "critic encoder bwd");
    } else {
      t.core->backward_device(t.d_y.data(), nullptr);
      mark_tower(c, c == 0 ? "actor core bwd (cuDNN)" : "critic core bwd (cuDNN)");
    }
  }
  join();
  if (two_streams()) mark("critic tower joined");
}

void CudaPolicyLearner::set_gradient_scale(float scale) {
  for (int c = 0; c < towers(); ++c) tower_[c].core->set_gradient_scale(scale);
}

void CudaPolicyLearner::zero_gradients() {
  activate();
  const cudaStream_t s = stream_.get();
  for (int c = 0; c < towers(); ++c) {
    if (tower_[c].encoder) tower_[c].encoder->zero_gradients(s);
    CUDA_CHECK(cudaMemsetAsync(tower_[c].core->device_gradients(), 0,
                               static_cast<size_t>(tower_[c].core->layout().size) * sizeof(float),
                               s));
  }
  actor_head_->zero_gradients(s);
  critic_head_->zero_gradients(s);
  log_std_grad_.zero(s);
}

std::vector<CudaPolicyLearner::Group> CudaPolicyLearner::parameter_groups() {
  std::vector<Group> g;
  for (int c = 0; c < towers(); ++c) {
    Tower& t = tower_[c];
    const std::string p = c == 0 ? "" : "critic_";
    if (t.encoder)
      g.push_back({p + "encoder", t.encoder->params(), t.encoder->grads(),
                   t.encoder->num_parameters(), nullptr});
    g.push_back({p + "core", t.core->device_weights(), t.core->device_gradients(),
                 static_cast<size_t>(t.core->layout().size), &t.core->layout()});
  }
  g.push_back({"actor", actor_head_->params(), actor_head_->grads(), actor_head_->num_parameters(),
               nullptr});
  g.push_back({"critic", critic_head_->params(), critic_head_->grads(),
               critic_head_->num_parameters(), nullptr});
  if (spec_.action_kind == ActionKind::kContinuous)
    g.push_back({"actor.log_std", log_std_.data(), log_std_grad_.data(), log_std_.size(), nullptr});
  return g;
}

const float* CudaPolicyLearner::encoder_parameters(int tower) const {
  const Tower& t = tower_[spec_.shared_core ? 0 : tower];
  return t.encoder ? t.encoder->params() : nullptr;
}

const float* CudaPolicyLearner::core_weights(int tower) const {
  return tower_[spec_.shared_core ? 0 : tower].core->device_weights();
}

const FlatLayout* CudaPolicyLearner::core_layout(int tower) const {
  return &tower_[spec_.shared_core ? 0 : tower].core->layout();
}

}  // namespace recur::policy
