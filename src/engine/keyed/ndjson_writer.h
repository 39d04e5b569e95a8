// Writing Arrow record batches as newline-delimited JSON (one object per row),
// the format DuckDB's read_json and Arrow's JSON reader read back.
//
// Values: integers and finite floats as numbers (NaN/Inf as null), booleans,
// strings (escaped), decimals as numbers, dates/times/timestamps as ISO-8601
// strings, lists as arrays, structs as objects, maps as arrays of {key, value};
// anything else as its Arrow text form.
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
