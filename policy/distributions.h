// Action distributions over a batch of N rows, as views over the head's outputs: nothing is
// stored or allocated, each call computes from the parameters it was given. Actions travel as
// float32 like everywhere in recur (a Discrete action is one float holding an integer).
//
// Backward functions take the gradients of the loss w.r.t. the per-row scalars, d_logp (N) and
// d_entropy (N) (either may be empty: zero), and write the gradient w.r.t. the per-row inputs
// (logits, mean). The gradient of a shared parameter (log_std) is ADDED, as all parameter
// gradients in recur.
#pragma once

#include <span>

#include "core/rng.h"

namespace recur::policy {

// Categorical(logits) per row, logits (N, n) unnormalized. Computed with log-sum-exp, so any
// finite logits are fine; -inf marks an impossible action (probability 0, never sampled, no
// entropy contribution), as long as each row keeps one finite logit.
class Categorical {
 public:
  Categorical(int batch, int n, std::span<const float> logits);
  int batch() const { return batch_; }
  int n() const { return n_; }

  // actions (N), each an integer in [0, n) (throws std::invalid_argument otherwise) -> out (N).
  void log_prob(std::span<const float> actions, std::span<float> out) const;
  // -sum_j p_j log p_j -> out (N).
  void entropy(std::span<float> out) const;
  // Inverse-CDF sampling, one rng.uniform() per row, in row order -> actions (N).
  void sample(Rng& rng, std::span<float> actions) const;
  // argmax (the first on ties, as torch.argmax) -> actions (N).
  void mode(std::span<float> actions) const;

  // d_logits (N, n) = d_logp[i] d log p(a_i) / d logits_i + d_entropy[i] d H_i / d logits_i:
  //   d log p(a) / d z_j = [j = a] - p_j        d H / d z_j = -p_j (log p_j + H)
  // actions (N) are needed only when d_logp is given.
  void backward(std::span<const float> actions, std::span<const float> d_logp,
                std::span<const float> d_entropy, std::span<float> d_logits) const;

 private:
  // Row i's max and log-sum-exp of (z - max): log p_j = z_j - max - lse.
  void row_stats(int i, float& max, float& lse) const;
  int action_at(std::span<const float> actions, int i) const;

  int batch_, n_;
  std::span<const float> logits_;
};

// Independent normals per row: mean (N, d) from the head, and one state-independent log_std (d)
// shared by every row (a learned parameter, as SB3's and CleanRL's continuous PPO).
//   log p(a) = sum_j [ -(a_j - mu_j)^2 / (2 sigma_j^2) - log sigma_j - log(2 pi) / 2 ]
//   H        = sum_j [ 1/2 + log(2 pi) / 2 + log sigma_j ]          (the same for every row)
class DiagGaussian {
 public:
  DiagGaussian(int batch, int dim, std::span<const float> mean, std::span<const float> log_std);
  int batch() const { return batch_; }
  int dim() const { return dim_; }

  // actions (N, d) -> out (N).
  void log_prob(std::span<const float> actions, std::span<float> out) const;
  void entropy(std::span<float> out) const;  // (N)
  // a = mu + sigma eps, eps ~ rng.normal(), row-major order -> actions (N, d).
  void sample(Rng& rng, std::span<float> actions) const;
  void mode(std::span<float> actions) const;  // the mean (N, d)

  // d_mean (N, d) written; d_log_std (d) ADDED:
  //   d log p / d mu_j = (a_j - mu_j) / sigma_j^2
  //   d log p / d log sigma_j = (a_j - mu_j)^2 / sigma_j^2 - 1        d H / d log sigma_j = 1
  // d_mean or d_log_std may be empty (not wanted); actions are needed only when d_logp is given.
  void backward(std::span<const float> actions, std::span<const float> d_logp,
                std::span<const float> d_entropy, std::span<float> d_mean,
                std::span<float> d_log_std) const;

 private:
  int batch_, dim_;
  std::span<const float> mean_, log_std_;
};

// A tanh-squashed Gaussian per row (SAC's actor; the math is policy/squashed_action.h's): head
// (N, 2d) holds [mean (d), raw log-std (d)] per row, low and high (d) the env's Box. Actions are
// written in ENV units, a_env = to_env_action(a, low, high) with a = tanh(u) in (-1, 1); the
// log-probs are log pi(a) of the NORMALIZED action (no log-det of the affine map, as SB3), so a
// learner's target entropy -d is in normalized units.
//   log_std = squash_log_std(raw)        u = mean + exp(log_std) eps
//   log pi(a) = sum_j tanh_gaussian_log_prob_term(eps_j, log_std_j, a_j)
// The log-prob comes with the draw, from eps itself: recovering eps from a stored action would
// need atanh, which is unstable where tanh saturates.
class TanhGaussian {
 public:
  TanhGaussian(int batch, int dim, std::span<const float> head, std::span<const float> low,
               std::span<const float> high);
  int batch() const { return batch_; }
  int dim() const { return dim_; }

  // eps ~ rng.normal() (float64, row-major order, as DiagGaussian::sample) -> actions (N, d),
  // log_probs (N) (may be empty: not wanted).
  void sample(Rng& rng, std::span<float> actions, std::span<float> log_probs) const;
  // a = tanh(mean) -> actions (N, d); log_probs (N) as sample's with eps = 0 (may be empty).
  void mode(std::span<float> actions, std::span<float> log_probs) const;

 private:
  // Row i, dimension j with the draw eps: writes the env action, returns the log-prob term.
  float draw(size_t i, size_t j, double eps, std::span<float> actions) const;

  int batch_, dim_;
  std::span<const float> head_, low_, high_;
};

// TD3's actor, tanh-squashed and deterministic, exploring by additive Gaussian noise in
// normalized units: head (N, d) the mean, low and high (d) the env's Box; env-unit actions.
//   mode:   a = tanh(mean)
//   sample: a = clamp(tanh(mean) + noise * eps, -1, 1), eps ~ rng.normal() in row-major order
// A deterministic policy has no density: act() reports log-probs of 0.
class TanhDeterministic {
 public:
  TanhDeterministic(int batch, int dim, std::span<const float> mean, std::span<const float> low,
                    std::span<const float> high, float noise);
  void sample(Rng& rng, std::span<float> actions) const;  // (N, d)
  void mode(std::span<float> actions) const;              // (N, d)

 private:
  int batch_, dim_;
  float noise_;
  std::span<const float> mean_, low_, high_;
};

// Env-unit actions (N, d) of a squashed actor -> its normalized actions (N, d) (from_env_action
// per dimension with the Box low, high (d)): what the off-policy learner replays. In place is
// fine (out may be env_actions).
void normalize_actions(std::span<const float> env_actions, std::span<const float> low,
                       std::span<const float> high, std::span<float> out);

}  // namespace recur::policy
