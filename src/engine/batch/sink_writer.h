// Sinks: files written for someone else (Parquet, CSV or newline-delimited
// JSON), through an arrow::fs::FileSystem (the fault-injection seam); or a
// noop sink, which counts the rows it is given and writes nothing (no file, no
// directory; its target's path is empty and its location "noop").
//
// Location (StorageSpec::location, relative paths from the working directory):
//  * empty                       -> the directory {root}/_thund/sinks/{sink}/
//  * ends in .parquet/.csv/.json -> that one file
//  * anything else               -> a directory
// Mode (StorageSpec::mode, default append):
//  * one file,  overwrite: the file is replaced atomically (write aside, rename).
//  * one file,  append:    each run adds a sibling "<stem>-<run id>.<ext>".
//  * directory, append:    each run adds "part-<run id>.<ext>".
//  * directory, overwrite: the run adds "part-<run id>.<ext>" (atomically), then
//                          deletes the directory's other data files (a reader
//                          listing the directory in between sees both).
// Every file appears whole or not at all (temporary name, then rename).
// One SinkWriter per sink per run: all flows into the sink share its file.
// JSON sinks take batches of one utf8 column holding one JSON object per row
// (the flow query is wrapped with to_json; see JsonSelectList).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>

#include "engine/batch/storage_layout.h"
#include "thund/ir.h"

namespace thund::engine::batch {

struct SinkTarget {
  std::string format;  // parquet | csv | json | noop
  bool overwrite = false;
  bool single_file = false;
  // The file, or the directory, in `fs`'s terms: absolute on the local disk,
  // "bucket/prefix/..." on S3.
  std::string path;
  // `path` as a location (ResolveLocation, MergeTable::Open, messages): the
  // local path, or "s3://bucket/prefix/...".
  std::string location;
  // The filesystem holding `path` when it is not the storage root's: an
  // s3:// sink (settings from AWS_* variables and the sink's storage options
  // endpoint / region / access_key_id / secret_access_key / session_token /
  // allow_http), or a local sink of a run whose storage root is on S3.
  std::shared_ptr<arrow::fs::FileSystem> fs;
  bool header = true;  // csv

  bool noop() const { return format == "noop"; }
  char delimiter = ',';  // csv

  const std::shared_ptr<arrow::fs::FileSystem>& FileSystemOr(
      const std::shared_ptr<arrow::fs::FileSystem>& store) const {
    return fs ? fs : store;
  }
};

arrow::Result<SinkTarget> ResolveSink(const Dataset& sink, const StorageLayout& layout);

// The select list that turns a row into one JSON object (DuckDB's to_json).
std::string JsonSelectList();

// One JSON object of to_json made valid JSON the way every JSON thund writes
// is (engine/keyed/ndjson_writer.h): DuckDB writes NaN, Infinity and
// -Infinity as bare words, which JSON has no form for; they become null
// (outside strings). The sink applies it to every line it writes.
void AppendFiniteJson(std::string_view json, std::string* out);

class SinkWriter {
 public:
  static arrow::Result<std::unique_ptr<SinkWriter>> Open(
      std::shared_ptr<arrow::fs::FileSystem> fs, SinkTarget target,
      std::shared_ptr<arrow::Schema> schema, const std::string& run_id);
  ~SinkWriter();

  arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& batch);
  // Closes and publishes the file; returns the published path ("noop" for a
  // noop sink, which publishes nothing).
  arrow::Result<std::string> Commit();
  // Removes the temporary file (best effort). Safe after a failed Commit.
  void Abort();

  int64_t rows() const { return rows_; }
  const std::string& final_path() const { return final_path_; }

 private:
  struct Impl;
  SinkWriter() = default;
  std::unique_ptr<Impl> impl_;
  std::string final_path_;
  int64_t rows_ = 0;
};

}  // namespace thund::engine::batch
