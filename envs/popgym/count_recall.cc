#include "envs/popgym/count_recall.h"

#include <utility>

#include "core/error.h"
#include "envs/popgym/sequences_render.h"

namespace recur::envs {
namespace {
namespace seq = popgym::sequences;
}  // namespace

CountRecallConfig CountRecallConfig::read(OptionReader& options, CountRecallConfig defaults) {
  CountRecallConfig c = defaults;
  c.num_decks = static_cast<int>(options.get_int("num_decks", c.num_decks));
  RECUR_CHECK(c.num_decks >= 1 && c.num_decks <= 1000, "CountRecall: num_decks = {}; use 1..1000",
              c.num_decks);
  return c;
}

CountRecall::CountRecall(const CountRecallConfig& config)
    : Env(Space::box(0.0f, 1.0f, {2 * seq::num_values(config.deck_type)}),
          // POPGym: Discrete(max_card_count + 1), every count from 0 to all of a kind
          Space::discrete(config.num_decks * seq::kDeckSize / seq::num_values(config.deck_type) +
                          1)),
      config_(config),
      num_kinds_(seq::num_values(config.deck_type)),
      values_(static_cast<size_t>(config.num_decks * seq::kDeckSize)),
      queries_(values_.size()) {
  RECUR_CHECK_ARG(config.num_decks >= 1, "CountRecall: num_decks = {} must be >= 1",
                  config.num_decks);
  // POPGym: reward_scale = 1 / max_episode_length = 1 / (num_cards - 1), in double.
  reward_scale_ = 1.0 / (num_cards() - 1);
}

void CountRecall::reset_impl(Rng& rng, std::optional<uint64_t> /*seed*/) {
  seq::shuffle_deck(config_.deck_type, values_, rng);
  seq::shuffle_deck(config_.deck_type, queries_, rng);
  dealt_ = 1;
  recount();
}

void CountRecall::recount() {
  counts_.fill(0);
  for (int i = 0; i < dealt_; ++i) ++counts_[values_[static_cast<size_t>(i)]];
}

Env::Outcome CountRecall::step_impl(std::span<const float> action) {
  RECUR_CHECK(dealt_ < num_cards(), "CountRecall: every card is dealt; the episode is over");
  // The answer is the count when the current query was shown, before this step's deal.
  const int answer = counts_[queries_[static_cast<size_t>(dealt_ - 1)]];
  ++counts_[values_[static_cast<size_t>(dealt_)]];
  ++dealt_;
  Outcome out;
  out.reward = static_cast<int>(action[0]) == answer ? reward_scale_ : -reward_scale_;
  out.terminated = dealt_ == num_cards();  // POPGym checks after dealing
  return out;
}

void CountRecall::observe(std::span<float> obs) const {
  const auto newest = static_cast<size_t>(dealt_ - 1);
  seq::write_one_hot(obs, num_kinds_, values_[newest]);
  seq::write_one_hot(obs.subspan(static_cast<size_t>(num_kinds_)), num_kinds_, queries_[newest]);
}

void CountRecall::get_state(std::span<double> out) const {
  const size_t n = values_.size();
  seq::write_deck_state(values_, out);
  seq::write_deck_state(queries_, out.subspan(n));
  out[2 * n] = dealt_;
}

void CountRecall::set_state_impl(std::span<const double> state) {
  const size_t n = values_.size();
  const int dealt =
      seq::read_count_state("CountRecall", "cards dealt", state[2 * n], 1, num_cards());
  // Read into copies first so that a bad query deck leaves the state unchanged.
  std::vector<uint8_t> values(n), queries(n);
  seq::read_deck_state("CountRecall (value deck)", config_.deck_type, state, values);
  seq::read_deck_state("CountRecall (query deck)", config_.deck_type, state.subspan(n), queries);
  values_ = std::move(values);
  queries_ = std::move(queries);
  dealt_ = dealt;
  recount();
}

// The value card and the query card, and the counts of every kind so far (hidden state: the
// columns the agent must keep in memory); the queried kind's column is highlighted.
void CountRecall::draw(render::Canvas& canvas) const {
  namespace seq = popgym::sequences;
  const auto newest = static_cast<size_t>(dealt_ - 1);
  const auto face = [this](int kind) {
    switch (config_.deck_type) {
      case seq::CardField::kColor:
        return seq::CardFace{.color = kind};
      case seq::CardField::kSuit:
        return seq::CardFace{.suit = kind};
      case seq::CardField::kRank:
        break;
    }
    return seq::CardFace{.rank = kind};
  };
  const int query = queries_[newest];
  seq::draw_text(canvas, {300, 368}, 20, "CountRecall: deal {} of {}; answer {}", dealt_,
                 num_cards(), counts_[static_cast<size_t>(query)]);
  seq::draw_card(canvas, {100, 200}, face(values_[newest]));
  seq::draw_card(canvas, {260, 200}, face(query));
  seq::draw_text(canvas, {100, 72}, 18, "dealt");
  seq::draw_text(canvas, {260, 72}, 18, "query");
  const double left = 360, width = 220.0 / num_kinds_;
  const double most = static_cast<double>(num_cards()) / num_kinds_;
  for (int k = 0; k < num_kinds_; ++k) {
    const render::Color color =
        k == query ? render::Color{200, 120, 30} : render::Color{90, 90, 90};
    seq::draw_column(canvas, {left + k * width + 1, 110}, width - 2, 190,
                     counts_[static_cast<size_t>(k)] / most, color);
  }
  seq::draw_text(canvas, {470, 72}, 18, "counts so far");
  seq::draw_progress(canvas, static_cast<double>(dealt_) / num_cards());
}

}  // namespace recur::envs
