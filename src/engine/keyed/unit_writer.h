// UnitWriter: the ordered write side of a streaming keyed write. It receives
// each unit's rows (in input order), applies the write-side filter and hands
// the rows to the OutputFileWriter.
//
// Whole-file pass-through: when the rows of a Parquet source file are all new
// (none in the target, none written earlier in this run, no repeated key) and
// nothing transforms them, the file's own bytes are committed as an output file
// (atomically, like any output) instead of being decoded and re-encoded. The
// workers send such units as keys only (UnitRows::all_new_keys); the keys are
// claimed in order here, and a unit that turns out not to qualify, or a file
// that does not qualify as a whole, is read and written row by row instead.
// This is what makes resuming an interrupted run cheap: the files it finished
// are skipped unread and the files it never started are copied. Consecutive
// such files that share a schema are joined into output files of up to
// rows_per_file rows, their pages unchanged (parquet_join.h): many small
// source files do not become as many small output files.
//
// Thread-safety: one thread (the consumer of RunOrdered).
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/keyed/keyed_write_filter.h"
#include "engine/keyed/output_file_writer.h"
#include "engine/keyed/source_scan.h"

namespace thund::engine::keyed {

class UnitWriter {
 public:
  // `source` null: no pass-through (materialized queries). `written_schema`
  // is the schema of the rows written.
  UnitWriter(std::shared_ptr<arrow::fs::FileSystem> fs, const Source* source,
             std::shared_ptr<arrow::Schema> written_schema, KeyedWriteFilter* filter,
             OutputFileWriter* writer, bool target_checked, bool passthrough, int64_t batch_size,
             std::string where);

  // Whether workers should send fully new units of file `file` as keys only.
  bool DeferAllNew(int file) const;

  // The rows of unit `index` of the source, in order.
  arrow::Status ConsumeUnit(int64_t index, UnitRows rows);
  // A batch of output rows (FilterForWrite, then the writer); `source_rows`:
  // the rows' numbers in the source, when known (UnitRows::batch_rows).
  arrow::Status WriteRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                          const std::vector<int64_t>* source_rows = nullptr);

  // Commits the source files still waiting to be joined. Call once every
  // unit was consumed.
  arrow::Status Finish();

  // duplicates=all: the rows held back for the final file.
  std::vector<std::shared_ptr<arrow::RecordBatch>>& deferred() { return deferred_; }
  int64_t files_passed_through() const { return files_passed_through_; }

 private:
  arrow::Status ReadAndWriteUnit(int64_t index, const std::vector<uint8_t>* writable);
  arrow::Status FlushPending();
  // Source file `file` (`rows` rows) qualified whole: joined with the files
  // waiting, or they are committed first and it waits alone.
  arrow::Status PassThrough(int file, int64_t rows);
  arrow::Status FlushJoining();

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  const Source* source_;
  std::shared_ptr<arrow::Schema> written_schema_;
  KeyedWriteFilter* filter_;
  OutputFileWriter* writer_;
  bool target_checked_;
  bool passthrough_;
  int64_t batch_size_;
  std::string where_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> deferred_;
  // The file being consumed: its eligible units so far, and whether it still
  // qualifies for pass-through.
  int current_file_ = -1;
  bool file_qualifies_ = false;
  std::vector<int64_t> pending_;
  int64_t pending_rows_ = 0;
  int64_t files_passed_through_ = 0;
  // Whole files waiting to be committed together, and their rows.
  std::vector<int> joining_;
  int64_t joining_rows_ = 0;
};

}  // namespace thund::engine::keyed
