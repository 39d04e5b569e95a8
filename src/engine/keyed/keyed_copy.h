// RunKeyedCopy: the whole keyed write for `thund copy` and for C++ callers:
// sources (files) -> source-side filter -> optional transform (DuckDB SQL) ->
// write-side filter -> atomically committed files in the target directory.
//
//   KeyedCopyOptions o;
//   o.sources = {{"src", "/data/in/*.parquet"}};
//   o.target = "/data/out";
//   o.keyed.keys = {"id"};
//   ARROW_ASSIGN_OR_RAISE(auto result, RunKeyedCopy(fs, o, on_event));
//
// Execution shapes (reported in a kPlacement event):
//   * streaming: no transform, or a row-wise one over a single source. Units (a
//     Parquet row group / a CSV or JSON file) are read, filtered and transformed
//     on `threads` threads and written in input order; memory is bounded by
//     a few units in flight plus the key sets. Without a transform, a Parquet
//     file whose rows are all new is committed unchanged (unit_writer.h).
//   * materialized: any other query (joins, unions, aggregations, ...). Each
//     source is read (filtered right after reading when the placement allows)
//     into memory and registered in DuckDB; the query's rows stream to the
//     writer.
// A rerun after a crash continues where the committed files stop (see
// docs/keyed-writes.md for the exact guarantee).
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/keyed/file_format.h"
#include "engine/keyed/keyed_events.h"
#include "engine/keyed/keyed_options.h"
#include "engine/keyed/output_file_writer.h"
#include "engine/keyed/unit_settler.h"

namespace thund::engine::keyed {

struct CopySource {
  std::string name = "src";          // the name the transform's SQL uses
  std::string path;                  // a file, a directory or a glob
  std::optional<FileFormat> format;  // default: from each file's extension
};

// Knobs with sound defaults; tests turn them to force the rare paths. The
// switches of `thund copy` (--no-settle, --no-passthrough; --plain turns
// every fast path off, see SetPlain) live here, in KeyedWriteOptions
// (key_index, memory_pool, huge_pages) and in OutputOptions (join, direct_io).
struct KeyedCopyTuning {
  // Settle the source's row groups while the target loads (unit_settler.h),
  // in rounds of that many target rows and steps of that many source rows.
  // Needs key_index=rows (the settler reads the row index as it loads).
  bool settle = true;
  // Commit a Parquet source file whose rows are all new with its bytes
  // unchanged (unit_writer.h); false: every row is decoded, filtered and
  // encoded again.
  bool passthrough = true;
  int64_t settle_round_rows = UnitSettler::kRoundRows;
  int64_t settle_step_rows = UnitSettler::kStepRows;
  // Settle first the row groups whose key column is stored as a target row
  // group's, byte for byte (UnitSettler::SettleTwins).
  bool settle_by_stored_bytes = true;
};

struct KeyedCopyOptions {
  std::vector<CopySource> sources;  // one or more (more needs a transform)
  std::string target;               // directory of output files
  std::string transform_sql;        // optional DuckDB SELECT over the sources
  KeyedWriteOptions keyed;
  OutputOptions output;  // output.threads is set from keyed.threads
  KeyedCopyTuning tuning;

  // Every fast path off: settling, pass-through, joining, O_DIRECT, the row
  // index, the recycling memory pool and huge pages (the plain twin of each).
  void SetPlain() {
    tuning.settle = false;
    tuning.passthrough = false;
    output.join = false;
    output.direct_io = false;
    keyed.SetPlain();
  }
};

struct KeyedCopyResult {
  int64_t units_settled = 0;  // source row groups found written while the target loaded
  int64_t units_settled_by_stored_bytes = 0;  // of those, by comparing stored key columns
  KeyedCounts counts;
  int64_t files_written = 0;
  int64_t files_passed_through = 0;  // source files committed unchanged (all rows new)
  int64_t key_set_bytes = 0;         // target + run key sets
  int64_t target_keys = 0;
  std::string placement;  // where the filter ran, and why
  std::string shape;      // "streaming" | "materialized"
  double seconds = 0;
};

arrow::Result<KeyedCopyResult> RunKeyedCopy(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                            const KeyedCopyOptions& options,
                                            const KeyedEventSink& on_event = {});

}  // namespace thund::engine::keyed
