// Quoting names and text for SQL that DuckDB parses.
#pragma once

#include <string>
#include <string_view>

namespace thund::engine {

// "name" with embedded double quotes doubled: safe as a DuckDB identifier for any
// input (including keywords, spaces and quotes).
std::string QuoteIdentifier(std::string_view name);

// 'text' with embedded single quotes doubled: a DuckDB string literal.
std::string QuoteString(std::string_view text);

}  // namespace thund::engine
