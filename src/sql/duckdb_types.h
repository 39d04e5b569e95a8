// Internal: DuckDB's spelling of Arrow types and of identifiers, for SQL the
// frontend writes (the dialect's CASTs, the binder's empty tables).
#pragma once

#include <string>
#include <string_view>

#include <arrow/type_fwd.h>

namespace thund::sql {

// The DuckDB type name of `type` ("BIGINT", "TIMESTAMP_MS", "STRUCT(\"a\" INTEGER)",
// "VARCHAR[]", ...). A type DuckDB has no name for comes back as Arrow's own
// text, which DuckDB then refuses with its message.
std::string DuckDbTypeName(const arrow::DataType& type);

// `s` as a double-quoted DuckDB identifier (inner quotes doubled).
std::string QuoteIdent(std::string_view s);

}  // namespace thund::sql
