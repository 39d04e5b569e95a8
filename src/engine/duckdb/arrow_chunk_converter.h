// Arrow record batch slice -> DuckDB data chunk, through the Arrow C Data Interface.
//
// This is the one place where Arrow data enters DuckDB. It uses
// duckdb_schema_from_arrow + duckdb_data_chunk_from_arrow (the conversion DuckDB's own
// Arrow scan uses: fixed-width and string buffers are referenced, not copied). It never
// uses duckdb_arrow_scan / duckdb_arrow_array_scan, which return wrong rows when DuckDB
// pushes a projection or filter into them (DESIGN.md §5).
#pragma once

#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/type_fwd.h>
#include <duckdb.h>

#include <memory>
#include <vector>

#include "engine/duckdb/duckdb_handles.h"

namespace thund::engine::duckdb_internal {

// Converts slices of record batches of one Arrow schema, restricted to a chosen list
// of its fields, into DuckDB data chunks whose columns are those fields in that order.
//
// Thread-safety: Convert() is const and may be called from many threads at once.
// Lifetime: `connection` is borrowed (only its settings are read) and must outlive
// the converter.
class ArrowChunkConverter {
 public:
  // `fields` are indices into `schema` (each at most once, at least one).
  // Fails with a message naming the column when DuckDB cannot represent a field's type.
  static arrow::Result<std::unique_ptr<ArrowChunkConverter>> Make(duckdb_connection connection,
                                                                  const arrow::Schema& schema,
                                                                  std::vector<int> fields);

  // Converts `batch` (whose schema is the one given to Make).
  // REQUIRES: batch.num_rows() <= duckdb_vector_size().
  arrow::Result<DataChunkHandle> Convert(const arrow::RecordBatch& batch) const;

  // The DuckDB logical type of each selected field, in `fields` order. The caller owns
  // the returned handles.
  arrow::Result<std::vector<LogicalTypeHandle>> ColumnTypes() const;

  const std::vector<int>& fields() const { return fields_; }

 private:
  ArrowChunkConverter(duckdb_connection connection, std::shared_ptr<arrow::Schema> schema,
                      ConvertedSchemaHandle converted, std::vector<int> fields)
      : connection_(connection),
        schema_(std::move(schema)),
        converted_(std::move(converted)),
        fields_(std::move(fields)) {}

  duckdb_connection connection_;
  std::shared_ptr<arrow::Schema> schema_;  // the projected schema
  ConvertedSchemaHandle converted_;
  std::vector<int> fields_;
};

}  // namespace thund::engine::duckdb_internal
