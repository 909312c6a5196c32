#include "envs/memory/repeat_previous.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "envs/registry.h"

namespace {
int suit_of(std::span<const float> obs) {
  for (int i = 0; i < 4; ++i)
    if (obs[i] == 1.0f) return i;
  return -1;
}

// Plays one episode; the oracle remembers every suit seen and answers the one k - 1 deals back.
double play(recur::envs::Env& env, int k, bool oracle, uint64_t seed, int* length) {
  std::vector<int> seen = {suit_of(env.reset(seed))};
  double total = 0;
  for (;;) {
    const int n = static_cast<int>(seen.size());
    const float action[1] = {oracle && n >= k ? static_cast<float>(seen[n - k]) : 0.0f};
    const auto r = env.step(action);
    total += r.reward;
    if (r.done()) {
      *length = env.elapsed_steps();
      CHECK(r.terminated);
      CHECK_FALSE(r.truncated);
      return total;
    }
    seen.push_back(suit_of(r.obs));
  }
}
}  // namespace

TEST_CASE("RepeatPrevious: a perfect memory scores the optimal return 1") {
  for (auto [id, decks, k] :
       {std::tuple{"RepeatPreviousEasy-v0", 1, 4}, std::tuple{"RepeatPreviousMedium-v0", 2, 32},
        std::tuple{"RepeatPreviousHard-v0", 3, 64}}) {
    CAPTURE(id);
    auto env = recur::envs::make(id);
    int length = 0;
    CHECK(play(*env, k, true, 1, &length) == doctest::Approx(1.0));
    CHECK(length == decks * 52 - 1);
  }
}

TEST_CASE("RepeatPrevious: a memoryless policy scores about -0.5") {
  auto env = recur::envs::make("RepeatPreviousEasy-v0");
  double mean = 0;
  int length = 0;
  for (uint64_t s = 0; s < 200; ++s) mean += play(*env, 4, false, s, &length) / 200;
  CHECK(mean == doctest::Approx(-0.5).epsilon(0.05));
}

TEST_CASE("RepeatPrevious: every deck holds each suit equally often") {
  auto env = recur::envs::make("RepeatPreviousMedium-v0");
  int counts[4] = {};
  counts[suit_of(env->reset(9))]++;
  const float a[1] = {0};
  for (;;) {
    const auto r = env->step(a);
    counts[suit_of(r.obs)]++;
    if (r.done()) break;
  }
  for (int c : counts) CHECK(c == 26);
}

TEST_CASE("RepeatPrevious options are validated") {
  CHECK_THROWS_AS(recur::envs::make("RepeatPreviousEasy-v0", recur::Options{}.set("k", "52")),
                  recur::Error);
  auto env = recur::envs::make("RepeatPreviousEasy-v0", recur::Options{}.set("k", "1"));
  int length = 0;
  CHECK(play(*env, 1, true, 3, &length) == doctest::Approx(1.0));
}

TEST_CASE("RepeatPrevious: set_state rejects a count of cards that is not a whole number") {
  auto env = recur::envs::make("RepeatPreviousEasy-v0");
  env->reset(0);
  std::vector<double> state(static_cast<size_t>(env->state_size()));
  env->get_state(state);
  state.back() = 2.5;
  CHECK_THROWS_AS(env->set_state(state), std::invalid_argument);
  state.back() = 53;
  CHECK_THROWS_AS(env->set_state(state), std::invalid_argument);
  state.back() = 52;
  env->set_state(state);
  CHECK(suit_of(env->observation()) == static_cast<int>(state[51]));
}
