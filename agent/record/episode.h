// One recorded episode, in the shapes Minari stores (N = steps of the episode):
//
//   observations   (N+1, obs_dim) float32   row 0 = the reset observation, row N = the final one
//   actions        (N, action_dim) float32  Discrete actions hold the index (written as int64)
//   rewards        (N,) float64
//   terminations   (N,) 0/1                 written as HDF5 bool enums (h5py's layout)
//   truncations    (N,) 0/1
//   episode_start  (N+1,) 0/1               infos/episode_start: 1 at row 0 (the policy's state
//                                           was reset before acting on observations[0])
//   policy_state   (N+1, state_dim) float32 infos/policy_state, only with --record-state: the
//                                           recurrent state fed to the policy with observations[t]
//
// Row t of observations, episode_start and policy_state describe the same instant, and so does
// frame t of the episode's video: the state before action t was taken.
#pragma once

#include <cstdint>
#include <vector>

namespace recur::agent::record {

struct Episode {
  uint64_t seed = 0;  // the reset seed: env.reset(seed) replays this episode for exact envs
  int obs_dim = 0;
  int action_dim = 0;
  int state_dim = 0;  // 0 when policy_state is not recorded

  std::vector<float> observations;
  std::vector<float> actions;
  std::vector<double> rewards;
  std::vector<uint8_t> terminations;
  std::vector<uint8_t> truncations;
  std::vector<uint8_t> episode_start;
  std::vector<float> policy_state;

  int steps() const { return static_cast<int>(rewards.size()); }
  double total_reward() const {
    double sum = 0;
    for (double r : rewards) sum += r;
    return sum;
  }
};

}  // namespace recur::agent::record
