// Runs a trained recurrent policy on CartPoleNoVel-v1 (CartPole with the velocities hidden, so
// the policy has to remember) and prints its mean return: the smallest complete use of recur as a
// library. Built against an installed recur by tools/examples/CMakeLists.txt.
//
//   run_policy CHECKPOINT [EPISODES]
//
// CHECKPOINT is a policy file that `recur train` writes (RUN/checkpoints/best.safetensors); it
// loads as in `recur eval`: policy::load_policy, then PolicyActor::load. Each of EPISODES envs
// runs one episode; every env's recurrent state lives in its actor slot and is zeroed whenever
// that env's episode starts.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/rng.h"
#include "envs/vector_env.h"
#include "policy/policy_actor.h"
#include "policy/policy_checkpoint.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s CHECKPOINT [EPISODES]\n", argv[0]);
    return 2;
  }
  try {
    const int episodes = argc == 3 ? std::stoi(argv[2]) : 10;
    if (episodes < 1) throw std::invalid_argument("EPISODES must be at least 1");
    const recur::policy::PolicyCheckpoint checkpoint = recur::policy::load_policy(argv[1]);

    // One env per episode: episode i is env i's first one, reset with derive_seed(seed, i).
    constexpr uint64_t kSeed = 1000;
    recur::envs::VectorEnv venv("CartPoleNoVel-v1", episodes);
    if (venv.obs_dim() != checkpoint.spec.obs_dim) {
      std::fprintf(stderr, "%s takes observations of size %d; CartPoleNoVel-v1 gives %d\n", argv[1],
                   checkpoint.spec.obs_dim, venv.obs_dim());
      return 2;
    }
    recur::policy::PolicyActor actor(checkpoint.spec, episodes);  // on the CPU
    actor.load(checkpoint.tensors);  // parameters and observation-normalizer statistics
    venv.reset(kSeed);

    // Buffers for act(): a Discrete action is written as its index, one float per env.
    const size_t n = static_cast<size_t>(episodes);
    std::vector<float> actions(n * static_cast<size_t>(venv.action_dim())), log_probs(n), values(n);
    // episode_start[i] = 1: env i has just begun an episode, so act() zeroes slot i's recurrent
    // state first. After reset() every env starts one; after a step, the envs whose episode ended
    // (SAME_STEP autoreset: obs() already holds the next episode's first observation).
    std::vector<uint8_t> episode_start(venv.episode_start().begin(), venv.episode_start().end());
    std::vector<uint8_t> finished(n, 0);
    recur::Rng rng(kSeed);  // unused by deterministic actions, needed by sampled ones
    double total_return = 0;
    size_t remaining = n;
    while (remaining > 0) {
      actor.act(venv.obs(), episode_start, rng, /*deterministic=*/true, actions, log_probs, values);
      venv.step(actions);
      for (size_t i = 0; i < n; ++i) {
        episode_start[i] = venv.episode_start()[i];
        if (episode_start[i] && !finished[i]) {
          finished[i] = 1;
          total_return += venv.final_return()[i];
          --remaining;
        }
      }
    }
    std::printf("CartPoleNoVel-v1: %d episodes, mean return %.2f\n", episodes,
                total_return / episodes);
    return 0;
  } catch (const std::exception& e) {  // recur::Error names the file, key or value at fault
    std::fprintf(stderr, "run_policy: %s\n", e.what());
    return 1;
  }
}
