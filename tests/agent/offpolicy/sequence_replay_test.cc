#include "agent/offpolicy/sequence_replay.h"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "tests/agent/offpolicy/fake_stream.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"

using namespace recur;
using agent::offpolicy::ReplayBatch;
using agent::offpolicy::ReplaySpec;
using agent::offpolicy::SequenceReplay;
using recur::test::FakeStream;
using recur::test::fl;
using recur::test::kAct;
using recur::test::kObs;
using recur::test::make_spec;

namespace {

float at(const policy::AlignedVector<float>& v, int k, int b, int B, int dim = 1, int d = 0) {
  return v[static_cast<size_t>((k * B + b) * dim + d)];
}

struct WindowCounts {
  int from_episode_start = 0, mid_episode = 0, reached_end = 0;
};

// Every property a window must have, checked against the stream that produced it.
WindowCounts check_batch(const SequenceReplay& rb, const ReplayBatch& batch,
                         const FakeStream& fake) {
  const ReplaySpec& spec = rb.spec();
  const int B = batch.B, L = batch.L, ss = spec.state_size;
  const int64_t R = spec.rows_per_env();
  WindowCounts counts;
  for (int b = 0; b < B; ++b) {
    const int len = batch.length[b];
    INFO("window ", b, " length ", len);
    REQUIRE(len >= 1);
    REQUIRE(len <= L);
    const int n = static_cast<int>(at(batch.obs, 0, b, B, kObs, 0));
    const int e = static_cast<int>(at(batch.obs, 0, b, B, kObs, 1));
    const int step0 = static_cast<int>(at(batch.obs, 0, b, B, kObs, 2));
    const int64_t pos0 = static_cast<int64_t>(at(batch.obs, 0, b, B, kObs, 3));
    const int64_t stored = fake.envs[n].stored;
    CHECK(pos0 >= std::max<int64_t>(0, stored - R));  // only the ring's rows
    const bool from_start = step0 == 0;
    for (int k = 0; k < L; ++k) {
      const bool valid = k < len;
      CHECK(at(batch.valid, k, b, B) == (valid ? 1.0f : 0.0f));
      CHECK(at(batch.loss_mask, k, b, B) ==
            (valid && (k >= spec.burn_in || from_start) ? 1.0f : 0.0f));
      if (valid) {  // one episode, consecutive steps
        CHECK(at(batch.obs, k, b, B, kObs, 0) == n);
        CHECK(at(batch.obs, k, b, B, kObs, 1) == e);
        CHECK(at(batch.obs, k, b, B, kObs, 2) == step0 + k);
        CHECK(at(batch.obs, k, b, B, kObs, 3) == pos0 + k);
        CHECK(at(batch.actions, k, b, B, kAct, 0) == fl(1000 * n + step0 + k));
        CHECK(at(batch.actions, k, b, B, kAct, 1) == fl(e));
        CHECK(at(batch.rewards, k, b, B) == fl(n) + 0.5f * fl(step0 + k));
      } else {
        CHECK(at(batch.actions, k, b, B, kAct, 0) == 0.0f);
        CHECK(at(batch.rewards, k, b, B) == 0.0f);
      }
      const bool ends_here = valid && k == len - 1 && step0 + k + 1 == FakeStream::ep_len(n, e);
      CHECK(at(batch.terminated, k, b, B) ==
            (ends_here && FakeStream::ep_terminates(n, e) ? 1.0f : 0.0f));
    }
    // The bootstrap observation: the step's next observation, the final one at an episode's end.
    CHECK(at(batch.obs, len, b, B, kObs, 0) == n);
    CHECK(at(batch.obs, len, b, B, kObs, 1) == e);
    CHECK(at(batch.obs, len, b, B, kObs, 2) == step0 + len);
    CHECK(at(batch.obs, len, b, B, kObs, 3) == pos0 + len);
    for (int k = len + 1; k <= L; ++k)
      for (int d = 0; d < kObs; ++d) CHECK(at(batch.obs, k, b, B, kObs, d) == 0.0f);
    const bool reached_end = step0 + len == FakeStream::ep_len(n, e);
    counts.reached_end += reached_end;
    // A short window stopped at the episode's end or at the env's newest row, nowhere else.
    if (len < L) CHECK((reached_end || pos0 + len == stored));
    // Reset flags: at k = 0 exactly when the window starts at an episode's first step.
    CHECK(batch.episode_start[static_cast<size_t>(b)] == (from_start || ss == 0 ? 1 : 0));
    for (int k = 1; k <= L; ++k) CHECK(batch.episode_start[static_cast<size_t>(k * B + b)] == 0);
    if (from_start)
      ++counts.from_episode_start;
    else
      ++counts.mid_episode;
    if (ss > 0) {
      // Stored state: zero at an episode start (the actor's stale state was not kept), else the
      // state add() was given at that row, which must be a stored-state row.
      const auto& given = fake.given.at({n, e, step0});
      for (int j = 0; j < ss; ++j) {
        const float want = from_start ? 0.0f : given[static_cast<size_t>(j)];
        CHECK(batch.initial_state[static_cast<size_t>(b * ss + j)] == want);
      }
      if (!from_start) CHECK(pos0 % spec.state_stride == 0);
    }
  }
  return counts;
}

bool same_batch(const ReplayBatch& a, const ReplayBatch& b) {
  return a.L == b.L && a.B == b.B && a.obs == b.obs && a.actions == b.actions &&
         a.rewards == b.rewards && a.terminated == b.terminated && a.valid == b.valid &&
         a.loss_mask == b.loss_mask && a.episode_start == b.episode_start &&
         a.initial_state == b.initial_state && a.length == b.length;
}

// The window start the header promises for the anchor at position a of env n, computed by brute
// force over the stream's log (not the buffer's walk): -1 where the anchor is redrawn.
int64_t reference_start(const FakeStream& fake, const ReplaySpec& spec, int n, int64_t a) {
  const auto& log = fake.log[n];
  const int64_t lo = std::max<int64_t>(0, fake.envs[n].stored - spec.rows_per_env());
  const int episode = log[a].first;
  int64_t first_in_ring = a;
  while (first_in_ring > lo && log[first_in_ring - 1].first == episode) --first_in_ring;
  if (spec.state_size == 0) return std::max(first_in_ring, a - spec.burn_in);
  int64_t best = -1;
  for (int64_t p = first_in_ring; p <= a; ++p) {
    const bool episode_start = log[p].second == 0;
    if (episode_start || (p % spec.state_stride == 0 && p <= a - spec.burn_in)) best = p;
  }
  if (best >= 0) return best;
  for (int64_t p = first_in_ring; p <= a; ++p)
    if (p % spec.state_stride == 0) return p;
  return -1;
}

}  // namespace

TEST_CASE("sequence replay: windows hold one episode, stored states, masks and reset flags") {
  for (const int state_size : {2, 0}) {
    for (const int calls : {60, 400}) {  // the second wraps every ring several times
      INFO("state_size ", state_size, ", calls ", calls);
      const ReplaySpec spec = make_spec(3, 50, 5, 3, 4, state_size);
      SequenceReplay rb(spec);
      FakeStream fake(3, state_size);
      for (int t = 0; t < calls; ++t) {
        fake.next_step();
        fake.add_to(rb);
      }
      CHECK(rb.added() == fake.stored_total());
      int64_t expect_size = 0;
      for (const auto& v : fake.envs) expect_size += std::min<int64_t>(v.stored, 50);
      CHECK(rb.size() == expect_size);
      ReplayBatch batch;
      rb.reserve_batch(256, batch);
      Rng rng(11);
      WindowCounts total;
      for (int round = 0; round < 8; ++round) {
        rb.sample(256, rng, batch);
        const WindowCounts c = check_batch(rb, batch, fake);
        total.from_episode_start += c.from_episode_start;
        total.mid_episode += c.mid_episode;
        total.reached_end += c.reached_end;
      }
      // Both kinds of window and episode ends were seen, so the checks above had work to do.
      CHECK(total.from_episode_start > 0);
      CHECK(total.mid_episode > 0);
      CHECK(total.reached_end > 0);
    }
  }
}

TEST_CASE("sequence replay: window starts follow the documented rule, anchors drawn uniformly") {
  for (const int state_size : {2, 0}) {
    INFO("state_size ", state_size);
    // Env 0 wraps its 64 rows; env 1 loses steps to resets and does not: unequal env weights.
    const ReplaySpec spec = make_spec(2, 64, 4, 3, 2, state_size);
    SequenceReplay rb(spec);
    FakeStream fake(2, state_size);
    for (int t = 0; t < 70; ++t) {
      fake.next_step();
      fake.add_to(rb);
    }
    REQUIRE(fake.envs[0].stored > 64);
    REQUIRE(fake.envs[1].stored < 64);
    std::map<std::pair<int, int64_t>, double> expected;  // (env, start) -> anchors mapping there
    double accepted = 0;
    for (int n = 0; n < 2; ++n) {
      const int64_t lo = std::max<int64_t>(0, fake.envs[n].stored - 64);
      for (int64_t a = lo; a < fake.envs[n].stored; ++a) {
        const int64_t s = reference_start(fake, spec, n, a);
        if (s < 0) continue;
        expected[{n, s}] += 1;
        accepted += 1;
      }
    }
    std::map<std::pair<int, int64_t>, double> seen;
    const int B = 1000, rounds = 40;
    ReplayBatch batch;
    rb.reserve_batch(B, batch);
    Rng rng(5);
    for (int r = 0; r < rounds; ++r) {
      rb.sample(B, rng, batch);
      for (int b = 0; b < B; ++b)
        seen[{static_cast<int>(at(batch.obs, 0, b, B, kObs, 0)),
              static_cast<int64_t>(at(batch.obs, 0, b, B, kObs, 3))}] += 1;
    }
    std::set<std::pair<int, int64_t>> expected_starts, seen_starts;
    for (const auto& [k, v] : expected) expected_starts.insert(k);
    for (const auto& [k, v] : seen) seen_starts.insert(k);
    CHECK(seen_starts == expected_starts);
    const double draws = static_cast<double>(B) * rounds;
    for (const auto& [k, v] : expected) {
      const double p = v / accepted, mean = p * draws, sd = std::sqrt(draws * p * (1 - p));
      INFO("env ", k.first, " start ", k.second);
      CHECK(std::abs(seen[k] - mean) <= 5 * sd + 1);  // 5 sigma: a wrong rule moves whole anchors
    }
  }
}

TEST_CASE("sequence replay: reset steps are not stored, sizes and added count transitions") {
  const ReplaySpec spec = make_spec(2, 1000, 3, 0, 1, 1);
  SequenceReplay rb(spec);
  FakeStream fake(2, 1);
  int reset_steps = 0;
  for (int t = 0; t < 30; ++t) {
    fake.next_step();
    reset_steps += fake.trans[1] == 0;
    fake.add_to(rb);
  }
  REQUIRE(reset_steps > 0);
  CHECK(rb.added() == 60 - reset_steps);
  CHECK(rb.size() == 60 - reset_steps);
  ReplayBatch batch;
  rb.reserve_batch(512, batch);
  Rng rng(3);
  rb.sample(512, rng, batch);
  check_batch(rb, batch, fake);  // consecutive stream positions: no hole where a reset was
  for (const float v : batch.obs) CHECK(v >= 0.0f);  // the reset steps' -1 garbage never shows
}

TEST_CASE("sequence replay: ring wrap keeps the newest rows of each env") {
  const ReplaySpec spec = make_spec(3, 20, 4, 2, 2, 2);
  SequenceReplay rb(spec);
  FakeStream fake(3, 2);
  for (int t = 0; t < 200; ++t) {
    fake.next_step();
    fake.add_to(rb);
  }
  CHECK(rb.size() == 60);
  CHECK(rb.added() == fake.stored_total());
  ReplayBatch batch;
  rb.reserve_batch(500, batch);
  Rng rng(9);
  std::set<std::pair<int, int64_t>> rows;
  for (int r = 0; r < 10; ++r) {
    rb.sample(500, rng, batch);
    check_batch(rb, batch, fake);  // includes: every position >= stored - R
    for (int b = 0; b < 500; ++b)
      for (int k = 0; k < batch.length[b]; ++k)
        rows.insert({static_cast<int>(at(batch.obs, k, b, 500, kObs, 0)),
                     static_cast<int64_t>(at(batch.obs, k, b, 500, kObs, 3))});
  }
  // Every surviving row is reachable, and nothing older.
  std::set<std::pair<int, int64_t>> newest;
  for (int n = 0; n < 3; ++n)
    for (int64_t p = fake.envs[n].stored - 20; p < fake.envs[n].stored; ++p) newest.insert({n, p});
  CHECK(rows == newest);
}

TEST_CASE("sequence replay: episode boundaries hold without their flags") {
  // One env, rows added by hand. Rows 0-1 are an episode that ends truncated; row 2 is NOT flagged
  // as an episode start but follows an end; row 4 is flagged a start although row 3 did not end
  // (an env reset from outside). Both open a new episode all the same.
  ReplaySpec spec = make_spec(1, 10, 4, 1, 1, 1);
  spec.obs_dim = 1;
  spec.action_dim = 1;
  SequenceReplay rb(spec);
  auto add = [&](float o, uint8_t trunc, uint8_t start, float state) {
    const float a = 0, r = 0, next = o + 0.5f;
    const uint8_t term = 0;
    rb.add({&o, 1}, {&a, 1}, {&r, 1}, {&term, 1}, {&trunc, 1}, {&next, 1}, {&start, 1},
           {&state, 1});
  };
  add(0, 0, 1, 7);
  add(1, 1, 0, 8);
  add(2, 0, 0, 9);  // start flag missing
  add(3, 0, 0, 10);
  add(4, 0, 1, 11);  // start without an end before it
  ReplayBatch batch;
  rb.reserve_batch(64, batch);
  Rng rng(1);
  rb.sample(64, rng, batch);
  std::set<float> starts;
  for (int b = 0; b < 64; ++b) {
    const auto col = static_cast<size_t>(b);
    const float o0 = batch.obs[col];
    const int len = batch.length[col];
    starts.insert(o0);
    // Every window starts at an episode start (burn-in 1 reaches back to it), with a zero state.
    CHECK(batch.episode_start[col] == 1);
    CHECK(batch.initial_state[col] == 0.0f);
    CHECK(len == (o0 == 4.0f ? 1 : 2));
    CHECK(batch.obs[static_cast<size_t>(len * 64 + b)] == o0 + fl(len) - 0.5f);  // the bootstrap
  }
  CHECK(starts == std::set<float>{0.0f, 2.0f, 4.0f});
}

TEST_CASE("sequence replay: equal streams and seeds give equal batches") {
  const ReplaySpec spec = make_spec(3, 40, 6, 2, 3, 2);
  SequenceReplay a(spec), b(spec);
  FakeStream fake(3, 2);
  for (int t = 0; t < 150; ++t) {
    fake.next_step();
    fake.add_to(a);
    fake.add_to(b);
  }
  ReplayBatch ba, bb;
  a.reserve_batch(128, ba);
  b.reserve_batch(128, bb);
  Rng ra(42), rb(42);
  for (int r = 0; r < 3; ++r) {
    a.sample(128, ra, ba);
    b.sample(128, rb, bb);
    CHECK(same_batch(ba, bb));
  }
  Rng rc(43);
  b.sample(128, rc, bb);
  CHECK_FALSE(same_batch(ba, bb));  // the comparison can fail: another seed, another batch
}

TEST_CASE("sequence replay: save and restore reproduce the buffer, mismatches change nothing") {
  const ReplaySpec spec = make_spec(3, 40, 6, 2, 3, 2);
  SequenceReplay a(spec);
  FakeStream fake(3, 2);
  for (int t = 0; t < 150; ++t) {
    fake.next_step();
    fake.add_to(a);
  }
  policy::TensorMap tensors;
  nlohmann::json meta;
  a.save(tensors, meta, "replay.");
  CHECK(tensors.count("replay.states") == 1);

  SequenceReplay b(spec);
  b.restore(tensors, meta, "replay.");
  CHECK(b.size() == a.size());
  CHECK(b.added() == a.added());
  {  // everything saved came back
    policy::TensorMap again;
    nlohmann::json again_meta;
    b.save(again, again_meta, "replay.");
    CHECK(again == tensors);
    CHECK(again_meta == meta);
  }
  ReplayBatch ba, bb;
  a.reserve_batch(200, ba);
  b.reserve_batch(200, bb);
  {
    Rng ra(7), rb(7);
    a.sample(200, ra, ba);
    b.sample(200, rb, bb);
    CHECK(same_batch(ba, bb));
  }
  // The counters came along too: the same further steps keep the two buffers equal.
  for (int t = 0; t < 25; ++t) {
    fake.next_step();
    fake.add_to(a);
    fake.add_to(b);
  }
  {
    Rng ra(8), rb(8);
    a.sample(200, ra, ba);
    b.sample(200, rb, bb);
    CHECK(same_batch(ba, bb));
    check_batch(b, bb, fake);
  }

  // A buffer of another shape refuses the checkpoint and keeps its own data.
  auto refuses = [&](const ReplaySpec& other_spec, int state_size, const policy::TensorMap& t,
                     const std::string& message_part) {
    SequenceReplay other(other_spec);
    if (other_spec.obs_dim == kObs) {
      FakeStream f(other_spec.num_envs, state_size);
      for (int i = 0; i < 37; ++i) {
        f.next_step();
        f.add_to(other);
      }
    }
    policy::TensorMap before_t, after_t;
    nlohmann::json before_m, after_m;
    other.save(before_t, before_m, "replay.");
    std::string message;
    try {
      other.restore(t, meta, "replay.");
    } catch (const recur::Error& e) {
      message = e.what();
    }
    INFO(message);
    CHECK(message.find(message_part) != std::string::npos);
    other.save(after_t, after_m, "replay.");
    CHECK(before_t == after_t);
    CHECK(before_m == after_m);
  };
  refuses(make_spec(3, 40, 6, 2, 3, 3), 3, tensors, "2 floats of recurrent state");
  refuses(make_spec(3, 40, 6, 2, 3, 0), 0, tensors, "this run's core needs 0");
  ReplaySpec wide = spec;
  wide.obs_dim = kObs + 1;
  refuses(wide, 2, tensors, "observations of 4 floats");
  refuses(make_spec(3, 41, 6, 2, 3, 2), 2, tensors, "rows per env");
  // Meta right but the last tensor copied misshapen: the check precedes every copy.
  policy::TensorMap bad = tensors;
  bad["replay.states"].shape = {3, 13, 2, 1};
  refuses(spec, 2, bad, "replay.states has shape (3, 13, 2, 1)");
  bad = tensors;
  bad.erase("replay.next_obs");
  refuses(spec, 2, bad, "lacks the replay tensor replay.next_obs");
}

TEST_CASE("sequence replay: ReplaySpec::validate names the field") {
  auto message = [](const ReplaySpec& s) -> std::string {
    try {
      s.validate();
    } catch (const recur::Error& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message(make_spec(2, 6, 4, 2, 1, 2)) == "");
  // 2 envs * 5 rows: a ring of 5 cannot hold a window of 2 + 4.
  CHECK(message(make_spec(2, 5, 4, 2, 1, 2)).find("capacity 10 gives 5 rows per env") !=
        std::string::npos);
  CHECK(message(make_spec(2, 6, 4, 2, 5, 2)).find("state_stride 5 is longer than seq_len 4") !=
        std::string::npos);
  CHECK(message(make_spec(2, 6, 4, 2, 5, 0)) == "");  // the stride is unused in zero-state mode
  CHECK(message(make_spec(2, 6, 4, -1, 1, 2)).find("burn_in") != std::string::npos);
  CHECK(message(make_spec(2, 6, 0, 2, 1, 2)).find("seq_len") != std::string::npos);
  CHECK(message(make_spec(2, 6, 4, 2, 0, 2)).find("state_stride") != std::string::npos);
  CHECK(message(make_spec(2, 6, 4, 2, 1, -3)).find("state_size") != std::string::npos);
  ReplaySpec no_envs = make_spec(2, 6, 4, 2, 1, 2);
  no_envs.num_envs = 0;
  CHECK(message(no_envs).find("num_envs") != std::string::npos);
  CHECK_THROWS_AS(SequenceReplay(make_spec(2, 5, 4, 2, 1, 2)), recur::Error);
  // Stored states cost S = ceil(R / stride) slots of state_size floats per env.
  CHECK(make_spec(2, 9, 4, 2, 2, 3).bytes() - make_spec(2, 9, 4, 2, 2, 0).bytes() ==
        2 * 5 * 3 * sizeof(float));
}

TEST_CASE("sequence replay: add and sample allocate nothing, wrong sizes are refused") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  const ReplaySpec spec = make_spec(3, 30, 5, 2, 2, 2);
  SequenceReplay rb(spec);
  FakeStream fake(3, 2);
  ReplayBatch batch;
  rb.reserve_batch(64, batch);
  Rng rng(2);
  fake.next_step();
  size_t allocations = 0;
  for (int t = 0; t < 100; ++t) {
    {
      recur::test::AllocationCounter counter;
      fake.add_to(rb);
      rb.sample(64, rng, batch);
      allocations += counter.count();
    }
    fake.next_step();  // the fake's own bookkeeping allocates: outside the counter
  }
  CHECK(allocations == 0);
  std::vector<float> short_obs(2);
  CHECK_THROWS_AS(rb.add(short_obs, fake.act, fake.rew, fake.term, fake.trunc, fake.next,
                         fake.start, fake.states, fake.trans),
                  std::invalid_argument);
  ReplayBatch small;
  rb.reserve_batch(8, small);
  CHECK_THROWS_AS(rb.sample(64, rng, small), std::invalid_argument);
  SequenceReplay empty(spec);
  CHECK_THROWS_AS(empty.sample(64, rng, batch), std::invalid_argument);
}
