// Printing and exporting query results (thund show / thund query / thund runs).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include <arrow/result.h>
#include <arrow/table.h>

#include "engine/duckdb/duckdb_session.h"

namespace thund::engine::batch {

enum class OutputFormat { kTable, kCsv, kJson, kParquet };

// "table" | "csv" | "json" | "parquet".
arrow::Result<OutputFormat> ParseOutputFormat(const std::string& text);

// An aligned text table: a header, a rule, one line per row (cells longer
// than `max_cell` characters are cut with "..."; NULL shows as NULL; numbers
// are right-aligned), then "(N rows)".
std::string RenderTable(const arrow::Table& table, size_t max_cell = 40);

// Runs `duckdb_sql` (one SELECT) and writes its rows in `format`: to `path`
// when it is not empty (written whole, replacing the file), else to `out`.
// JSON is one object per line (DuckDB's to_json). Parquet needs a path.
arrow::Status WriteQueryResult(DuckDbSession& session, const std::string& duckdb_sql,
                               OutputFormat format, std::ostream& out,
                               const std::string& path = "");

}  // namespace thund::engine::batch
