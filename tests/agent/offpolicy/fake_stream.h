// A deterministic fake env stream for the sequence replay tests
// (tests/agent/offpolicy/sequence_replay_test.cc): every stored row says where it came from.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "agent/offpolicy/sequence_replay.h"

namespace recur::test {

inline float fl(int64_t v) {
  return static_cast<float>(v);
}

constexpr int kObs = 4;  // (env, episode, step, stream position): every row says where it is from
constexpr int kAct = 2;  // (1000 * env + step, episode)

// A deterministic stream of N envs. Episode e of env n lasts ep_len(n, e) steps and terminates or
// is truncated by ep_terminates(n, e). Env 1 resets with a reset step (transition = 0, garbage
// data) after each episode; the others start the next episode on the following step. The "actor
// state" handed to add() is never zero (n + 0.25, call index + 1, ...), so a stored zero at an
// episode start proves the buffer applied the reset itself.
struct FakeStream {
  struct Env {
    int episode = 0, step = 0;
    bool reset_pending = false, start = true;
    int64_t stored = 0;
  };
  int N, state_size;
  int64_t calls = 0;
  std::vector<Env> envs;
  std::vector<std::vector<std::pair<int, int>>> log;              // [n][position] = (episode, step)
  std::map<std::tuple<int, int, int>, std::vector<float>> given;  // (n, e, step) -> state
  std::vector<float> obs, act, rew, next, states;
  std::vector<uint8_t> term, trunc, start, trans;

  FakeStream(int n, int ss)
      : N(n),
        state_size(ss),
        envs(n),
        log(n),
        obs(n * kObs),
        act(n * kAct),
        rew(n),
        next(n * kObs),
        states(n * ss),
        term(n),
        trunc(n),
        start(n),
        trans(n) {}

  static int ep_len(int n, int e) { return 2 + (n * 7 + e * 5) % 9; }  // 2..10
  static bool ep_terminates(int n, int e) { return (n + e) % 3 != 0; }
  static bool uses_reset_steps(int n) { return n == 1; }

  // Fills the arrays of the next call.
  void next_step() {
    for (int n = 0; n < N; ++n) {
      Env& v = envs[n];
      for (int j = 0; j < state_size; ++j)
        states[n * state_size + j] = j == 0 ? fl(n) + 0.25f : fl(calls + 1 + j);
      float* o = &obs[n * kObs];
      float* x = &next[n * kObs];
      if (v.reset_pending) {  // the autoreset step: nothing happens, nothing is stored
        trans[n] = 0;
        for (int d = 0; d < kObs; ++d) o[d] = x[d] = -1.0f;
        act[n * kAct] = act[n * kAct + 1] = rew[n] = -1.0f;
        term[n] = trunc[n] = start[n] = 1;
        v.reset_pending = false;
        ++v.episode;
        v.step = 0;
        v.start = true;
        continue;
      }
      trans[n] = 1;
      const int e = v.episode, s = v.step;
      const auto p = static_cast<float>(v.stored);
      o[0] = fl(n), o[1] = fl(e), o[2] = fl(s), o[3] = p;
      x[0] = fl(n), x[1] = fl(e), x[2] = fl(s + 1), x[3] = p + 1;
      act[n * kAct] = fl(1000 * n + s);
      act[n * kAct + 1] = fl(e);
      rew[n] = fl(n) + 0.5f * fl(s);
      start[n] = v.start;
      const bool end = s + 1 == ep_len(n, e);
      term[n] = end && ep_terminates(n, e);
      trunc[n] = end && !ep_terminates(n, e);
      given[{n, e, s}] = std::vector<float>(states.begin() + n * state_size,
                                            states.begin() + (n + 1) * state_size);
      log[n].push_back({e, s});
      ++v.stored;
      v.start = false;
      if (!end) {
        ++v.step;
      } else if (uses_reset_steps(n)) {
        v.reset_pending = true;
      } else {
        ++v.episode;
        v.step = 0;
        v.start = true;
      }
    }
    ++calls;
  }
  void add_to(agent::offpolicy::SequenceReplay& rb) const {
    rb.add(obs, act, rew, term, trunc, next, start, states, trans);
  }
  int64_t stored_total() const {
    int64_t t = 0;
    for (const auto& v : envs) t += v.stored;
    return t;
  }
};

inline agent::offpolicy::ReplaySpec make_spec(int N, int64_t rows, int seq_len, int burn_in,
                                              int stride, int state_size) {
  agent::offpolicy::ReplaySpec s;
  s.num_envs = N;
  s.obs_dim = kObs;
  s.action_dim = kAct;
  s.state_size = state_size;
  s.capacity = rows * N;
  s.seq_len = seq_len;
  s.burn_in = burn_in;
  s.state_stride = stride;
  return s;
}

}  // namespace recur::test
