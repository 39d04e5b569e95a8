// A FileSource flow (Parquet, CSV or newline-delimited JSON files) as a DuckDB
// query, with bad-row handling (bad_rows.h).
//
//  * The path (file, directory or glob) is expanded first; no match is an
//    error naming the flow and the path. Files whose name starts with '_' or
//    '.' are skipped (writers' markers and temporaries).
//  * Options are passed to DuckDB's reader as named parameters (header,
//    delim, ...), except thund's own `bad_rows`.
//  * CSV: read_csv with store_rejects, so every malformed row (wrong column
//    count, a value not converting to a declared type) is recorded with file,
//    line and DuckDB's reason, and skipped; CollectBadRows reads them after
//    the scan. A declared target schema is passed as `types=` (by name).
//  * JSON: every line is checked first (valid JSON, an object, and each
//    declared column converts to its type); the good lines are then read with
//    read_json (from a scratch copy when bad lines exist), so types are
//    detected exactly as read_json detects them. JSON inputs are read twice.
//
// Lifecycle: Plan (before the query), run plan.sql, CollectBadRows (after the
// whole result was read), Cleanup (always).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/result.h>

#include "engine/batch/bad_rows.h"
#include "engine/duckdb/duckdb_session.h"
#include "thund/ir.h"

namespace thund::engine::batch {

struct FileSourcePlan {
  std::string sql;                 // the rows of the source
  std::vector<std::string> files;  // absolute paths read
  BadRowsMode mode = BadRowsMode::kFail;
  std::string format;
  std::string rejects_table, rejects_scan;  // CSV
  std::vector<BadRow> json_bad_rows;        // JSON, known up front
  std::vector<std::string> scratch_files;   // removed by Cleanup
};

// `tag` makes temporary DuckDB names unique within the session.
// REQUIRES: no open stream on `session`.
arrow::Result<FileSourcePlan> PlanFileSource(DuckDbSession& session, const Flow& flow,
                                             const FileSource& source, const Dataset& target,
                                             const std::string& tag);

// The malformed rows found by the scan (CSV) or the line check (JSON),
// ordered by file and line.
arrow::Result<std::vector<BadRow>> CollectBadRows(DuckDbSession& session,
                                                  const FileSourcePlan& plan);

void Cleanup(DuckDbSession& session, const FileSourcePlan& plan);

// Expands a FileSource path: a directory means every file in it.
arrow::Result<std::vector<std::string>> ExpandSourcePath(DuckDbSession& session,
                                                         const std::string& path);

}  // namespace thund::engine::batch
