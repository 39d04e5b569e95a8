// KeyedWriteFilter: the engine API of key-checkpointed writes (issue 6). Any
// write path -- a file sink, a stored dataset, `thund copy` -- uses it so:
//
//   // 1. Once per write, before reading input: load the target's keys.
//   ARROW_ASSIGN_OR_RAISE(auto filter, KeyedWriteFilter::Make(
//       options, *written_schema, fs, target_dir, on_event));
//   // 2. Where the filter goes (filter_placement.h): for each source that
//   //    carries the key columns unchanged, drop existing keys right after it
//   //    (any thread; skipped rows then cost no transform work):
//   ARROW_ASSIGN_OR_RAISE(auto kept, filter->DropExisting(*batch, key_columns, where));
//   // 3. Right before writing, in output order on one thread: drops what the
//   //    source side could not (keys produced later in the plan), duplicates
//   //    within the run (duplicates=first) and NULL keys (null_keys=drop):
//   ARROW_ASSIGN_OR_RAISE(auto split, filter->FilterForWrite(*out_batch, checked, where));
//   //    write split.now; after the last batch write split.deferred rows (all
//   //    of them, from every call) into ONE file (duplicates=all only).
//   // 4. counts() for the run summary (the caller adds rows_read/rows_written).
//
// Output files must appear atomically (engine/fs/atomic_write.h, or
// OutputFileWriter here): on a rerun after a crash, a file that was not renamed
// into place does not count, and its rows are written again.
//
// duplicates=all needs one pre-pass over the rows to be written (NoteForAll on
// every output batch, in order, before any FilterForWrite): rows of a key that
// occurs more than once are deferred to one final file, so a crash can never
// commit some rows of a key but not the others.
//
// Thread-safety: Make/DropExisting/counts are safe from any thread once Make
// returned; NoteForAll and FilterForWrite are for one thread at a time.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engine/keyed/key_set.h"
#include "engine/keyed/key_spec.h"
#include "engine/keyed/keyed_events.h"
#include "engine/keyed/keyed_options.h"
#include "engine/keyed/memory_pool.h"
#include "engine/keyed/row_key_index.h"
#include "engine/keyed/target_keys.h"

namespace thund::engine::keyed {

class KeyedWriteFilter {
 public:
  // Validates `options`, resolves the keys in `written_schema` (the rows the sink
  // writes) and loads the keys present in `target_dir` (missing = none; says so
  // in an event). Errors are Invalid and name the option, column or file.
  static arrow::Result<std::unique_ptr<KeyedWriteFilter>> Make(
      const KeyedWriteOptions& options, const arrow::Schema& written_schema,
      std::shared_ptr<arrow::fs::FileSystem> fs, const std::string& target_dir,
      const KeyedEventSink& on_event = {});
  // Same, for a target made of several directories (LoadTargetKeys); events
  // name them joined with " + ". `rounds`: see LoadTargetKeys.
  static arrow::Result<std::unique_ptr<KeyedWriteFilter>> Make(
      const KeyedWriteOptions& options, const arrow::Schema& written_schema,
      std::shared_ptr<arrow::fs::FileSystem> fs, const std::vector<std::string>& target_dirs,
      const KeyedEventSink& on_event = {}, const RowKeyIndexRounds* rounds = nullptr);

  const KeySpec& spec() const { return spec_; }
  const KeyedWriteOptions& options() const { return options_; }
  const TargetKeys& target() const { return target_; }

  // Source side. keep[i] = 1 for rows whose key is not in the target; NULL keys
  // follow options().null_keys (kError: Invalid naming `where` and row
  // first_row + i). `key_arrays` are the key columns in KeySpec order, of any
  // type castable to the spec's. Thread-safe. Returns how many rows are kept.
  arrow::Result<int64_t> SelectNew(const std::vector<std::shared_ptr<arrow::Array>>& key_arrays,
                                   const std::string& where, int64_t first_row,
                                   std::vector<uint8_t>* keep) const;

  // Same, for keys already encoded (keys.is_null / keep sized keys.length).
  arrow::Result<int64_t> SelectNewEncoded(const EncodedKeys& keys, const std::string& where,
                                          int64_t first_row, uint8_t* keep) const;

  // SelectNew applied to `batch`, whose key columns are at `key_columns`.
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> DropExisting(
      const arrow::RecordBatch& batch, const std::vector<int>& key_columns,
      const std::string& where, int64_t first_row = 0) const;

  // Presizes the set of keys written in this run for about `new_keys` keys
  // (e.g. source rows - target keys): growing it later rehashes every key.
  // Call before FilterForWrite. One thread.
  void ExpectNewKeys(int64_t new_keys);

  // Keys written in this run that come from Parquet source rows of known
  // numbers (ClaimRows with `first_row`, FilterForWrite with `source_rows`)
  // are then held as row numbers of
  // `files` (a RowKeyIndex over `units`, key column `key_fields[f]` of file f)
  // instead of copies of their bytes. Applies to an exact single string key
  // with duplicates=first; otherwise (or when a file cannot be scanned so) it
  // does nothing. REQUIRES: each file's key column is of an
  // IsByteArrayStringType type (checked from the schema: no file is reopened).
  // `expected_new_keys` sizes it (see ExpectNewKeys); its table is allocated
  // here, on options().threads threads. Call before ExpectNewKeys and
  // FilterForWrite. One thread.
  arrow::Status UseSourceRows(std::shared_ptr<arrow::fs::FileSystem> fs,
                              std::vector<DataFile> files, std::vector<int> key_fields,
                              std::vector<RowKeyIndex::Unit> units, int64_t expected_new_keys);
  bool uses_source_rows() const { return written_rows_ != nullptr; }

  // duplicates=all pre-pass (see the header comment). One thread.
  arrow::Status NoteForAll(const arrow::RecordBatch& batch, const std::string& where);

  struct WriteSplit {
    std::shared_ptr<arrow::RecordBatch> now;       // write these (any file)
    std::shared_ptr<arrow::RecordBatch> deferred;  // duplicates=all: the final file
  };
  // Write side (see the header comment). `target_checked` = every row already
  // went through DropExisting (skips a second lookup). `source_rows`: the rows'
  // numbers in the source (UseSourceRows), when known. One thread, output order.
  arrow::Result<WriteSplit> FilterForWrite(const arrow::RecordBatch& batch, bool target_checked,
                                           const std::string& where,
                                           const std::vector<int64_t>* source_rows = nullptr);

  // Write side, for rows whose payload has not been read yet: claims the rows
  // of `keys` (key columns found by name, as in FilterForWrite; every key
  // already checked against the target) for this run, in output order.
  // writable[i] = 1 for the rows the caller may write as they are:
  //   duplicates=first: first occurrences (the others are counted as
  //     duplicates and must not be written);
  //   duplicates=all: rows whose key does not repeat (rows of repeated keys
  //     get 0: pass them through FilterForWrite, which defers them).
  // `first_row`: the number of the batch's first row in the source (see
  // UseSourceRows), or -1. Returns how many are writable. One thread, like
  // FilterForWrite.
  arrow::Result<int64_t> ClaimRows(const arrow::RecordBatch& keys, const std::string& where,
                                   std::vector<uint8_t>* writable, int64_t first_row = -1);
  // Same, for keys already encoded by spec() (e.g. by the worker that looked
  // them up in the target, UnitRows::all_new_encoded): they are not hashed
  // again. REQUIRES: `keys` is what ClaimRows would encode (EncodeKeys of the
  // key columns cast to the spec's types), bytes alive for the call. A `keys`
  // of another storage or with fields of other lengths is an Invalid error.
  arrow::Result<int64_t> ClaimRowsEncoded(const EncodedKeys& keys, const std::string& where,
                                          std::vector<uint8_t>* writable, int64_t first_row = -1);

  // Counts `rows` source rows as skipped for being in the target, found so
  // without this filter (UnitSettler). Thread-safe.
  void CountExisting(int64_t rows) const { skipped_existing_ += rows; }

  // Skipped / dropped rows so far (rows_read and rows_written stay 0: the
  // caller knows them).
  KeyedCounts counts() const;
  // Memory held by the key sets (target + this run), in bytes.
  int64_t MemoryBytes() const;

 private:
  KeyedWriteFilter(KeyedWriteOptions options, KeySpec spec, TargetKeys target);

  arrow::Status Encode(const std::vector<std::shared_ptr<arrow::Array>>& key_arrays,
                       const std::string& where, EncodedKeys* keys) const;
  arrow::Status CheckNulls(const EncodedKeys& keys, const std::string& where,
                           int64_t first_row) const;
  // duplicates=first: for each row with mask[i] and a key, in order: first[i]
  // = 1 when no earlier row of this run had its key (it is claimed now), else
  // 0. Rows numbered in the source (first_row + i, or rows[i]; first_row = -1
  // and rows = null: not numbered) are held in written_rows_ when it exists,
  // others in written_; a key in either counts as written. `mask` is used as
  // scratch. Returns how many rows were duplicates.
  arrow::Result<int64_t> ClaimFirst(const EncodedKeys& keys, int64_t first_row, const int64_t* rows,
                                    uint8_t* mask, uint8_t* first);

  // Declared first: outlives the key sets below (destroyed last).
  std::unique_ptr<KeyedMemoryScope> memory_scope_;
  KeyedWriteOptions options_;
  KeySpec spec_;
  TargetKeys target_;
  std::unique_ptr<KeySet> written_;            // keys written in this run (duplicates=first)
  std::unique_ptr<RowKeyIndex> written_rows_;  // the same, as source rows (UseSourceRows)
  std::unique_ptr<KeySet> seen_;               // duplicates=all pre-pass: keys seen once
  std::unique_ptr<KeySet> repeated_;           // duplicates=all: keys seen more than once
  int64_t write_rows_ = 0;                     // rows FilterForWrite has seen (for messages)
  mutable std::atomic<int64_t> skipped_existing_{0};
  mutable std::atomic<int64_t> skipped_duplicate_{0};
  mutable std::atomic<int64_t> null_keys_{0};
};

// Keeps rows of `batch` with keep[i] != 0 (`kept` of them).
arrow::Result<std::shared_ptr<arrow::RecordBatch>> KeepRows(const arrow::RecordBatch& batch,
                                                            const std::vector<uint8_t>& keep,
                                                            int64_t kept);

}  // namespace thund::engine::keyed
