// A DuckDB query result read as Arrow record batches.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/result.h>

#include <memory>
#include <string_view>

#include "engine/duckdb/duckdb_handles.h"
#include "engine/duckdb/session_core.h"

namespace thund::engine::duckdb_internal {

// Converts each DuckDB result chunk (<= duckdb_vector_size() rows) with
// duckdb_data_chunk_to_arrow, using the result's own Arrow options, and imports it with
// arrow::ImportRecordBatch. Empty chunks are skipped; the end of the result is a null
// batch. An error DuckDB raises while producing rows (possible for streaming results)
// comes back from ReadNext as a Status carrying DuckDB's message.
//
// Thread-safety: single consumer (like every RecordBatchReader).
// Lifetime: keeps the session's connection alive (shared SessionCore), so it is safe
// to destroy the session first; the reader then still reads its own rows.
class DuckDbResultReader : public arrow::RecordBatchReader {
 public:
  // Executes `sql` (one or more statements; the result is the last one's) and
  // materializes it inside DuckDB before the first batch is returned.
  static arrow::Result<std::shared_ptr<DuckDbResultReader>> OpenMaterialized(
      std::shared_ptr<SessionCore> core, std::string_view sql);

  // Executes `sql` (exactly one statement) as a streaming query: rows are produced
  // as they are read. Until the reader has returned its end (null batch), is closed or
  // destroyed, it is the connection's open stream (SessionCore::open_stream) and the
  // session refuses other statements.
  static arrow::Result<std::shared_ptr<DuckDbResultReader>> OpenStreaming(
      std::shared_ptr<SessionCore> core, std::string_view sql);

  ~DuckDbResultReader() override;

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override;
  arrow::Status Close() override;

 private:
  explicit DuckDbResultReader(std::shared_ptr<SessionCore> core) : core_(std::move(core)) {}
  arrow::Status InitSchema();
  // Clears SessionCore::open_stream if it is this reader.
  void ReleaseConnection();

  std::shared_ptr<SessionCore> core_;
  // Destroyed in reverse order: result before pending before prepared statement.
  PreparedHandle prepared_;
  PendingHandle pending_;
  ResultHandle result_;
  ArrowOptionsHandle arrow_options_;
  std::shared_ptr<arrow::Schema> schema_;
  bool done_ = false;
};

}  // namespace thund::engine::duckdb_internal
