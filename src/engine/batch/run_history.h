// The run history: an append-only table under the storage root, one Parquet
// file per run ({root}/_thund/runs/run-<run id>.parquet, written atomically),
// readable by DuckDB as read_parquet('{root}/_thund/runs/*.parquet').
// Run ids sort by start time, so file names do too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>
#include <arrow/table.h>

#include "engine/batch/storage_layout.h"

namespace thund::engine::batch {

struct RunRecord {
  std::string run_id;
  std::string pipeline;
  std::string status;  // completed | failed | canceled
  int64_t started_ms = 0;
  int64_t duration_ms = 0;
  std::string mode;  // "batch"
  int64_t computed = 0, up_to_date = 0, failed = 0, skipped = 0;
  int64_t rows_written = 0;
  std::string error;
  std::string summary_json;  // per-dataset outcomes
};

// A new run id: "20261129T082349123Z-<8 hex>" (UTC start time, then random).
std::string NewRunId(int64_t started_ms);

// Schema of the run history table (columns in RunRecord order; started_at is
// a UTC timestamp[ms]).
std::shared_ptr<arrow::Schema> RunHistorySchema();

arrow::Status AppendRunRecord(arrow::fs::FileSystem& fs, const StorageLayout& layout,
                              const RunRecord& record);

// The DuckDB glob over all run files.
std::string RunHistoryGlob(const StorageLayout& layout);

}  // namespace thund::engine::batch
