// POPGym's board envs: scripted policies that read the hidden state reach POPGym's best returns,
// known states give known observations and rewards, and bad options and states are errors.
// Parity with the popgym package itself: tools/python/tests/test_popgym_boards.py.
#include <doctest/doctest.h>

#include <cmath>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "envs/registry.h"
#include "envs/render/renderer.h"

namespace {
using recur::Options;
using recur::envs::Env;
using recur::envs::make;

std::vector<double> state_of(const Env& env) {
  std::vector<double> s(static_cast<size_t>(env.state_size()));
  env.get_state(s);
  return s;
}

recur::envs::StepResult act(Env& env, int a) {
  const float action[1] = {static_cast<float>(a)};
  return env.step(action);
}

int hot(std::span<const float> obs, size_t from, size_t width) {
  for (size_t i = 0; i < width; ++i)
    if (obs[from + i] == 1.0f) return static_cast<int>(i);
  return -1;
}
}  // namespace

TEST_CASE("Battleship: firing only at ship tiles scores 1, every tile once scores 0") {
  for (auto [id, n] : {std::pair{"BattleshipEasy-v0", 8}, std::pair{"BattleshipMedium-v0", 10},
                       std::pair{"BattleshipHard-v0", 12}}) {
    CAPTURE(id);
    auto env = make(id);
    CHECK(env->max_episode_steps() == n * n);
    env->reset(7);
    const auto board = state_of(*env);
    int ships = 0;
    double total = 0;
    recur::envs::StepResult r;
    for (int t = 0; t < n * n; ++t) {
      if (board[static_cast<size_t>(t)] != 1) continue;
      ++ships;
      r = act(*env, t);
      total += r.reward;
      CHECK(hot(r.obs, 0, 2) == 1);
    }
    CHECK(ships == 12);
    CHECK(r.terminated);
    CHECK(total == doctest::Approx(1.0));
    // Sweeping the board row by row: the episode ends on the last ship tile, having scored the
    // misses so far; a full sweep of n*n shots would sum to 0.
    env->reset(7);
    total = 0;
    for (int t = 0; t < n * n; ++t) {
      r = act(*env, t);
      total += r.reward;
      if (r.done()) break;
    }
    CHECK(r.terminated);
    const int misses = env->elapsed_steps() - 12;
    CHECK(total == doctest::Approx(1.0 - misses / static_cast<double>(n * n - 12)));
  }
}

TEST_CASE("Battleship: a second shot at a hit tile is a miss") {
  auto env = make("BattleshipEasy-v0");
  env->reset(1);
  const auto board = state_of(*env);
  int ship = 0;
  while (board[static_cast<size_t>(ship)] != 1) ++ship;
  CHECK(act(*env, ship).reward == 1.0 / 12);
  const auto again = act(*env, ship);
  CHECK(again.reward == -1.0 / (64 - 12));
  CHECK(hot(again.obs, 0, 2) == 0);
}

TEST_CASE("Concentration: a perfect memory matches every pair and scores 1") {
  for (auto [id, cards, values, limit] : {std::tuple{"ConcentrationEasy-v0", 52, 2, 104},
                                          std::tuple{"ConcentrationMedium-v0", 104, 2, 208},
                                          std::tuple{"ConcentrationHard-v0", 52, 13, 104}}) {
    CAPTURE(id);
    auto env = make(id);
    CHECK(env->max_episode_steps() == limit);
    CHECK(env->obs_dim() == cards * (values + 1));
    for (int p = 0; p < cards; ++p)
      CHECK(hot(env->reset(3), static_cast<size_t>(p * (values + 1)),
                static_cast<size_t>(values + 1)) == values);
    const auto s = state_of(*env);
    std::vector<bool> used(static_cast<size_t>(cards));
    double total = 0;
    recur::envs::StepResult r;
    for (int a = 0; a < cards; ++a) {
      if (used[static_cast<size_t>(a)]) continue;
      int b = a + 1;
      while (used[static_cast<size_t>(b)] || s[static_cast<size_t>(b)] != s[static_cast<size_t>(a)])
        ++b;
      used[static_cast<size_t>(a)] = used[static_cast<size_t>(b)] = true;
      CHECK(act(*env, a).reward == 0);
      r = act(*env, b);
      CHECK(r.reward == 1.0 / (cards / 2));
      total += r.reward;
      CHECK(hot(r.obs, static_cast<size_t>(b * (values + 1)), static_cast<size_t>(values + 1)) ==
            s[static_cast<size_t>(b)]);
    }
    CHECK(r.terminated);
    CHECK(env->elapsed_steps() == cards);
    CHECK(total == doctest::Approx(1.0));
  }
}

TEST_CASE("Concentration: mismatches and face-up cards are penalised per card in play") {
  auto env = make("ConcentrationHard-v0");
  env->reset(5);
  const auto s = state_of(*env);
  int b = 1;
  while (s[static_cast<size_t>(b)] == s[0]) ++b;
  const double fail = -1.0 / 104;
  CHECK(act(*env, 0).reward == 0);
  auto r = act(*env, b);  // a mismatch: both shown, then face down again
  CHECK(r.reward == 2 * fail);
  CHECK(hot(r.obs, 0, 14) == s[0]);
  CHECK(hot(r.obs, static_cast<size_t>(b * 14), 14) == s[static_cast<size_t>(b)]);
  CHECK(hot(act(*env, 0).obs, static_cast<size_t>(b * 14), 14) == 13);  // face down again
  r = act(*env, 0);  // the same card twice is no match
  CHECK(r.reward == 2 * fail);
  int m = 1;
  while (s[static_cast<size_t>(m)] != s[0]) ++m;
  act(*env, 0);
  CHECK(act(*env, m).reward == 1.0 / 26);
  CHECK(act(*env, m).reward == fail);  // a face-up card ends the turn at once
  act(*env, b);
  CHECK(act(*env, 0).reward == 2 * fail);
}

TEST_CASE("MineSweeper: clicking every clear tile scores 1, a mine ends the episode") {
  for (auto [id, side, mines] :
       {std::tuple{"MineSweeperEasy-v0", 4, 2}, std::tuple{"MineSweeperMedium-v0", 6, 6},
        std::tuple{"MineSweeperHard-v0", 8, 10}}) {
    CAPTURE(id);
    const int clear = side * side - mines;
    auto env = make(id);
    CHECK(env->max_episode_steps() == clear);
    env->reset(11);
    const auto grid = state_of(*env);
    double total = 0;
    recur::envs::StepResult r;
    for (int t = 0; t < side * side; ++t) {
      if (grid[static_cast<size_t>(t)] == 1) continue;
      r = act(*env, t);
      total += r.reward;
      // The number counts the mines in the 3x3 block, the tile itself included.
      int count = 0;
      for (int dr = -1; dr <= 1; ++dr)
        for (int dc = -1; dc <= 1; ++dc) {
          const int rr = t / side + dr, cc = t % side + dc;
          if (rr >= 0 && rr < side && cc >= 0 && cc < side)
            count += grid[static_cast<size_t>(rr * side + cc)] == 1;
        }
      CHECK(hot(r.obs, 0, env->observation_space().flat_size()) == count);
    }
    CHECK(r.terminated);
    CHECK(r.truncated);  // recur's base: the L-th step hits the limit (POPGym: false; see header)
    CHECK(total == doctest::Approx(1.0));
    env->reset(11);
    int mine = 0;
    while (grid[static_cast<size_t>(mine)] != 1) ++mine;
    r = act(*env, mine);
    CHECK(r.terminated);
    CHECK(r.reward == -0.5 - 1.0 / clear);
  }
  auto env = make("MineSweeperEasy-v0");
  env->reset(2);
  const auto grid = state_of(*env);
  int tile = 0;
  while (grid[static_cast<size_t>(tile)] != 0) ++tile;
  act(*env, tile);
  CHECK(act(*env, tile).reward == -0.5 / 12);
}

namespace {
// Shortest moves from the agent to every cell (the grid is the first rows*cols state values).
std::vector<int> bfs_actions(const std::vector<double>& s, int rows, int cols, int from, int to) {
  std::vector<int> prev(static_cast<size_t>(rows * cols), -1), how(prev.size(), -1);
  std::deque<int> queue{from};
  prev[static_cast<size_t>(from)] = from;
  const int dr[4] = {0, 0, -1, 1}, dc[4] = {-1, 1, 0, 0};
  while (!queue.empty()) {
    const int c = queue.front();
    queue.pop_front();
    for (int a = 0; a < 4; ++a) {
      const int r = c / cols + dr[a], k = c % cols + dc[a];
      if (r < 0 || r >= rows || k < 0 || k >= cols) continue;
      const int next = r * cols + k;
      if (s[static_cast<size_t>(next)] == 1 || prev[static_cast<size_t>(next)] >= 0) continue;
      prev[static_cast<size_t>(next)] = c;
      how[static_cast<size_t>(next)] = a;
      queue.push_back(next);
    }
  }
  std::vector<int> path;
  if (prev[static_cast<size_t>(to)] < 0) return path;
  for (int c = to; c != from; c = prev[static_cast<size_t>(c)])
    path.insert(path.begin(), how[static_cast<size_t>(c)]);
  return path;
}
}  // namespace

TEST_CASE("Labyrinths: the shortest path escapes, a tour visits every cell and scores 1") {
  for (auto [size, suffix] :
       {std::pair{10, "Easy"}, std::pair{14, "Medium"}, std::pair{18, "Hard"}}) {
    const int rows = size + 1, cols = size + 1, n = rows * cols;
    auto escape = make(std::string("LabyrinthEscape") + suffix + "-v0");
    CHECK(escape->max_episode_steps() == 1023);
    int escaped = 0;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      CAPTURE(seed);
      const auto obs = escape->reset(seed);
      CHECK(hot(obs, 9 * 5, 5) == 4);
      const auto s = state_of(*escape);
      // The agent stands on the start, in the window's centre unless at the top or left edge.
      if (s[2 * n] > 0 && s[2 * n + 1] > 0) CHECK(hot(obs, 4 * 5, 5) == 2);
      const int from = static_cast<int>(s[2 * n]) * cols + static_cast<int>(s[2 * n + 1]);
      int goal = 0, open = 0;
      for (int c = 0; c < n; ++c) {
        if (s[static_cast<size_t>(c)] == 3) goal = c;
        open += s[static_cast<size_t>(c)] != 1;
      }
      const auto path = bfs_actions(s, rows, cols, from, goal);
      if (path.empty()) continue;  // mazelib can leave the room by the exit uncarved
      ++escaped;
      recur::envs::StepResult r;
      for (int a : path) r = act(*escape, a);
      CHECK(r.terminated);
      CHECK(r.reward == -1.0 / 1024 + 1.0);
      CHECK(escape->episode_return() ==
            doctest::Approx(1.0 - static_cast<double>(path.size()) / 1024.0));
    }
    CHECK(escaped >= 15);

    auto explore = make(std::string("LabyrinthExplore") + suffix + "-v0");
    explore->reset(4);
    auto s = state_of(*explore);
    int free_cells = 0;
    for (int c = 0; c < n; ++c) free_cells += s[static_cast<size_t>(c)] == 0;
    // Greedy tour: walk to the nearest unvisited open cell until none is left.
    recur::envs::StepResult r;
    for (int guard = 0; guard < n && !r.done(); ++guard) {
      s = state_of(*explore);
      const int from = static_cast<int>(s[2 * n]) * cols + static_cast<int>(s[2 * n + 1]);
      std::vector<int> best;
      for (int c = 0; c < n; ++c) {
        if (s[static_cast<size_t>(c)] == 1 || s[static_cast<size_t>(n + c)] == 1) continue;
        const auto path = bfs_actions(s, rows, cols, from, c);
        if (!path.empty() && (best.empty() || path.size() < best.size())) best = path;
      }
      for (int a : best) r = act(*explore, a);
    }
    CHECK(r.terminated);
    // Every first visit pays 1/F and every other step -1/1024.
    const int steps = explore->elapsed_steps();
    CHECK(explore->episode_return() == doctest::Approx(1.0 - (steps - free_cells) / 1024.0));
  }
}

TEST_CASE("Labyrinths: the window at the top or left edge starts at the agent (POPGym's quirk)") {
  auto env = make("LabyrinthExploreEasy-v0");
  // Find a maze whose start is on the north wall: the window's first row is the agent's.
  for (uint64_t seed = 0; seed < 100; ++seed) {
    env->reset(seed);
    const auto s = state_of(*env);
    const int n = 121;
    if (s[2 * n] != 0) continue;
    const auto obs = env->observation();
    CHECK(hot(obs, 1 * 5, 5) == 2);  // the agent: row 0, column 1 of the window
    CHECK(hot(obs, 4 * 5, 5) == 0);  // the room below it
    for (int j = 0; j < 3; ++j)
      CHECK(hot(obs, static_cast<size_t>((6 + j) * 5), 5) == 1);  // padding
    return;
  }
  FAIL("no north start in 100 seeds");
}

TEST_CASE("POPGym board envs: state round trips, bad states and bad options are errors") {
  for (std::string id : {"BattleshipMedium-v0", "ConcentrationMedium-v0", "MineSweeperMedium-v0",
                         "LabyrinthEscapeMedium-v0", "LabyrinthExploreMedium-v0"}) {
    CAPTURE(id);
    auto a = make(id), b = make(id);
    a->reset(1);
    b->reset(2);
    for (int t = 0; t < 3; ++t) act(*a, t);
    const auto s = state_of(*a);
    b->set_state(s);
    CHECK(state_of(*b) == s);
    CHECK(std::vector<float>(a->observation().begin(), a->observation().end()) ==
          std::vector<float>(b->observation().begin(), b->observation().end()));
    for (double bad : {-2.0, 0.5, 1e6, std::nan("")}) {
      auto garbage = s;
      garbage[0] = bad;
      CHECK_THROWS_AS(b->set_state(garbage), std::invalid_argument);
      garbage = s;
      garbage.back() = bad;
      CHECK_THROWS_AS(b->set_state(garbage), std::invalid_argument);
    }
    CHECK(state_of(*b) == s);  // a rejected state leaves the env as it was
  }
  auto bad = [](const char* id, const char* key, const char* value) {
    CAPTURE(id);
    CAPTURE(key);
    CHECK_THROWS_AS(make(id, Options{}.set(key, value)), recur::Error);
  };
  bad("BattleshipEasy-v0", "board_size", "7");
  bad("BattleshipEasy-v0", "board_size", "10");  // a longer episode without max_episode_steps
  bad("ConcentrationEasy-v0", "deck_type", "2");
  bad("ConcentrationEasy-v0", "num_decks", "0");
  bad("MineSweeperEasy-v0", "num_mines", "14");
  bad("LabyrinthEscapeEasy-v0", "maze_height", "11");
  bad("LabyrinthExploreEasy-v0", "maze_width", "4");
  bad("LabyrinthExploreEasy-v0", "episode_length", "100");
  // With the matching limit the same options work.
  auto big =
      make("BattleshipEasy-v0", Options{}.set("board_size", "10").set("max_episode_steps", "100"));
  CHECK(big->action_space().n() == 100);
  auto colors = make("ConcentrationHard-v0", Options{}.set("deck_type", "0"));
  CHECK(colors->obs_dim() == 52 * 3);
  auto tall = make("LabyrinthEscapeEasy-v0", Options{}.set("maze_height", "14"));
  tall->reset(0);
  CHECK(tall->state_size() == 2 * 15 * 11 + 3);
}

TEST_CASE("POPGym board pictures show the hidden truth, not only what the agent sees") {
  // Two resets give the agent the same first observation but different hidden boards (ships,
  // deck, mines, maze): the pictures must differ, since they draw the truth faintly.
  for (const char* id : {"BattleshipEasy-v0", "ConcentrationEasy-v0", "MineSweeperEasy-v0",
                         "LabyrinthEscapeEasy-v0", "LabyrinthExploreEasy-v0"}) {
    CAPTURE(id);
    auto a = make(id), b = make(id);
    const auto first_a = a->reset(1);
    const std::vector<float> obs_a(first_a.begin(), first_a.end());
    const auto first_b = b->reset(2);
    const std::vector<float> obs_b(first_b.begin(), first_b.end());
    recur::envs::render::Renderer ra(*a), rb(*b);
    const auto& fa = ra.render(*a);
    const auto& fb = rb.render(*b);
    REQUIRE(fa.pixels.size() == fb.pixels.size());
    if (std::string(id).find("Labyrinth") == std::string::npos) CHECK(obs_a == obs_b);
    CHECK(fa.pixels != fb.pixels);
  }
}
