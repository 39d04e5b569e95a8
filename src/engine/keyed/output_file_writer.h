// OutputFileWriter: writes rows into a directory as numbered data files, each
// of which appears atomically (written under a "_tmp-*.inprogress" name, then
// renamed; engine/fs/atomic_write.h), so a reader -- or the next keyed write's
// key loading -- sees whole files or nothing, even after a SIGKILL.
//
// Rows are grouped into files of `rows_per_file` rows in arrival order; each
// full file is encoded and committed on the engine thread pool (up to
// `threads` files at once; engine/exec/thread_pool.h) or, when more than
// `threads` files wait, by the calling thread itself (files may be committed
// out of order; each file is complete on its own). Finish encodes what is
// left on the caller, so the writer never waits for a free pool thread.
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
#include <vector>

#include "engine/keyed/file_format.h"

namespace thund::engine::keyed {

struct OutputOptions {
  FileFormat format = FileFormat::kParquet;
  int64_t rows_per_file = 1 << 20;   // > 0
  int64_t row_group_rows = 1 << 17;  // Parquet row group size, > 0
  int64_t threads = 1;               // encoding threads, > 0
  std::string prefix = "part";
  // Fast paths of CopyFiles (each with a plain twin):
  //   join: several Parquet files are joined with their pages unchanged
  //     (parquet_join.h); false: they are decoded and written as one file.
  //   direct_io: local copies of 1 MiB or more go through O_DIRECT
  //     (direct_file.h); false: copy_file_range / buffered writes.
  bool join = true;
  bool direct_io = true;
};

class OutputFileWriter {
 public:
  // Creates `dir` (with parents) when missing.
  static arrow::Result<std::unique_ptr<OutputFileWriter>> Make(
      std::shared_ptr<arrow::fs::FileSystem> fs, std::string dir, OutputOptions options,
      std::shared_ptr<arrow::Schema> schema);
  ~OutputFileWriter();  // writes pending files (errors are dropped: call Finish)

  // Adds rows; hands a file to the pool whenever rows_per_file are buffered.
  // Returns the first error of any earlier file.
  arrow::Status Write(const std::shared_ptr<arrow::RecordBatch>& batch);
  // Hands the buffered rows (if any) to the pool as one file.
  arrow::Status Flush();
  // Writes `batches` (concatenated) as exactly one file, whatever their size.
  arrow::Status WriteOneFile(std::vector<std::shared_ptr<arrow::RecordBatch>> batches);
  // Commits the existing files `source_paths` (holding `rows` rows in all, in
  // this writer's format) as one output file: one file's bytes unchanged, or
  // Parquet files joined with their pages unchanged (parquet_join.h; decoded
  // and written anew when they cannot be joined so).
  arrow::Status CopyFiles(std::vector<std::string> source_paths, int64_t rows);
  int64_t rows_per_file() const { return options_.rows_per_file; }
  bool joins() const { return options_.join; }
  // Every file this writer commits has a name starting with this.
  std::string file_name_prefix() const { return options_.prefix + "-" + token_ + "-"; }
  // Called (on a writer thread) when files that were to be joined are
  // decoded and written anew instead, with the reason.
  void set_on_fallback(std::function<void(const std::string&)> f) { on_fallback_ = std::move(f); }
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
  // Runs the next queued job (false: none queued). Any thread.
  bool RunNextJob();
  // Runs jobs until none is queued (a pool task's body).
  void Drain();
  // Runs what is queued on this thread, waits for jobs running elsewhere,
  // and stops pool tasks from starting more.
  void Close();

  // What a pool task needs to know whether the writer still exists: tasks
  // that start after Close do nothing.
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool closed = false;
    int64_t active = 0;
    OutputFileWriter* writer = nullptr;
  };

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::string dir_;
  OutputOptions options_;
  std::shared_ptr<arrow::Schema> schema_;
  std::string token_;
  int64_t next_seq_ = 0;
  std::vector<std::shared_ptr<arrow::RecordBatch>> buffer_;
  int64_t buffered_rows_ = 0;
  std::function<void(const std::string&, int64_t)> on_commit_;
  std::function<void(const std::string&)> on_fallback_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  int64_t running_ = 0;   // jobs being encoded (any thread)
  int64_t drainers_ = 0;  // pool tasks spawned and not yet done
  arrow::Status error_;
  int64_t rows_committed_ = 0;
  int64_t files_committed_ = 0;
  std::shared_ptr<Gate> gate_;
};

}  // namespace thund::engine::keyed
