// FileSource with file_drop = true: a directory (or glob) where files arrive;
// each trigger takes the files not taken before.
//
// Paths on the local filesystem (ctx.filesystem null, local, or the tests'
// fault-injecting wrapper) are made absolute from the working directory.
// Listing: a directory means every file below it (recursively); a glob
// (*, ?, [..]) matches full paths below its fixed prefix. The directory (the
// glob's prefix) must exist. Ignored: any path component below it starting
// with '.' or '_', and names ending in .tmp, .inprogress, .crc or .partial.
// Every other file is read in the source's format, whatever its extension.
//
// Per Next(): new files in lexicographic path order, at most
// max_files_per_trigger of them unless limit.take_all. A file still being
// written is left pending (not taken, no error; taken by a later trigger once
// complete): empty; Parquet without a readable footer; CSV/JSON whose last
// byte is not '\n'; size or mtime changed between listing and reading; mtime
// younger than min_file_age_ms. All taken files become one Table.
//
// Schema: the target's declared schema, else the first taken file's (after a
// Restore, re-read from the first processed file that still exists). Later
// files must have the same column names; types must be equal or widen
// (file_drop_read.h, IsWideningCast) and are cast. Else Invalid naming the
// flow, the file, expected and found columns. A malformed CSV/JSON row is
// Invalid naming the file and line (no bad_rows modes for streams).
//
// Position(): {"files": [{"path", "size", "mtime_ns"}, ...]}: every file taken
// so far, by path; a taken file is never re-read, even if rewritten. After an
// error nothing was taken.
//
// Options: format "parquet" | "csv" | "json" (newline-delimited);
//   max_files_per_trigger (> 0, default: all), min_file_age_ms (>= 0,
//   default 0), CSV only: header (true|false, default true), delimiter (one
//   character, default ','). Other keys are Invalid.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/stream/file_drop_read.h"
#include "engine/stream/stream_source.h"

namespace thund::engine::stream {

class FileDropSource final : public StreamSource {
 public:
  // Fails (Invalid, naming the flow and the option) on a bad format or option.
  static arrow::Result<std::unique_ptr<StreamSource>> Make(const FileSource& spec,
                                                           const StreamSourceContext& ctx);

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Result<std::optional<SourceBatch>> Next(const TriggerLimit& limit) override;
  bool Exhausted() const override { return false; }
  std::string Position() const override;
  arrow::Status Restore(const std::string& position) override;
  void ReadOnly(const std::set<std::string>& lower_names) override { read_only_ = lower_names; }

 private:
  struct FileState {
    std::string path;
    int64_t size = 0;
    int64_t mtime_ns = 0;
  };
  struct Settings {
    std::string flow;
    std::string path;  // in the filesystem's terms
    DropFormatOptions format;
    int64_t max_files = 0;  // 0 = no cap
    int64_t min_age_ms = 0;
    // On object storage (s3://): a prefix without objects is an empty drop
    // (there are no directories to create).
    bool object_store = false;
  };

  FileDropSource(Settings settings, std::shared_ptr<arrow::fs::FileSystem> fs,
                 std::shared_ptr<arrow::Schema> declared, std::string dataset);

  // Files below the path, not ignored, sorted by path.
  arrow::Result<std::vector<FileState>> List() const;
  // The file's rows (as read, before conforming), or null when it is still
  // being written. With ReadOnly() columns, a Parquet file's others are not
  // read; `*whole` is then its whole schema (else null).
  arrow::Result<std::shared_ptr<arrow::Table>> TryRead(
      const FileState& file, const std::shared_ptr<arrow::Schema>& expected,
      std::shared_ptr<arrow::Schema>* whole) const;
  // After Restore without a declared schema: the schema of the first
  // processed file still readable (null if none).
  arrow::Status RecoverSchema();

  Settings s_;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::shared_ptr<arrow::Schema> schema_;
  std::string schema_origin_;  // for errors: where schema_ comes from
  std::set<std::string> read_only_;  // ReadOnly(): lower-case names; empty = all
  std::map<std::string, FileState> processed_;
  std::vector<std::string> processed_order_;  // in the order taken
};

}  // namespace thund::engine::stream
