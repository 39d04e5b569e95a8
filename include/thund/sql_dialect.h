// Flow bodies are stored in the IR exactly as the user wrote them (Spark SQL as
// SDP users write it, plus thund's extensions). Before DuckDB sees a body —
// to infer inputs, to check it, to run it — it goes through this translation.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <arrow/result.h>

namespace thund {

// Rewrites the Spark-SQL forms DuckDB does not accept into DuckDB SQL
// (`STREAM(x)` / `STREAM x` -> `x`, ...; the full list is in docs/sql.md).
// Text that is already DuckDB SQL comes back unchanged. Idempotent.
// Thread-safe.
arrow::Result<std::string> SparkToDuckDb(std::string_view spark_sql);
// The same, with every tumbling and hopping window assignment keeping only
// the windows whose end E has getvariable('__thund_wlo') < epoch_us(E) <=
// getvariable('__thund_whi') (the incremental window-local operator).
arrow::Result<std::string> SparkToDuckDbWindowBounded(std::string_view spark_sql);

// True when the query reads a relation as a stream (FROM STREAM(x) /
// FROM STREAM x / STREAM read_...(...)): SDP's mark of a streaming flow.
bool ReadsStream(std::string_view spark_sql);

// Lower-cased names of the relations the query reads as streams (STREAM(x),
// STREAM x), in order of appearance.
std::vector<std::string> StreamReads(std::string_view spark_sql);

// One entry of the table of Spark functions SparkToDuckDb rewrites (the
// reference table in docs/sql.md is checked against it).
struct SparkFunctionMapping {
  std::string spark;   // Spark name, lower case
  std::string duckdb;  // DuckDB name or the shape of the rewrite ($1 = first argument)
  std::string note;    // differences worth knowing (may be empty)
};
std::vector<SparkFunctionMapping> SparkFunctionTable();

// A function call in a Spark SQL query as written (before any translation).
struct WrittenCall {
  std::string name;             // lower case
  int line = 0;                 // 1-based, inside the query
  int column = 0;
  bool table_function = false;  // a FROM-clause relation: range(...), read_files(...)
};
// Every `name(...)` call of the query as the user wrote it, in order: scalar,
// aggregate and window functions, and table functions. Not calls: a type
// after AS / ::, a table after INTO / TABLE, a LATERAL VIEW generator's
// alias, and clause words followed by "(" (IN, EXISTS, VALUES, OVER, FILTER,
// USING, ON, ...). Empty when the text does not lex. For checking a query
// against another engine's function list (the Spark backend).
std::vector<WrittenCall> SparkFunctionCalls(std::string_view spark_sql);

// Names (lower case, first-seen order) of the functions a flow body calls
// that DuckDB does not have, after SparkToDuckDb. Checked against DuckDB's
// function catalog (duckdb_functions()) in a private in-memory database.
// Fails like SparkToDuckDb, or with DuckDB's message when the translated query
// does not parse. Thread-safe.
arrow::Result<std::vector<std::string>> UnknownSqlFunctions(std::string_view spark_sql);

}  // namespace thund
