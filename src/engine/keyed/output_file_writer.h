// OutputFileWriter: writes rows into a directory as numbered data files, each
// of which appears atomically (written under a "_tmp-*.inprogress" name, then
// renamed; engine/fs/atomic_write.h), so a reader -- or the next keyed write's
// key loading -- sees whole files or nothing, even after a SIGKILL.
//
// Rows are grouped into files of `rows_per_file` rows in arrival order; each
// full file is encoded and committed by one of `threads` background threads
// (files may be committed out of order; each file is complete on its own).
// Names: "<prefix>-<run token>-<seq>.<ext>", the token random per writer, so a
// rerun never replaces an earlier run's file.
//
// Thread-safety: Write/Flush/WriteOneFile/Finish from one thread.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/keyed/file_format.h"

namespace thund::engine::keyed {

struct OutputOptions {
  FileFormat format = FileFormat::kParquet;
  int64_t rows_per_file = 1 << 20;   // > 0
  int64_t row_group_rows = 1 << 17;  // Parquet row group size, > 0
  int64_t threads = 1;               // encoding threads, > 0
  std::string prefix = "part";
};

class OutputFileWriter {
 public:
  // Creates `dir` (with parents) when missing.
  static arrow::Result<std::unique_ptr<OutputFileWriter>> Make(
      std::shared_ptr<arrow::fs::FileSystem> fs, std::string dir, OutputOptions options,
      std::shared_ptr<arrow::Schema> schema);
  ~OutputFileWriter();  // waits for pending files (errors are dropped: call Finish)

  // Adds rows; hands a file to a writer thread whenever rows_per_file are buffered.
  // Returns the first error of any earlier file.
  arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& batch);
  // Hands the buffered rows (if any) to a writer thread as one file.
  arrow::Status Flush();
  // Writes `batches` (concatenated) as exactly one file, whatever their size.
  arrow::Status WriteOneFile(std::vector<std::shared_ptr<arrow::RecordBatch>> batches);
  // Commits the existing files `source_paths` (holding `rows` rows in all, in
  // this writer's format) as one output file: one file's bytes unchanged, or
  // Parquet files joined with their pages unchanged (parquet_join.h; decoded
  // and written anew when they cannot be joined so).
  arrow::Status CopyFiles(std::vector<std::string> source_paths, int64_t rows);
  int64_t rows_per_file() const { return options_.rows_per_file; }
  // Flushes, waits for every file and returns the first error.
  arrow::Status Finish();

  // Called on a writer thread after each commit: (final path, rows).
  void set_on_commit(std::function<void(const std::string&, int64_t)> f) {
    on_commit_ = std::move(f);
  }
  int64_t rows_committed() const;
  int64_t files_committed() const;

 private:
  struct Job {
    std::string path;
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    int64_t rows = 0;
    std::vector<std::string> copy_from;  // set: these files' bytes are copied instead
  };
  OutputFileWriter(std::shared_ptr<arrow::fs::FileSystem> fs, std::string dir,
                   OutputOptions options, std::shared_ptr<arrow::Schema> schema);
  arrow::Status Submit(std::vector<std::shared_ptr<arrow::RecordBatch>> batches, int64_t rows,
                       std::vector<std::string> copy_from = {});
  arrow::Status EncodeAndCommit(const Job& job);
  arrow::Status JoinAndCommit(const Job& job);
  void WorkerLoop();

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::string dir_;
  OutputOptions options_;
  std::shared_ptr<arrow::Schema> schema_;
  std::string token_;
  int64_t next_seq_ = 0;
  std::vector<std::shared_ptr<arrow::RecordBatch>> buffer_;
  int64_t buffered_rows_ = 0;
  std::function<void(const std::string&, int64_t)> on_commit_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  int64_t running_ = 0;
  bool closing_ = false;
  arrow::Status error_;
  int64_t rows_committed_ = 0;
  int64_t files_committed_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace thund::engine::keyed
