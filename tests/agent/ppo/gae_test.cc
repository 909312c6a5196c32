#include "agent/ppo/gae.h"

#include <doctest/doctest.h>

#include <vector>

using recur::agent::compute_gae;

namespace {
struct Case {
  std::vector<float> r, v, boot, last;
  std::vector<uint8_t> term, trunc;
  std::vector<float> adv, ret;
  void run(int T, int N, float gamma, float lambda) {
    adv.assign(r.size(), 0.0f);
    ret.assign(r.size(), 0.0f);
    compute_gae(T, N, gamma, lambda, r, v, term, trunc, boot, last, adv, ret);
  }
};
}  // namespace

TEST_CASE("GAE without episode ends bootstraps from the last value") {
  Case c{{1, 1, 1}, {0.5f, 0.4f, 0.3f}, {0, 0, 0}, {0.2f}, {0, 0, 0}, {0, 0, 0}, {}, {}};
  c.run(3, 1, 0.9f, 0.8f);
  // By hand: d2 = 1 + .9*.2 - .3 = .88; d1 = 1 + .9*.3 - .4 = .87; d0 = 1 + .9*.4 - .5 = .86
  // A2 = .88; A1 = .87 + .72*.88 = 1.5036; A0 = .86 + .72*1.5036 = 1.942592
  CHECK(c.adv[2] == doctest::Approx(0.88));
  CHECK(c.adv[1] == doctest::Approx(1.5036));
  CHECK(c.adv[0] == doctest::Approx(1.942592));
  CHECK(c.ret[0] == doctest::Approx(1.942592 + 0.5));
}

TEST_CASE("GAE termination uses no bootstrap and cuts the chain") {
  Case c{{1, 2, 3}, {0.5f, 0.4f, 0.3f}, {0, 0, 0}, {0.2f}, {0, 1, 0}, {0, 0, 0}, {}, {}};
  c.run(3, 1, 0.9f, 0.8f);
  // t=2 is a new episode: d2 = 3 + .9*.2 - .3 = 2.88. t=1 terminated: d1 = 2 - .4 = 1.6, no carry.
  // t=0: d0 = 1 + .9*.4 - .5 = .86; A0 = .86 + .72*1.6 = 2.012
  CHECK(c.adv[2] == doctest::Approx(2.88));
  CHECK(c.adv[1] == doctest::Approx(1.6));
  CHECK(c.adv[0] == doctest::Approx(2.012));
}

TEST_CASE("GAE truncation bootstraps from the final observation value and cuts the chain") {
  Case c{{1, 2, 3}, {0.5f, 0.4f, 0.3f}, {0, 0.7f, 0}, {0.2f}, {0, 0, 0}, {0, 1, 0}, {}, {}};
  c.run(3, 1, 0.9f, 0.8f);
  // t=1 truncated: d1 = 2 + .9*.7 - .4 = 2.23, no carry from t=2 (another episode).
  CHECK(c.adv[2] == doctest::Approx(2.88));
  CHECK(c.adv[1] == doctest::Approx(2.23));
  CHECK(c.adv[0] == doctest::Approx(0.86 + 0.72 * 2.23));
}

TEST_CASE("GAE columns are independent envs") {
  // Two envs interleaved (T, N) = (2, 2): env 1 terminates at t=0, env 0 does not.
  Case c{{1, 10, 1, 10}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0}, {0, 1, 0, 0}, {0, 0, 0, 0}, {}, {}};
  c.run(2, 2, 1.0f, 1.0f);
  CHECK(c.adv[0] == doctest::Approx(2.0));   // env 0: 1 + 1
  CHECK(c.adv[1] == doctest::Approx(10.0));  // env 1: terminated, no carry of its t=1 reward
  CHECK(c.adv[3] == doctest::Approx(10.0));
}

TEST_CASE("GAE gives reset steps (NEXT_STEP autoreset) no advantage and no chain") {
  // One env, T = 4: t=1 terminates the episode, t=2 is the env's reset step (action ignored,
  // reward 0: transition 0), t=3 is the new episode's first transition.
  const std::vector<float> r{1, 2, 0, 4}, v{10, 20, 30, 40}, boot{0, 0, 0, 0}, last{100};
  const std::vector<uint8_t> term{0, 1, 0, 0}, trunc{0, 0, 0, 0}, transition{1, 1, 0, 1};
  std::vector<float> adv(4), ret(4);
  compute_gae(4, 1, 0.5f, 1.0f, r, v, term, trunc, boot, last, adv, ret, transition);
  // By hand (gamma .5, lambda 1): t=3: d = 4 + .5*100 - 40 = 14. t=2: masked, A = 0, R = V = 30.
  // t=1 terminated: d = 2 - 20 = -18, no carry. t=0: d = 1 + .5*20 - 10 = 1; A = 1 + .5*-18 = -8.
  CHECK(adv[3] == doctest::Approx(14));
  CHECK(ret[3] == doctest::Approx(54));
  CHECK(adv[2] == 0.0f);
  CHECK(ret[2] == doctest::Approx(30));
  CHECK(adv[1] == doctest::Approx(-18));
  CHECK(adv[0] == doctest::Approx(-8));
  CHECK(ret[0] == doctest::Approx(2));
  // An empty mask is the unmasked computation.
  std::vector<float> adv2(4), ret2(4);
  compute_gae(4, 1, 0.5f, 1.0f, r, v, term, trunc, boot, last, adv2, ret2, {});
  CHECK(adv2[2] == doctest::Approx(0 + .5 * 40 - 30 + .5 * 14));
}
