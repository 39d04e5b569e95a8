// An immutable set of Arrow record batches, prepared for scanning by DuckDB.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/type_fwd.h>
#include <duckdb.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/duckdb/duckdb_handles.h"

namespace thund::engine::duckdb_internal {

// A DuckDB connection used only for Arrow conversions (never runs a query), shared by
// the registry and every scan in flight so that it outlives them all.
struct ConverterConnection {
  ConnectionHandle connection;
};

// The batches registered under one name, cut into slices of at most
// duckdb_vector_size() rows (zero-copy: a slice is a (batch, offset, length) triple
// turned into RecordBatch::Slice at scan time).
//
// Ownership: holds the batches (and so their buffers) alive; DuckDB vectors produced
// by a scan reference these buffers, so a source must outlive every query scanning
// it (the scan's bind data holds a shared_ptr to it).
// Thread-safety: immutable after Make; all methods are safe from any thread.
class ArrowScanSource {
 public:
  struct Slice {
    int batch;
    int64_t offset;
    int64_t length;
  };

  // REQUIRES: every batch has exactly `schema` (field names and types).
  // Fails (naming the column) when DuckDB cannot represent a column's type, or when
  // two column names are equal ignoring case (DuckDB column names are case-insensitive),
  // or when a value would lose sub-microsecond precision (arrow_precision_check.h).
  static arrow::Result<std::shared_ptr<const ArrowScanSource>> Make(
      std::shared_ptr<ConverterConnection> converter, std::shared_ptr<arrow::Schema> schema,
      std::vector<std::shared_ptr<arrow::RecordBatch>> batches);

  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
  const std::vector<Slice>& slices() const { return slices_; }
  int64_t num_rows() const { return num_rows_; }
  // DuckDB logical type of column `i`; owned by the source.
  duckdb_logical_type column_type(int i) const { return types_[i].get(); }
  const std::shared_ptr<ConverterConnection>& converter() const { return converter_; }

  // The rows of slice `s` as a record batch (zero-copy).
  std::shared_ptr<arrow::RecordBatch> SliceBatch(const Slice& s) const {
    return batches_[s.batch]->Slice(s.offset, s.length);
  }

 private:
  ArrowScanSource() = default;

  std::shared_ptr<ConverterConnection> converter_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  std::vector<Slice> slices_;
  std::vector<LogicalTypeHandle> types_;
  int64_t num_rows_ = 0;
};

}  // namespace thund::engine::duckdb_internal
