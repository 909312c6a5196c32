// Base of envs whose whole physical state is N float64 values (Gymnasium's env.unwrapped.state):
// owns the array and implements get_state/set_state once for all of them.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

#include "envs/env.h"

namespace recur::envs {

template <size_t N>
class ArrayStateEnv : public Env {
 public:
  int state_size() const final { return static_cast<int>(N); }
  void get_state(std::span<double> out) const final {
    std::copy(state_.begin(), state_.end(), out.begin());
  }

 protected:
  using Env::Env;
  void set_state_impl(std::span<const double> state) final {
    std::copy(state.begin(), state.end(), state_.begin());
  }

  std::array<double, N> state_{};
};

}  // namespace recur::envs
