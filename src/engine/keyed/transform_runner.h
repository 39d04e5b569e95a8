// TransformRunner: runs a keyed write's transform (a DuckDB SELECT over named
// sources) through DuckDbSession, the engine's SQL data plane.
//
// Two ways: the whole query over registered inputs (Stream), or -- for a
// row-wise query (filter_placement.h) -- batch by batch (ApplyToBatch), from
// any number of threads, each call on a session taken from a small pool.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/type.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/duckdb/duckdb_session.h"

namespace thund::engine::keyed {

class TransformRunner {
 public:
  // `threads`: DuckDB threads of the session used by Stream().
  static arrow::Result<std::unique_ptr<TransformRunner>> Make(std::string sql, int64_t threads);

  // The schema of the query's rows, given the inputs' schemas (by name).
  arrow::Result<std::shared_ptr<arrow::Schema>> OutputSchema(
      const std::vector<std::pair<std::string, std::shared_ptr<arrow::Schema>>>& inputs);

  // Row-wise queries only: the query over `batch` registered as `name`. Thread-safe.
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> ApplyToBatch(
      const std::string& name, const std::shared_ptr<arrow::RecordBatch>& batch);

  // Registers `batches` as `name` on the main session (replacing it).
  arrow::Status Register(const std::string& name, std::shared_ptr<arrow::Schema> schema,
                         std::vector<std::shared_ptr<arrow::RecordBatch>> batches);
  // The whole query over the registered inputs, as a stream. One stream at a time.
  arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> Stream();

  const std::string& sql() const { return sql_; }

 private:
  TransformRunner(std::string sql, std::unique_ptr<DuckDbSession> main)
      : sql_(std::move(sql)), main_(std::move(main)) {}
  arrow::Status Annotate(const arrow::Status& st) const;

  std::string sql_;
  std::unique_ptr<DuckDbSession> main_;
  std::mutex mu_;
  std::vector<std::unique_ptr<DuckDbSession>> pool_;  // idle single-thread sessions
};

}  // namespace thund::engine::keyed
