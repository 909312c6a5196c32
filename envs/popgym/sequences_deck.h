// The part of POPGym's card deck (popgym/core/deck.py) that the sequence envs use: a shuffled
// pile of num_decks * 52 cards of which an env sees one field (colour, suit or rank).
//
// POPGym numbers the cards of a fresh deck 0..52*num_decks-1 and reads their fields by index:
//   colour  i % 2                 (0 black, 1 red: COLORS tiled over the cards)
//   suit    i % 4                 (0 spades, 1 diamonds, 2 clubs, 3 hearts: SUITS tiled)
//   rank    (i % 52) / 4          (0 ace, 1..9 the twos to tens, 10 jack, 11 queen, 12 king)
// reset shuffles the indices and deal() takes cards from the end of the shuffled array. recur
// keeps only the field the env needs, in deal order (element 0 is dealt first); a uniform shuffle
// of the deal order is a uniform shuffle of POPGym's array, reversed.
//
// The envs' states hold such a deck as doubles (one per card); read_deck_state checks that a
// state names a real deck: integer fields, each value as often as a fresh deck holds it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/rng.h"

namespace recur::envs::popgym::sequences {

inline constexpr int kDeckSize = 52;  // cards in one deck

enum class CardField { kColor, kSuit, kRank };

// Distinct values of the field: 2, 4 or 13.
int num_values(CardField field);
// The field of card `card` of a fresh (unshuffled) deck.
int card_value(CardField field, int card);

// Fills `deck` (52 * num_decks entries) with the field of every card of a fresh deck and shuffles
// it uniformly (Fisher-Yates with rng's unbiased integers).
void shuffle_deck(CardField field, std::span<uint8_t> deck, Rng& rng);

// Writes the deck as doubles.
void write_deck_state(std::span<const uint8_t> deck, std::span<double> out);
// Reads a deck written by write_deck_state into `deck` (same size); throws std::invalid_argument
// naming `env` and the bad entry unless every value is an integer field value and each value
// occurs as often as in a fresh deck. `deck` is unchanged when it throws.
void read_deck_state(std::string_view env, CardField field, std::span<const double> state,
                     std::span<uint8_t> deck);

// Reads a count (cards dealt, steps taken) from a state value: an integer in [low, high], else
// std::invalid_argument naming `env` and `what`.
int read_count_state(std::string_view env, const char* what, double value, int low, int high);

// Writes a one-hot of `n` floats at obs[0, n) with a 1 at `index`.
void write_one_hot(std::span<float> obs, int n, int index);

}  // namespace recur::envs::popgym::sequences
