// Writing Arrow record batches as newline-delimited JSON (one object per row),
// the format DuckDB's read_json and Arrow's JSON reader read back.
//
// Values, as the batch sinks' JSON (DuckDB's to_json, made valid JSON by
// engine/batch/sink_writer.h AppendFiniteJson) writes them -- checked by
// tests/keyed/json_encoding_test.cc: integers and finite floats as numbers
// (NaN/Inf as null), booleans, strings (escaped), decimals as numbers, dates,
// times and timestamps as "YYYY-MM-DD HH:MM:SS[.fraction]" strings (no
// trailing zeros), lists as arrays, structs and maps as objects; anything
// else as its Arrow text form.
#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/status.h>

#include <memory>
#include <string>

namespace thund::engine::keyed {

// Appends the NDJSON text of every row of `batch` to `out`.
arrow::Status AppendNdjson(const arrow::RecordBatch& batch, std::string* out);

// Writes `batch` as NDJSON to `stream`.
arrow::Status WriteNdjson(const arrow::RecordBatch& batch, arrow::io::OutputStream* stream);

}  // namespace thund::engine::keyed
