// Small text helpers for error messages.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace recur {

// Levenshtein distance, case-insensitive (used for "did you mean").
size_t edit_distance(std::string_view a, std::string_view b);

// Up to `max_results` candidates closest to `query`, best first; candidates that share nothing
// with the query (distance above half its length, and not containing it) are left out.
std::vector<std::string> closest_matches(std::string_view query,
                                         std::span<const std::string> candidates,
                                         size_t max_results = 3);

// "a, b, c": for listing allowed values in messages.
std::string join(std::span<const std::string> items, std::string_view sep = ", ");

}  // namespace recur
