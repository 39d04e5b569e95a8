// Writes a stream of record batches as Parquet part files in one directory,
// through an arrow::fs::FileSystem (the fault-injection seam).
//
// Files are named "<prefix>-NNNNN.parquet" and hold the Arrow schema in their
// metadata (pyarrow gets back Arrow-only details). Finish() always leaves at
// least one file, so an empty result still has a schema on disk.
// Encoding runs on a background thread, overlapping with the producer.
//
// Not atomic by itself: files live in an uncommitted version directory (see
// dataset_store.h) until the version is committed.
// Thread-safety: one producer thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>

#include "engine/batch/version_manifest.h"

namespace thund::engine::batch {

struct PartWriterOptions {
  int64_t row_group_rows = 122880;  // DuckDB's row group size
  int64_t max_rows_per_file = 0;    // 0 = one file
};

class ParquetPartWriter {
 public:
  // REQUIRES: `dir` exists.
  static arrow::Result<std::unique_ptr<ParquetPartWriter>> Open(
      std::shared_ptr<arrow::fs::FileSystem> fs, std::string dir, std::string prefix,
      std::shared_ptr<arrow::Schema> schema, PartWriterOptions options = {});
  ~ParquetPartWriter();

  // REQUIRES: batch->schema() equals the schema given to Open.
  arrow::Status Write(std::shared_ptr<arrow::RecordBatch> batch);
  // Writes every row of `table`, batch by batch (same requirement).
  arrow::Status WriteTable(const arrow::Table& table);
  // Closes the files; the parts are tagged with `flow`. Must be called once;
  // after an error the written files are garbage (the caller abandons the dir).
  arrow::Result<std::vector<PartFile>> Finish(const std::string& flow);

  int64_t rows() const { return rows_; }

 private:
  struct Worker;
  ParquetPartWriter() = default;

  std::shared_ptr<Worker> worker_;  // shared with the pool task that drains it
  int64_t rows_ = 0;
};

}  // namespace thund::engine::batch
