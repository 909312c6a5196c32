#include "envs/popgym/sequences_deck.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "core/error.h"

namespace recur::envs::popgym::sequences {

int num_values(CardField field) {
  switch (field) {
    case CardField::kColor:
      return 2;
    case CardField::kSuit:
      return 4;
    case CardField::kRank:
      return 13;
  }
  RECUR_ASSERT(false);
}

int card_value(CardField field, int card) {
  switch (field) {
    case CardField::kColor:
      return card % 2;
    case CardField::kSuit:
      return card % 4;
    case CardField::kRank:
      return (card % kDeckSize) / 4;
  }
  RECUR_ASSERT(false);
}

void shuffle_deck(CardField field, std::span<uint8_t> deck, Rng& rng) {
  for (size_t i = 0; i < deck.size(); ++i)
    deck[i] = static_cast<uint8_t>(card_value(field, static_cast<int>(i)));
  for (size_t i = deck.size() - 1; i > 0; --i)
    std::swap(deck[i], deck[static_cast<size_t>(rng.uniform_int(i + 1))]);
}

void write_deck_state(std::span<const uint8_t> deck, std::span<double> out) {
  for (size_t i = 0; i < deck.size(); ++i) out[i] = deck[i];
}

void read_deck_state(std::string_view env, CardField field, std::span<const double> state,
                     std::span<uint8_t> deck) {
  const int n = num_values(field);
  std::array<int, 13> counts{};
  for (size_t i = 0; i < deck.size(); ++i) {
    const double v = state[i];
    RECUR_CHECK_ARG(v >= 0 && v < n && v == std::floor(v),
                    "{}: state[{}] = {} is not a card (an integer in [0, {}))", env, i, v, n);
    ++counts[static_cast<size_t>(v)];
  }
  // A fresh deck holds each value equally often (52 is a multiple of 2, 4 and 13).
  const int each = static_cast<int>(deck.size()) / n;
  for (int v = 0; v < n; ++v)
    RECUR_CHECK_ARG(counts[static_cast<size_t>(v)] == each,
                    "{}: the deck in the state holds value {} {} times; a deck of {} cards holds "
                    "each of the {} values {} times",
                    env, v, counts[static_cast<size_t>(v)], deck.size(), n, each);
  for (size_t i = 0; i < deck.size(); ++i) deck[i] = static_cast<uint8_t>(state[i]);
}

int read_count_state(std::string_view env, const char* what, double value, int low, int high) {
  RECUR_CHECK_ARG(value >= low && value <= high && value == std::floor(value),
                  "{}: {} = {} in the state; expected an integer in [{}, {}]", env, what, value,
                  low, high);
  return static_cast<int>(value);
}

void write_one_hot(std::span<float> obs, int n, int index) {
  std::fill(obs.begin(), obs.begin() + n, 0.0f);
  obs[static_cast<size_t>(index)] = 1.0f;
}

}  // namespace recur::envs::popgym::sequences
