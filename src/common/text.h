// Small ASCII text helpers shared across the tree. Header-only; internal (not
// installed). Identifiers, keywords and option values are compared in ASCII
// case only: the engines thund follows (Spark, DuckDB) fold identifiers by
// ASCII rules, and non-ASCII bytes pass through unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace thund::text {

// `s` with ASCII letters lowered; every other byte unchanged.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// True when `s` holds nothing but spaces, tabs and line ends.
inline bool IsBlank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// The items with `sep` between neighbours ("" for none).
inline std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

}  // namespace thund::text
