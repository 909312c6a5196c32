// The two executor roles of the recurrent core. Every device implements them (CPU/Eigen; the CUDA
// step executor and the cuDNN sequence executor, both run on an H100 and an H200) on the same
// CanonicalWeights, computing the equations of core_spec.h. Public non-virtual methods check
// shapes once; backends implement the *_impl hooks. Buffers here are host float32, row-major,
// time-major:
//
//   x            (T, B, input)     episode_start (T, B) 0/1: 1 = zero the state of slot b
//   y            (T, B, H)         top layer's h at every step                before step t
//   state        (B, S)            per slot S = spec.state_size() floats: h of layers 0..L-1
//                                  (L*H), then for LSTM c of layers 0..L-1 (L*H)
//
// Resets are explicit masks: when episode_start[t][b] = 1 the state of slot b is replaced by
// zeros before step t, so nothing flows (neither values nor gradients) across the reset.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "policy/canonical_weights.h"
#include "policy/convert/flat_layout.h"

namespace recur::policy {

// The actor's engine: B env slots, state resident inside across calls, one step at a time.
class StepExecutor {
 public:
  virtual ~StepExecutor() = default;
  const CoreSpec& spec() const { return spec_; }
  int slots() const { return slots_; }

  void load(const CanonicalWeights& weights);
  CanonicalWeights weights() const;

  // x (B, input), episode_start (B) -> h_out (B, H) of the top layer; state advances.
  void step(std::span<const float> x, std::span<const uint8_t> episode_start,
            std::span<float> h_out);

  // One slot's state (S floats) / all slots' states (B, S).
  void get_state(int slot, std::span<float> out) const;
  void set_state(int slot, std::span<const float> state);
  void get_states(std::span<float> out) const;
  void set_states(std::span<const float> states);
  void reset(int slot);  // zero state

 protected:
  StepExecutor(const CoreSpec& spec, int slots);
  virtual void load_impl(const CanonicalWeights& weights) = 0;
  virtual CanonicalWeights weights_impl() const = 0;
  virtual void step_impl(std::span<const float> x, std::span<const uint8_t> episode_start,
                         std::span<float> h_out) = 0;
  virtual void get_state_impl(int slot, std::span<float> out) const = 0;
  virtual void set_state_impl(int slot, std::span<const float> state) = 0;
  virtual void reset_impl(int slot) = 0;

 private:
  CoreSpec spec_;
  int slots_;
};

// The learner's engine: whole (T, B) sequences from given initial states, with BPTT.
class SequenceExecutor {
 public:
  virtual ~SequenceExecutor() = default;
  const CoreSpec& spec() const { return spec_; }

  void load(const CanonicalWeights& weights);
  CanonicalWeights weights() const;

  // Forward over x (T, B, input) from initial_state (B, S) with resets; y (T, B, H). Keeps what
  // backward needs. final_state (B, S) may be empty (not wanted).
  void forward(int T, int B, std::span<const float> x, std::span<const uint8_t> episode_start,
               std::span<const float> initial_state, std::span<float> y,
               std::span<float> final_state = {});

  // Backward through time of the last forward: dy (T, B, H) -> dx (T, B, input) and
  // d_initial_state (B, S) (either may be empty: not wanted); parameter gradients are ADDED to
  // the executor's gradient buffer (zero_gradients() clears it).
  void backward(std::span<const float> dy, std::span<float> dx, std::span<float> d_initial_state);

  void zero_gradients();
  // Gradients accumulated so far, as canonical tensors (same names and shapes as the weights).
  CanonicalWeights gradients() const;

  // The parameters and their gradients as flat buffers in the executor's own layout, for an
  // optimizer that does not care about layout (Adam is elementwise). Same length.
  virtual std::span<float> parameters() = 0;
  virtual std::span<float> parameter_gradients() = 0;
  // Where each canonical weight sits in parameters() (flat_layout.h): canonical for the CPU,
  // cuDNN's opaque weight space on a GPU.
  virtual const FlatLayout& parameter_layout() const = 0;

  int last_T() const { return last_t_; }
  int last_B() const { return last_b_; }

 protected:
  explicit SequenceExecutor(const CoreSpec& spec);
  virtual void load_impl(const CanonicalWeights& weights) = 0;
  virtual CanonicalWeights weights_impl() const = 0;
  virtual void forward_impl(int T, int B, std::span<const float> x,
                            std::span<const uint8_t> episode_start,
                            std::span<const float> initial_state, std::span<float> y,
                            std::span<float> final_state) = 0;
  virtual void backward_impl(std::span<const float> dy, std::span<float> dx,
                             std::span<float> d_initial_state) = 0;
  virtual void zero_gradients_impl() = 0;
  virtual CanonicalWeights gradients_impl() const = 0;

 private:
  CoreSpec spec_;
  int last_t_ = 0, last_b_ = 0;
};

}  // namespace recur::policy
