#include "authoring/file/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace thund::file {
namespace {

char Fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

size_t Threshold(size_t len) {
  if (len <= 4) return 1;
  if (len <= 8) return 2;
  return 3;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  // Three rolling rows: i-2, i-1, i (the transposition step looks two back).
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = Fold(a[i - 1]) == Fold(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && Fold(a[i - 1]) == Fold(b[j - 2]) && Fold(a[i - 2]) == Fold(b[j - 1])) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string_view>& candidates) {
  std::optional<std::string> best;
  size_t best_distance = Threshold(word.size()) + 1;
  for (std::string_view c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(c);
    }
  }
  return best;
}

std::string JoinNames(const std::vector<std::string_view>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  return out;
}

std::string SuggestHint(std::string_view word, const std::vector<std::string_view>& candidates,
                        std::string_view noun) {
  if (auto m = ClosestMatch(word, candidates)) return "did you mean '" + *m + "'?";
  return std::string(noun) + ": " + JoinNames(candidates);
}

}  // namespace thund::file
