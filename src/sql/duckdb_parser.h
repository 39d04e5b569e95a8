// Internal: DuckDB's SQL parser as a service. Owns one process-wide in-memory
// DuckDB database (no tables, no external access, no extension autoloading)
// that is used only to parse text with json_serialize_sql. Not public API.
#pragma once

#include <arrow/result.h>
#include <arrow/type_fwd.h>

#include <memory>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>

namespace thund::internal {

// Parses `duckdb_sql` (already DuckDB SQL: run SparkToDuckDb first) with
// `SELECT json_serialize_sql(?)`, the text bound as a parameter, and returns the
// document's "statements" array (ordered_json keeps DuckDB's key order).
// A parse error becomes Status::Invalid carrying DuckDB's message and, when
// DuckDB reports one, the offset and line:column inside `duckdb_sql`.
// `user_offset` is where the user's own text starts inside `duckdb_sql` (when
// the caller wrapped a fragment, e.g. an expectation predicate, in a query):
// reported positions are relative to that text.
// Results are cached by (text, user_offset) for the process (bounded), so a
// text parsed again costs no DuckDB round trip. Thread-safe (calls to DuckDB
// are serialized on one connection).
arrow::Result<nlohmann::ordered_json> ParseSqlToJson(std::string_view duckdb_sql,
                                                     size_t user_offset = 0);

// Lower-case names of every aggregate function DuckDB knows (from
// duckdb_functions()), plus the Spark aggregate names DuckDB lacks
// (collect_list, collect_set, ...). Computed once; thread-safe.
const std::unordered_set<std::string>& AggregateFunctionNames();

// Lower-case names of every function in DuckDB's catalog (duckdb_functions()
// of the parser's database: built-ins only, no extensions autoloaded).
// Computed once (a failure too); thread-safe; the set lives for the process.
arrow::Result<const std::unordered_set<std::string>*> FunctionNames();

// Renders each json_serialize_sql-shaped document (one SELECT statement) back
// to DuckDB SQL with json_deserialize_sql, in one round trip. Entries that do
// not render come back as their error.
arrow::Result<std::vector<arrow::Result<std::string>>> RenderSqlJson(
    const std::vector<std::string>& documents);

// The output schema of each query, bound by DuckDB over empty tables with the
// given names and Arrow schemas (names may be qualified "db.t"). A query that
// does not bind comes back as DuckDB's message. Runs in a private in-memory
// database that may read files (read_parquet(...) binds to the file), with no
// extension autoloading. Thread-safe.
arrow::Result<std::vector<arrow::Result<std::shared_ptr<arrow::Schema>>>> BindQuerySchemas(
    const std::vector<std::pair<std::vector<std::string>, std::shared_ptr<arrow::Schema>>>& tables,
    const std::vector<std::string>& queries);

// 1-based line and column of byte `offset` in `text` (clamped to its end).
struct TextPosition {
  int line = 1;
  int column = 1;
};
TextPosition PositionOf(std::string_view text, size_t offset);

}  // namespace thund::internal
