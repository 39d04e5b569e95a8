#include "engine/duckdb/sql_quote.h"

namespace thund::engine {
namespace {

std::string Quote(std::string_view s, char q) {
  std::string out;
  out.reserve(s.size() + 2);
  out += q;
  for (char c : s) {
    out += c;
    if (c == q) out += q;
  }
  out += q;
  return out;
}

}  // namespace

std::string QuoteIdentifier(std::string_view name) { return Quote(name, '"'); }

std::string QuoteString(std::string_view text) { return Quote(text, '\''); }

}  // namespace thund::engine
