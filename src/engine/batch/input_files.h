// The files a flow reads: paths given to file-reading table functions
// (read_csv, read_parquet, read_json, ...) in its SQL, and file sources.
// Used to report a missing input before running (naming the flow and the
// path) and to fingerprint inputs for reconciliation (size + mtime).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <arrow/result.h>

#include "engine/duckdb/duckdb_session.h"

namespace thund::engine::batch {

struct FileRead {
  std::string function;  // "read_csv", ...
  std::string pattern;   // as written: a file, a glob, or a URL
  size_t offset = 0;     // byte offset of the call in the SQL (npos if unknown)
};

// Constant string (or list-of-strings) path arguments of file-reading table
// functions anywhere in `duckdb_sql` (already translated for DuckDB).
// Paths built from expressions are not seen (they are then not fingerprinted).
arrow::Result<std::vector<FileRead>> FileReadsInSql(const std::string& duckdb_sql);

// True for s3://, http(s)://, ... paths: not expanded or stamped locally.
// file: URIs are local paths (ir/file_uri.h), not remote.
bool IsRemotePath(const std::string& pattern);

// Expands `pattern` (a file: URI is its local path) with DuckDB's own glob (so
// it matches exactly what the table function will read), as absolute paths,
// sorted. REQUIRES: no open stream on `session`.
arrow::Result<std::vector<std::string>> ExpandGlob(DuckDbSession& session,
                                                   const std::string& pattern);

// The files `read` reads: ExpandGlob of its pattern, except that a directory
// given to read_csv / read_json / read_parquet (and their aliases) means every
// *.csv / *.json / *.parquet file below it, recursively, as DuckDB reads it.
// REQUIRES: no open stream on `session`.
arrow::Result<std::vector<std::string>> ExpandFileRead(DuckDbSession& session,
                                                       const FileRead& read);

// "size=<bytes> mtime=<ns>" of a local file.
arrow::Result<std::string> FileStamp(const std::string& path);

}  // namespace thund::engine::batch
