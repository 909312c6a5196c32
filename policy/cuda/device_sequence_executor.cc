// The argument checks of the GPU learner's device-resident calls (device_sequence_executor.h),
// once for both backends.
#include "policy/cuda/device_sequence_executor.h"

#include "core/error.h"

namespace recur::policy {

void DeviceSequenceExecutor::check_device_call(int T, int B, const float* x, const float* y,
                                               std::span<const uint8_t> episode_start) const {
  RECUR_CHECK_ARG(device_resident(), "forward_device needs set_device_resident(true)");
  RECUR_CHECK_ARG(T >= 1 && B >= 1, "forward_device: T {} and B {} must be >= 1", T, B);
  RECUR_CHECK_ARG(x != nullptr && y != nullptr, "forward_device: x and y must be device buffers");
  RECUR_CHECK_ARG(episode_start.size() == static_cast<size_t>(T) * B,
                  "forward_device: episode_start must be (T, B) = {}, not {}",
                  static_cast<size_t>(T) * B, episode_start.size());
}

void DeviceSequenceExecutor::forward_device(int T, int B, const float* x,
                                            std::span<const uint8_t> episode_start,
                                            std::span<const float> initial_state, float* y) {
  check_device_call(T, B, x, y, episode_start);
  const auto want = static_cast<size_t>(B) * spec().state_size();
  RECUR_CHECK_ARG(initial_state.size() == want,
                  "forward_device: initial_state must be (B, S) = {}, not {}", want,
                  initial_state.size());
  forward_device_impl(T, B, x, episode_start, initial_state, nullptr, y);
}

void DeviceSequenceExecutor::forward_device(int T, int B, const float* x,
                                            std::span<const uint8_t> episode_start,
                                            const DeviceStateTable& initial_states, float* y) {
  check_device_call(T, B, x, y, episode_start);
  RECUR_CHECK_ARG(initial_states.rows.size() == static_cast<size_t>(B),
                  "forward_device: the state rows must be (B) = {}, not {}", B,
                  initial_states.rows.size());
  RECUR_CHECK_ARG(initial_states.table != nullptr &&
                      initial_states.stride >= static_cast<size_t>(spec().state_size()),
                  "forward_device: the state table must be device memory with rows of at least "
                  "{} floats (stride {})",
                  spec().state_size(), initial_states.stride);
  forward_device_impl(T, B, x, episode_start, {}, &initial_states, y);
}

void DeviceSequenceExecutor::backward_device(const float* dy, float* dx) {
  RECUR_CHECK_ARG(device_resident(), "backward_device needs set_device_resident(true)");
  RECUR_CHECK_ARG(dy != nullptr, "backward_device: dy must be a device buffer");
  backward_device_impl(dy, dx);
}

}  // namespace recur::policy
