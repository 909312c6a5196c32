// POPGym's sequence envs (envs/popgym/{autoencode,count_recall,higher_lower,multiarmed_bandit,
// repeat_first}): scripted optimal policies reach POPGym's optimal return, known states give
// known observations and rewards, states round-trip and bad states and options are rejected.
// Parity with the popgym package itself is tools/python/tests/test_popgym_sequences.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "envs/registry.h"

namespace {

using recur::Options;
using recur::envs::Env;
using recur::envs::make;

// Index of the 1 in obs[begin, begin + n).
int hot(std::span<const float> obs, int begin, int n) {
  for (int i = 0; i < n; ++i)
    if (obs[static_cast<size_t>(begin + i)] == 1.0f) return i;
  return -1;
}

std::vector<double> state_of(const Env& env) {
  std::vector<double> s(static_cast<size_t>(env.state_size()));
  env.get_state(s);
  return s;
}

struct Episode {
  double total = 0;
  int length = 0;
  bool terminated = false, truncated = false;
};

// Runs `policy(obs) -> action` to the end of an episode.
template <typename Policy>
Episode play(Env& env, uint64_t seed, Policy policy) {
  Episode e;
  auto obs = env.reset(seed);
  for (;;) {
    const float a[1] = {static_cast<float>(policy(obs))};
    const auto r = env.step(a);
    e.total += r.reward;
    if (r.done()) {
      e.length = env.elapsed_steps();
      e.terminated = r.terminated;
      e.truncated = r.truncated;
      return e;
    }
    obs = r.obs;
  }
}

}  // namespace

TEST_CASE("RepeatFirst: remembering the first suit scores 1, a memoryless policy about -0.5") {
  for (auto [id, decks] : {std::pair{"RepeatFirstEasy-v0", 1}, std::pair{"RepeatFirstMedium-v0", 8},
                           std::pair{"RepeatFirstHard-v0", 16}}) {
    const std::string name = id;
    CAPTURE(name);
    auto env = make(id);
    int first = -1;
    bool start = true;
    const Episode e = play(*env, 3, [&](std::span<const float> obs) {
      if (start) first = hot(obs, 0, 4), start = false;
      return first;
    });
    CHECK(e.total == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(e.length == decks * 52 - 1);
    CHECK(e.terminated);
    CHECK_FALSE(e.truncated);
  }
  auto env = make("RepeatFirstEasy-v0");
  double mean = 0;
  for (uint64_t s = 0; s < 200; ++s) mean += play(*env, s, [](auto) { return 0; }).total / 200;
  CHECK(mean == doctest::Approx(-0.5).epsilon(0.05));
}

TEST_CASE("Autoencode: reciting the watched suits in reverse scores 1") {
  for (auto [id, decks] : {std::pair{"AutoencodeEasy-v0", 1}, std::pair{"AutoencodeMedium-v0", 2},
                           std::pair{"AutoencodeHard-v0", 3}}) {
    const std::string name = id;
    CAPTURE(name);
    auto env = make(id);
    const int n = decks * 52;
    std::vector<int> seen;  // suits watched, not yet recited
    bool reciting = false;
    int watch_obs = 0;
    const Episode e = play(*env, 5, [&](std::span<const float> obs) {
      if (!reciting) {
        // POPGym shows the newest card while watching and once more, in mode play, on the step
        // that deals the last card; afterwards it shows spades.
        seen.push_back(hot(obs, 2, 4));
        const bool watching = hot(obs, 0, 2) == 1;
        watch_obs += watching;
        if (watching) return 3;  // ignored while watching
        reciting = true;
      }
      const int suit = seen.back();
      seen.pop_back();
      return suit;
    });
    CHECK(watch_obs == n - 1);  // reset's card and the n - 2 deals before the last
    CHECK(e.total == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(e.length == 2 * n - 1);
    CHECK(e.terminated);
  }
}

TEST_CASE("Autoencode: known states give POPGym's observations") {
  auto env = make("AutoencodeEasy-v0");
  env->reset(1);
  std::vector<double> s = state_of(*env);
  // Every card dealt, none recited: mode play, the last card's suit.
  s[52] = 52;
  s[53] = 0;
  env->set_state(s);
  CHECK(hot(env->observation(), 0, 2) == 0);
  CHECK(hot(env->observation(), 2, 4) == static_cast<int>(s[51]));
  // The first recitation names the last card dealt; afterwards POPGym shows spades.
  const float right[1] = {static_cast<float>(s[51])};
  const auto r = env->step(right);
  CHECK(r.reward == 1.0 / 52);
  CHECK_FALSE(r.terminated);
  CHECK(hot(r.obs, 0, 2) == 0);
  CHECK(hot(r.obs, 2, 4) == 0);
  // The last recitation (one card held) terminates; a wrong suit costs 1/52.
  s[53] = 51;
  env->set_state(s);
  const float wrong[1] = {static_cast<float>((static_cast<int>(s[0]) + 1) % 4)};
  const auto last = env->step(wrong);
  CHECK(last.reward == -1.0 / 52);
  CHECK(last.terminated);
  // Recitation before every card is dealt is not a state POPGym can reach.
  s[52] = 10;
  s[53] = 1;
  CHECK_THROWS_AS(env->set_state(s), std::invalid_argument);
}

TEST_CASE("CountRecall: counting every kind scores 1") {
  for (auto [id, decks, kinds] :
       {std::tuple{"CountRecallEasy-v0", 1, 2}, std::tuple{"CountRecallMedium-v0", 2, 4},
        std::tuple{"CountRecallHard-v0", 4, 13}}) {
    const std::string name = id;
    CAPTURE(name);
    auto env = make(id);
    CHECK(env->obs_dim() == 2 * kinds);
    CHECK(env->action_space().n() == decks * 52 / kinds + 1);
    std::array<int, 13> counts{};
    const Episode e = play(*env, 7, [&](std::span<const float> obs) {
      ++counts[static_cast<size_t>(hot(obs, 0, kinds))];
      return counts[static_cast<size_t>(hot(obs, kinds, kinds))];
    });
    CHECK(e.total == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(e.length == decks * 52 - 1);
    CHECK(e.terminated);
    // The policy saw every value card but the one the last step dealt.
    int seen = 0;
    for (int k = 0; k < kinds; ++k) seen += counts[static_cast<size_t>(k)];
    CHECK(seen == decks * 52 - 1);
  }
}

TEST_CASE("HigherLower: a known deal gives POPGym's rewards, foresight wins every non-tie") {
  auto env = make("HigherLowerEasy-v0");
  env->reset(2);
  std::vector<double> s = state_of(*env);
  // Put an ace, a king and another king at the top of the deal (swapping keeps a real deck).
  auto put = [&](size_t at, double rank) {
    const auto it = std::find(s.begin() + static_cast<long>(at), s.begin() + 52, rank);
    REQUIRE(it != s.begin() + 52);
    std::swap(s[at], *it);
  };
  put(0, 0);
  put(1, 12);
  put(2, 12);
  env->set_state(s);
  CHECK(hot(env->observation(), 0, 13) == 0);
  const float higher[1] = {0}, lower[1] = {1};
  auto r = env->step(higher);  // ace -> king: higher is right
  CHECK(r.reward == 1.0 / 52);
  CHECK(hot(r.obs, 0, 13) == 12);
  r = env->step(higher);  // king -> king: a push
  CHECK(r.reward == 0);
  env->set_state(s);
  r = env->step(lower);  // ace -> king: lower is wrong
  CHECK(r.reward == -1.0 / 52);

  // A policy that peeks at the state wins every step whose ranks differ.
  for (auto [id, decks] : {std::pair{"HigherLowerEasy-v0", 1}, std::pair{"HigherLowerMedium-v0", 2},
                           std::pair{"HigherLowerHard-v0", 3}}) {
    const std::string name = id;
    CAPTURE(name);
    auto e = make(id);
    e->reset(4);
    const std::vector<double> deal = state_of(*e);
    const int n = decks * 52;
    int non_ties = 0;
    for (int i = 1; i < n; ++i)
      non_ties += deal[static_cast<size_t>(i)] != deal[static_cast<size_t>(i - 1)];
    double total = 0;
    for (int i = 1;; ++i) {
      const float a[1] = {deal[static_cast<size_t>(i)] > deal[static_cast<size_t>(i - 1)] ? 0.0f
                                                                                          : 1.0f};
      const auto step = e->step(a);
      total += step.reward;
      if (step.done()) {
        CHECK(step.terminated);
        CHECK(i == n - 1);
        break;
      }
    }
    CHECK(total == doctest::Approx(static_cast<double>(non_ties) / n).epsilon(1e-12));
  }
}

TEST_CASE("MultiarmedBandit: payouts follow the state's draws, truncated at episode_length") {
  for (auto [id, arms, length] : {std::tuple{"MultiarmedBanditEasy-v0", 10, 200},
                                  std::tuple{"MultiarmedBanditMedium-v0", 20, 400},
                                  std::tuple{"MultiarmedBanditHard-v0", 30, 600}}) {
    const std::string name = id;
    CAPTURE(name);
    auto env = make(id);
    CHECK(env->action_space().n() == arms);
    CHECK(env->max_episode_steps() == length);
    const Episode e = play(*env, 1, [](auto) { return 0; });
    CHECK(e.length == length);
    CHECK(e.truncated);
    CHECK_FALSE(e.terminated);
  }
  auto env = make("MultiarmedBanditEasy-v0");
  CHECK(hot(env->reset(3), 0, 2) == 0);
  std::vector<double> s = state_of(*env);
  REQUIRE(s.size() == 10 + 200 + 2);
  s[0] = 0.5;    // arm 0 pays when the draw is below 0.5
  s[10] = 0.25;  // step 1's draw
  s[11] = 0.75;  // step 2's draw
  env->set_state(s);
  const float arm0[1] = {0};
  auto r = env->step(arm0);
  CHECK(r.reward == 1.0 / 200);
  CHECK(hot(r.obs, 0, 2) == 1);
  r = env->step(arm0);
  CHECK(r.reward == -1.0 / 200);
  CHECK(hot(r.obs, 0, 2) == 0);

  // The best arm's expected share of payouts: an oracle that always pulls it.
  env->reset(8);
  s = state_of(*env);
  const auto best = std::max_element(s.begin(), s.begin() + 10) - s.begin();
  double paid = 0;
  for (int t = 0; t < 200; ++t)
    paid += s[10u + static_cast<size_t>(t)] < s[static_cast<size_t>(best)];
  const float a[1] = {static_cast<float>(best)};
  double total = 0;
  for (int t = 0; t < 200; ++t) total += env->step(a).reward;
  CHECK(total == doctest::Approx((2 * paid - 200) / 200).epsilon(1e-12));
}

TEST_CASE("MultiarmedBandit: episode_length follows max_episode_steps and must agree with it") {
  auto env = make("MultiarmedBanditEasy-v0", Options{}.set("max_episode_steps", "7"));
  CHECK(env->state_size() == 10 + 7 + 2);
  const Episode e = play(*env, 0, [](auto) { return 1; });
  CHECK(e.length == 7);
  CHECK(e.truncated);
  CHECK_THROWS_AS(make("MultiarmedBanditEasy-v0", Options{}.set("episode_length", "50")),
                  recur::Error);
  // No time limit (gymnasium.make wraps its own): POPGym's episode_length still ends the episode,
  // and a step past it is an error rather than a made-up payout.
  auto unlimited = make("MultiarmedBanditEasy-v0", Options{}.set("max_episode_steps", "0"));
  CHECK(unlimited->max_episode_steps() == 0);
  unlimited->reset(0);
  const float arm[1] = {0};
  for (int t = 0; t < 200; ++t) CHECK_FALSE(unlimited->step(arm).done());
  CHECK_THROWS_AS(unlimited->step(arm), recur::Error);
  CHECK_THROWS_AS(make("MultiarmedBanditEasy-v0", Options{}.set("episode_length", "0")),
                  recur::Error);
  CHECK_THROWS_AS(make("MultiarmedBanditEasy-v0", Options{}.set("num_bandits", "0")), recur::Error);
  auto longer = make("MultiarmedBanditEasy-v0",
                     Options{}.set("episode_length", "50").set("max_episode_steps", "50"));
  CHECK(longer->max_episode_steps() == 50);
}

TEST_CASE("POPGym sequence envs: options are validated") {
  for (const char* id :
       {"AutoencodeEasy-v0", "CountRecallEasy-v0", "HigherLowerEasy-v0", "RepeatFirstEasy-v0"}) {
    const std::string name = id;
    CAPTURE(name);
    CHECK_THROWS_AS(make(id, Options{}.set("num_decks", "0")), recur::Error);
    CHECK_THROWS_AS(make(id, Options{}.set("num_decks", "two")), recur::Error);
    CHECK_THROWS_AS(make(id, Options{}.set("deck_type", "suits")), recur::Error);
    CHECK(make(id, Options{}.set("num_decks", "2"))->state_size() > 104);
  }
}

TEST_CASE("POPGym sequence envs: states round-trip, garbage is rejected, every action steps") {
  for (const char* id : {"AutoencodeEasy-v0", "AutoencodeHard-v0", "CountRecallEasy-v0",
                         "CountRecallMedium-v0", "CountRecallHard-v0", "HigherLowerMedium-v0",
                         "MultiarmedBanditEasy-v0", "RepeatFirstEasy-v0"}) {
    const std::string name = id;
    CAPTURE(name);
    auto env = make(id);
    auto other = make(id);
    env->reset(11);
    other->reset(12);
    const float zero[1] = {0};
    for (int t = 0; t < 20; ++t) env->step(zero);
    // Round trip: another env given this state continues identically.
    const std::vector<double> s = state_of(*env);
    other->set_state(s);
    CHECK(state_of(*other) == s);
    CHECK(std::equal(env->observation().begin(), env->observation().end(),
                     other->observation().begin()));
    for (int a = 0; a < env->action_space().n(); ++a) {
      const float act[1] = {static_cast<float>(a)};
      env->set_state(s);
      other->set_state(s);
      const auto r1 = env->step(act);
      const double reward = r1.reward;
      const bool terminated = r1.terminated;
      const std::vector<float> obs(r1.obs.begin(), r1.obs.end());
      const auto r2 = other->step(act);
      CHECK(r2.reward == reward);
      CHECK(r2.terminated == terminated);
      CHECK(std::vector<float>(r2.obs.begin(), r2.obs.end()) == obs);
      CHECK(std::isfinite(reward));
    }
    // Garbage: NaN, a negative entry, a fraction, a count out of range, a deck with a card
    // changed. The env keeps its state when set_state throws.
    const std::vector<double> before = state_of(*env);
    for (size_t at : {size_t{0}, s.size() - 1, s.size() - 2}) {
      for (double bad : {std::nan(""), -1.0, 1.5, 1e9}) {
        std::vector<double> g = s;
        g[at] = bad;
        CHECK_THROWS_AS(env->set_state(g), std::invalid_argument);
      }
    }
    std::vector<double> wrong_size(s.size() + 1, 0.0);
    CHECK_THROWS_AS(env->set_state(wrong_size), std::invalid_argument);
    CHECK(state_of(*env) == before);
  }
  // A deck must hold each value as often as a real one.
  auto env = make("RepeatFirstEasy-v0");
  env->reset(0);
  std::vector<double> s = state_of(*env);
  s[0] = s[0] == 0 ? 1 : 0;
  CHECK_THROWS_AS(env->set_state(s), std::invalid_argument);
}
