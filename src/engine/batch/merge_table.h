// A keyed MERGE table: one Parquet table upserted by its key columns. It is
// the exactly-once target for results that change (Update-mode aggregations,
// AUTO CDC) and what a sink with `mode: merge` writes (docs/storage.md,
// "Merge sinks"); file sinks can only add or replace files.
//
// Layout: the versioned layout of docs/storage.md, at the location itself:
//   LOC/_current                      "v-000003\n": the commit point
//   LOC/current -> v-000003           symlink, for people and tools
//   LOC/v-000003/part-00000-00000.parquet
//   LOC/v-000003/_manifest.json       with "epoch": the epoch it applied
// written by a DatasetStore whose root is LOC's parent and whose dataset is
// LOC's last component, so a version commits atomically (the rename of
// LOC/_current), a failure before that leaves the previous version current
// and intact, and the previous version stays readable until the commit after
// next. Every write goes through the given filesystem (the fault-injection
// seam), except the `current` symlink (dataset_store.h).
//
// Epochs make writes idempotent. Apply and Replace are tagged with an epoch
// (> 0), recorded in the manifest of the version they commit; a call whose
// epoch is <= applied_epoch() writes nothing and returns skipped_replay. A
// stream commits trigger N here (epoch N) before its own checkpoint of N;
// after a crash between the two it replays trigger N with the same epoch,
// which then changes nothing.
//
// Apply semantics:
//  * Keys are compared by value (DuckDB's IS NOT DISTINCT FROM, so nested
//    values compare field by field), for any key types DuckDB can read,
//    composite keys included. A NULL in a key column of `rows` or
//    `deleted_keys` is an error naming the input, the row and the column.
//  * `deleted_keys` are applied first, then `rows`: a key in both ends with
//    its row from `rows`. Deleting a key the table does not hold is no error.
//  * Duplicate keys within `rows`: the last one (in row order) wins.
//  * Non-key columns are carried as they are (NULLs included): DuckDB sees
//    only the key columns, and rows are copied with Arrow's Take.
//  * Schema: the first write fixes it (the schema of its rows). Later rows are
//    conformed to it by column name (exact, else case-insensitive): a missing
//    nullable column becomes NULL; a missing NOT NULL column, an extra column,
//    a type that does not convert (safe casts only) or a NULL in a NOT NULL
//    column is an error naming the column.
//  * Row order: the kept rows in their previous order, then the inserted and
//    updated rows in the order of `rows`.
//
// Cost: every Apply rewrites the whole table into one new Parquet file (no
// file is carried over) and holds the current table, the rows and the
// result in memory. That is acceptable for the tables this targets (results
// of aggregations and CDC); carrying unchanged files is a later change.
//
// Thread-safety: not thread-safe; one writer per location at a time (there
// is no lock). Readers (Read(), or LOC/current/*.parquet) may run any time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>
#include <arrow/table.h>

#include "engine/batch/dataset_store.h"

namespace thund::engine {
class DuckDbSession;
}  // namespace thund::engine

namespace thund::engine::batch {

struct MergeResult {
  // The epoch was applied already: nothing was written, the counts are 0,
  // `rows` and `version` describe the current version.
  bool skipped_replay = false;
  int64_t inserted = 0;  // keys of `rows` the table did not hold
  int64_t updated = 0;   // keys of `rows` the table held (their rows replaced)
  int64_t deleted = 0;   // rows removed (by `deleted_keys`, or by Replace)
  int64_t rows = 0;      // rows in the table afterwards
  int64_t version = 0;   // the committed version (0: none yet)
  // Problems after the commit point (the `current` symlink, garbage
  // collection): the version is committed all the same.
  std::vector<std::string> notes;
};

struct MergeTableOptions {
  int threads = 0;  // DuckDB worker threads for the key matching; 0 = one per core
};

class MergeTable {
 public:
  // `location`: a local directory path (relative to the working directory)
  // or a `file:` URI; its last component must be storable (not empty, not
  // starting with '_' or '.'). `keys`: the key columns, non-empty, distinct.
  // Reads the current version's manifest, if any; writes nothing.
  static arrow::Result<MergeTable> Open(std::shared_ptr<arrow::fs::FileSystem> fs,
                                        std::string location, std::vector<std::string> keys,
                                        MergeTableOptions options = {});

  MergeTable(MergeTable&&) noexcept;
  MergeTable& operator=(MergeTable&&) noexcept;
  ~MergeTable();

  // The epoch the current version was written by (0 = none, or a version
  // written without an epoch).
  int64_t applied_epoch() const { return applied_epoch_; }
  // The current version (0 = none).
  int64_t version() const { return version_; }
  // The absolute path of the table's directory.
  const std::string& path() const { return path_; }
  const std::vector<std::string>& keys() const { return keys_; }

  // Upserts `rows` by the keys and deletes `deleted_keys` (a table holding
  // at least the key columns, which are conformed to the key types; other
  // columns are ignored), then commits a new version tagged with `epoch`.
  // Either table may be null (nothing to upsert / delete). When epoch <=
  // applied_epoch() nothing is written and the result says skipped_replay.
  // With no version yet and null `rows`, there is no schema to write: nothing
  // is written (version 0; the epoch is not recorded, which is harmless since
  // the call changed nothing). REQUIRES: epoch > 0 (else Invalid).
  // On error nothing is committed: the previous version stays current, and
  // the same call may be retried.
  arrow::Result<MergeResult> Apply(int64_t epoch, std::shared_ptr<arrow::Table> rows,
                                   std::shared_ptr<arrow::Table> deleted_keys,
                                   const std::string& run_id);

  // Replaces the whole content by `rows` (for Complete-mode streams and full
  // refreshes), with the same key rules (NULL keys refused, the last row of a
  // key wins), schema conformance, epoch tagging and idempotence as Apply.
  // `deleted` counts the rows of keys that are gone.
  arrow::Result<MergeResult> Replace(int64_t epoch, std::shared_ptr<arrow::Table> rows,
                                     const std::string& run_id);

  // The current content; nullptr when no version was ever committed.
  arrow::Result<std::shared_ptr<arrow::Table>> Read() const;

 private:
  MergeTable(DatasetStore store, std::string name, std::string path,
             std::vector<std::string> keys, MergeTableOptions options);

  arrow::Result<MergeResult> Write(int64_t epoch, std::shared_ptr<arrow::Table> rows,
                                   std::shared_ptr<arrow::Table> deleted_keys,
                                   const std::string& run_id, bool replace);
  // Reads the current manifest from disk into version_ / applied_epoch_.
  arrow::Result<std::optional<VersionManifest>> Refresh();
  arrow::Result<std::shared_ptr<arrow::Table>> ReadVersion(const VersionManifest& m) const;

  DatasetStore store_;
  std::string name_;  // the dataset name inside store_ (LOC's last component)
  std::string path_;  // LOC, absolute
  std::vector<std::string> keys_;
  MergeTableOptions options_;
  int64_t applied_epoch_ = 0;
  int64_t version_ = 0;
  std::unique_ptr<DuckDbSession> session_;  // opened by the first write that needs it
};

}  // namespace thund::engine::batch
