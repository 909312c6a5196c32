#include "policy/distributions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/error.h"
#include "policy/squashed_action.h"

namespace recur::policy {
namespace {

constexpr float kHalfLog2Pi = 0.918938533204672741780329736406f;  // log(2 pi) / 2

size_t rows_times(int n, int width) {
  return static_cast<size_t>(n) * static_cast<size_t>(width);
}

// to_env_action, kept inside [low, high]: at a = +-1 (tanh saturates in float32) the rounding of
// low + (high - low) may land one ulp outside the Box, which the env must never see.
float env_action(float a, float low, float high) {
  return std::clamp(to_env_action(a, low, high), low, high);
}

void check_box(int dim, std::span<const float> low, std::span<const float> high, const char* what) {
  RECUR_CHECK_ARG(low.size() == static_cast<size_t>(dim) && high.size() == static_cast<size_t>(dim),
                  "{}: the Box has {} low and {} high bounds, want dim {}", what, low.size(),
                  high.size(), dim);
}

void check_row_output(int batch, std::span<const float> upstream, const char* what) {
  RECUR_CHECK_ARG(upstream.empty() || upstream.size() == static_cast<size_t>(batch),
                  "{} has {} floats, want empty or batch {}", what, upstream.size(), batch);
}

}  // namespace

// ----------------------------------------------------------------------------------------------
// Categorical

Categorical::Categorical(int batch, int n, std::span<const float> logits)
    : batch_(batch), n_(n), logits_(logits) {
  RECUR_CHECK_ARG(batch >= 0 && n > 0, "Categorical: batch {} and n {} (n must be positive)", batch,
                  n);
  RECUR_CHECK_ARG(logits.size() == rows_times(batch, n),
                  "Categorical: logits of {} floats, want batch {} x n {}", logits.size(), batch,
                  n);
}

void Categorical::row_stats(int i, float& max, float& lse) const {
  const float* z = logits_.data() + rows_times(i, n_);
  max = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < n_; ++j) max = std::max(max, z[j]);
  RECUR_CHECK_ARG(std::isfinite(max),
                  "Categorical: row {} has no finite logit to normalize by (max {})", i, max);
  float sum = 0.0f;
  for (int j = 0; j < n_; ++j) sum += std::exp(z[j] - max);  // the max term is 1: sum >= 1
  lse = std::log(sum);
}

int Categorical::action_at(std::span<const float> actions, int i) const {
  const float a = actions[static_cast<size_t>(i)];
  RECUR_CHECK_ARG(a >= 0.0f && a < static_cast<float>(n_) && a == std::floor(a),
                  "Categorical: action {} of row {} is not an integer in [0, {})", a, i, n_);
  return static_cast<int>(a);
}

void Categorical::log_prob(std::span<const float> actions, std::span<float> out) const {
  RECUR_CHECK_ARG(
      actions.size() == static_cast<size_t>(batch_) && out.size() == static_cast<size_t>(batch_),
      "Categorical.log_prob: actions {} and out {} floats, want batch {}", actions.size(),
      out.size(), batch_);
  for (int i = 0; i < batch_; ++i) {
    float max, lse;
    row_stats(i, max, lse);
    const float z = logits_[rows_times(i, n_) + static_cast<size_t>(action_at(actions, i))];
    out[static_cast<size_t>(i)] = z - max - lse;
  }
}

void Categorical::entropy(std::span<float> out) const {
  RECUR_CHECK_ARG(out.size() == static_cast<size_t>(batch_),
                  "Categorical.entropy: out {} floats, want batch {}", out.size(), batch_);
  for (int i = 0; i < batch_; ++i) {
    float max, lse;
    row_stats(i, max, lse);
    const float* z = logits_.data() + rows_times(i, n_);
    float h = 0.0f;
    for (int j = 0; j < n_; ++j) {
      const float log_p = z[j] - max - lse;
      const float p = std::exp(log_p);
      if (p > 0.0f) h -= p * log_p;  // p = 0 (a -inf logit or underflow) adds 0, not 0 * -inf
    }
    out[static_cast<size_t>(i)] = h;
  }
}

void Categorical::sample(Rng& rng, std::span<float> actions) const {
  RECUR_CHECK_ARG(actions.size() == static_cast<size_t>(batch_),
                  "Categorical.sample: actions {} floats, want batch {}", actions.size(), batch_);
  for (int i = 0; i < batch_; ++i) {
    float max, lse;
    row_stats(i, max, lse);
    const float* z = logits_.data() + rows_times(i, n_);
    const double u = rng.uniform();
    double cumulative = 0.0;
    int chosen = -1, last_possible = 0;
    for (int j = 0; j < n_ && chosen < 0; ++j) {
      const double p = std::exp(static_cast<double>(z[j] - max - lse));
      if (p <= 0.0) continue;
      last_possible = j;
      cumulative += p;
      if (u < cumulative) chosen = j;
    }
    // Rounding can leave the total just under 1 and u above it: the last possible action.
    actions[static_cast<size_t>(i)] = static_cast<float>(chosen >= 0 ? chosen : last_possible);
  }
}

void Categorical::mode(std::span<float> actions) const {
  RECUR_CHECK_ARG(actions.size() == static_cast<size_t>(batch_),
                  "Categorical.mode: actions {} floats, want batch {}", actions.size(), batch_);
  for (int i = 0; i < batch_; ++i) {
    const float* z = logits_.data() + rows_times(i, n_);
    int best = 0;
    for (int j = 1; j < n_; ++j)
      if (z[j] > z[best]) best = j;
    actions[static_cast<size_t>(i)] = static_cast<float>(best);
  }
}

void Categorical::backward(std::span<const float> actions, std::span<const float> d_logp,
                           std::span<const float> d_entropy, std::span<float> d_logits) const {
  check_row_output(batch_, d_logp, "Categorical.backward: d_logp");
  check_row_output(batch_, d_entropy, "Categorical.backward: d_entropy");
  RECUR_CHECK_ARG(d_logp.empty() || actions.size() == static_cast<size_t>(batch_),
                  "Categorical.backward: actions {} floats, want batch {}", actions.size(), batch_);
  RECUR_CHECK_ARG(d_logits.size() == rows_times(batch_, n_),
                  "Categorical.backward: d_logits {} floats, want batch {} x n {}", d_logits.size(),
                  batch_, n_);
  for (int i = 0; i < batch_; ++i) {
    float max, lse;
    row_stats(i, max, lse);
    const float* z = logits_.data() + rows_times(i, n_);
    float* dz = d_logits.data() + rows_times(i, n_);
    const auto row = static_cast<size_t>(i);
    const float g_logp = d_logp.empty() ? 0.0f : d_logp[row];
    const float g_ent = d_entropy.empty() ? 0.0f : d_entropy[row];
    const int a = d_logp.empty() ? -1 : action_at(actions, i);
    float h = 0.0f;
    if (g_ent != 0.0f)
      for (int j = 0; j < n_; ++j) {
        const float log_p = z[j] - max - lse;
        const float p = std::exp(log_p);
        if (p > 0.0f) h -= p * log_p;
      }
    for (int j = 0; j < n_; ++j) {
      const float log_p = z[j] - max - lse;
      const float p = std::exp(log_p);
      float g = g_logp * ((j == a ? 1.0f : 0.0f) - p);
      if (p > 0.0f) g -= g_ent * p * (log_p + h);
      dz[j] = g;
    }
  }
}

// ----------------------------------------------------------------------------------------------
// DiagGaussian

DiagGaussian::DiagGaussian(int batch, int dim, std::span<const float> mean,
                           std::span<const float> log_std)
    : batch_(batch), dim_(dim), mean_(mean), log_std_(log_std) {
  RECUR_CHECK_ARG(batch >= 0 && dim > 0, "DiagGaussian: batch {} and dim {} (dim must be positive)",
                  batch, dim);
  RECUR_CHECK_ARG(
      mean.size() == rows_times(batch, dim) && log_std.size() == static_cast<size_t>(dim),
      "DiagGaussian: mean {} floats (want batch {} x dim {}), log_std {} (want {})", mean.size(),
      batch, dim, log_std.size(), dim);
}

void DiagGaussian::log_prob(std::span<const float> actions, std::span<float> out) const {
  RECUR_CHECK_ARG(
      actions.size() == rows_times(batch_, dim_) && out.size() == static_cast<size_t>(batch_),
      "DiagGaussian.log_prob: actions {} floats (want batch {} x dim {}), out {}", actions.size(),
      batch_, dim_, out.size());
  for (int i = 0; i < batch_; ++i) {
    const size_t r = rows_times(i, dim_);
    float sum = 0.0f;
    for (int j = 0; j < dim_; ++j) {
      const auto c = static_cast<size_t>(j);
      const float z = (actions[r + c] - mean_[r + c]) * std::exp(-log_std_[c]);
      sum += -0.5f * z * z - log_std_[c] - kHalfLog2Pi;
    }
    out[static_cast<size_t>(i)] = sum;
  }
}

void DiagGaussian::entropy(std::span<float> out) const {
  RECUR_CHECK_ARG(out.size() == static_cast<size_t>(batch_),
                  "DiagGaussian.entropy: out {} floats, want batch {}", out.size(), batch_);
  float h = 0.0f;
  for (int j = 0; j < dim_; ++j) h += 0.5f + kHalfLog2Pi + log_std_[static_cast<size_t>(j)];
  std::fill(out.begin(), out.end(), h);
}

void DiagGaussian::sample(Rng& rng, std::span<float> actions) const {
  RECUR_CHECK_ARG(actions.size() == rows_times(batch_, dim_),
                  "DiagGaussian.sample: actions {} floats, want batch {} x dim {}", actions.size(),
                  batch_, dim_);
  for (size_t k = 0; k < actions.size(); ++k) {
    const double sigma = std::exp(static_cast<double>(log_std_[k % static_cast<size_t>(dim_)]));
    actions[k] = static_cast<float>(static_cast<double>(mean_[k]) + sigma * rng.normal());
  }
}

void DiagGaussian::mode(std::span<float> actions) const {
  RECUR_CHECK_ARG(actions.size() == mean_.size(),
                  "DiagGaussian.mode: actions {} floats, want batch {} x dim {}", actions.size(),
                  batch_, dim_);
  std::copy(mean_.begin(), mean_.end(), actions.begin());
}

void DiagGaussian::backward(std::span<const float> actions, std::span<const float> d_logp,
                            std::span<const float> d_entropy, std::span<float> d_mean,
                            std::span<float> d_log_std) const {
  check_row_output(batch_, d_logp, "DiagGaussian.backward: d_logp");
  check_row_output(batch_, d_entropy, "DiagGaussian.backward: d_entropy");
  RECUR_CHECK_ARG(d_logp.empty() || actions.size() == rows_times(batch_, dim_),
                  "DiagGaussian.backward: actions {} floats, want batch {} x dim {}",
                  actions.size(), batch_, dim_);
  RECUR_CHECK_ARG(d_mean.empty() || d_mean.size() == rows_times(batch_, dim_),
                  "DiagGaussian.backward: d_mean {} floats, want empty or batch {} x dim {}",
                  d_mean.size(), batch_, dim_);
  RECUR_CHECK_ARG(d_log_std.empty() || d_log_std.size() == static_cast<size_t>(dim_),
                  "DiagGaussian.backward: d_log_std {} floats, want empty or dim {}",
                  d_log_std.size(), dim_);
  // Column by column, so that each log_std gradient sums its N rows in one float64 accumulator.
  for (int j = 0; j < dim_; ++j) {
    const auto c = static_cast<size_t>(j);
    const float inv_sigma = std::exp(-log_std_[c]);
    double g_log_std = 0.0;
    for (int i = 0; i < batch_; ++i) {
      const auto row = static_cast<size_t>(i);
      const size_t k = rows_times(i, dim_) + c;
      float g_mean = 0.0f;
      if (!d_logp.empty()) {
        const float z = (actions[k] - mean_[k]) * inv_sigma;  // (a - mu) / sigma
        g_mean = d_logp[row] * z * inv_sigma;
        g_log_std += static_cast<double>(d_logp[row] * (z * z - 1.0f));
      }
      if (!d_entropy.empty()) g_log_std += static_cast<double>(d_entropy[row]);
      if (!d_mean.empty()) d_mean[k] = g_mean;
    }
    if (!d_log_std.empty()) d_log_std[c] += static_cast<float>(g_log_std);
  }
}

// ----------------------------------------------------------------------------------------------
// TanhGaussian

TanhGaussian::TanhGaussian(int batch, int dim, std::span<const float> head,
                           std::span<const float> low, std::span<const float> high)
    : batch_(batch), dim_(dim), head_(head), low_(low), high_(high) {
  RECUR_CHECK_ARG(batch >= 0 && dim > 0, "TanhGaussian: batch {} and dim {} (dim must be positive)",
                  batch, dim);
  RECUR_CHECK_ARG(head.size() == rows_times(batch, 2 * dim),
                  "TanhGaussian: head of {} floats, want batch {} x 2 dim {}", head.size(), batch,
                  2 * dim);
  check_box(dim, low, high, "TanhGaussian");
}

float TanhGaussian::draw(size_t i, size_t j, double eps, std::span<float> actions) const {
  const size_t row = i * 2 * static_cast<size_t>(dim_);
  const float mean = head_[row + j];
  const float log_std = squash_log_std(head_[row + static_cast<size_t>(dim_) + j]);
  // u in float64 as DiagGaussian::sample: eps = 0 gives u = mean exactly.
  const double sigma = std::exp(static_cast<double>(log_std));
  const float a = std::tanh(static_cast<float>(static_cast<double>(mean) + sigma * eps));
  actions[i * static_cast<size_t>(dim_) + j] = env_action(a, low_[j], high_[j]);
  return tanh_gaussian_log_prob_term(static_cast<float>(eps), log_std, a);
}

void TanhGaussian::sample(Rng& rng, std::span<float> actions, std::span<float> log_probs) const {
  RECUR_CHECK_ARG(actions.size() == rows_times(batch_, dim_),
                  "TanhGaussian.sample: actions {} floats, want batch {} x dim {}", actions.size(),
                  batch_, dim_);
  check_row_output(batch_, log_probs, "TanhGaussian.sample: log_probs");
  for (size_t i = 0; i < static_cast<size_t>(batch_); ++i) {
    float sum = 0.0f;
    for (size_t j = 0; j < static_cast<size_t>(dim_); ++j) sum += draw(i, j, rng.normal(), actions);
    if (!log_probs.empty()) log_probs[i] = sum;
  }
}

void TanhGaussian::mode(std::span<float> actions, std::span<float> log_probs) const {
  RECUR_CHECK_ARG(actions.size() == rows_times(batch_, dim_),
                  "TanhGaussian.mode: actions {} floats, want batch {} x dim {}", actions.size(),
                  batch_, dim_);
  check_row_output(batch_, log_probs, "TanhGaussian.mode: log_probs");
  for (size_t i = 0; i < static_cast<size_t>(batch_); ++i) {
    float sum = 0.0f;
    for (size_t j = 0; j < static_cast<size_t>(dim_); ++j) sum += draw(i, j, 0.0, actions);
    if (!log_probs.empty()) log_probs[i] = sum;
  }
}

// ----------------------------------------------------------------------------------------------
// TanhDeterministic

TanhDeterministic::TanhDeterministic(int batch, int dim, std::span<const float> mean,
                                     std::span<const float> low, std::span<const float> high,
                                     float noise)
    : batch_(batch), dim_(dim), noise_(noise), mean_(mean), low_(low), high_(high) {
  RECUR_CHECK_ARG(batch >= 0 && dim > 0,
                  "TanhDeterministic: batch {} and dim {} (dim must be positive)", batch, dim);
  RECUR_CHECK_ARG(mean.size() == rows_times(batch, dim),
                  "TanhDeterministic: mean of {} floats, want batch {} x dim {}", mean.size(),
                  batch, dim);
  check_box(dim, low, high, "TanhDeterministic");
}

void TanhDeterministic::sample(Rng& rng, std::span<float> actions) const {
  RECUR_CHECK_ARG(actions.size() == mean_.size(),
                  "TanhDeterministic.sample: actions {} floats, want batch {} x dim {}",
                  actions.size(), batch_, dim_);
  const auto d = static_cast<size_t>(dim_);
  for (size_t k = 0; k < actions.size(); ++k) {
    const double a =
        static_cast<double>(std::tanh(mean_[k])) + static_cast<double>(noise_) * rng.normal();
    actions[k] =
        env_action(static_cast<float>(std::clamp(a, -1.0, 1.0)), low_[k % d], high_[k % d]);
  }
}

void TanhDeterministic::mode(std::span<float> actions) const {
  RECUR_CHECK_ARG(actions.size() == mean_.size(),
                  "TanhDeterministic.mode: actions {} floats, want batch {} x dim {}",
                  actions.size(), batch_, dim_);
  const auto d = static_cast<size_t>(dim_);
  for (size_t k = 0; k < actions.size(); ++k)
    actions[k] = env_action(std::tanh(mean_[k]), low_[k % d], high_[k % d]);
}

void normalize_actions(std::span<const float> env_actions, std::span<const float> low,
                       std::span<const float> high, std::span<float> out) {
  const size_t d = low.size();
  RECUR_CHECK_ARG(
      d > 0 && high.size() == d && env_actions.size() % d == 0 && out.size() == env_actions.size(),
      "normalize_actions: {} actions into {} floats with a Box of {} low and {} high "
      "bounds (want a multiple of the Box's size, and out as large)",
      env_actions.size(), out.size(), d, high.size());
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = from_env_action(env_actions[k], low[k % d], high[k % d]);
}

}  // namespace recur::policy
