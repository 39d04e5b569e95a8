// "Did you mean ...?" suggestions for misspelled keys and enum values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace thund::file {

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions),
// compared case-insensitively.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a plausible typo:
// distance <= 1 for words up to 4 characters, <= 2 up to 8, else <= 3.
// Ties go to the earlier candidate.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string_view>& candidates);

// "a, b, c" — the candidates joined for "allowed values" hints.
std::string JoinNames(const std::vector<std::string_view>& names);

// A hint for an unknown `word`: "did you mean 'x'?" when a candidate is close,
// else "<noun>: a, b, c" (e.g. noun = "valid keys").
std::string SuggestHint(std::string_view word, const std::vector<std::string_view>& candidates,
                        std::string_view noun);

}  // namespace thund::file
