// Incremental checkpoints of one state table: checkpoint cost follows the
// change, not the state size.
//
// The table an epoch holds is an image: a base (a full copy, one Parquet
// file) and a chain of deltas, one per epoch since the base, each the rows
// added and the hashes (row_hash.h) of the rows removed since the epoch
// before, as multisets. The table is base + sum(added) - sum(removed). Each
// checkpoint hashes the table in memory and writes only its delta; an
// unchanged table (the same object as at the last checkpoint) writes nothing.
// A table that is the last checkpointed one's chunks followed by new ones
// (what Append / arrow::ConcatenateTables build: a join side, a dedup's seen
// rows) is an append: only the new rows are written and hashed, so such a
// checkpoint costs the change even for a very large table.
// A new base is written when the chain reaches `max_deltas`, when the
// deltas' rows exceed `compact_ratio` x the base's, when the schema changes,
// when a column type cannot be hashed, or always when `incremental` is off
// (the plain twin: a full image per epoch).
//
// Row order is not kept across a restore (the rows are); the operators treat
// their state tables as multisets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/table.h>
#include <nlohmann/json.hpp>

#include "engine/checkpoint/epoch_store.h"
#include "engine/checkpoint/row_hash.h"

namespace thund::engine::checkpoint {

struct ImageOptions {
  bool incremental = true;
  // Find the change place by place first (rows that kept their places cost
  // no sort); off: always match the multisets in hash order (the plain twin).
  bool positional = true;
  int max_deltas = 16;
  double compact_ratio = 0.5;
  // Back off to full images when finding the change (hashing) took longer
  // than the last full image took to write. Timing-dependent: tests that
  // count bytes turn it off.
  bool back_off_by_time = true;
};

// What the writer of a state table knows of its change: `since` is the table
// of the last checkpoint, and the new table's first since->num_rows() rows
// are since's rows in their places except those at `changed` (ascending);
// its rows after them are new. (An aggregate's merged groups: changed in
// place, new ones after.) A checkpoint given it hashes only those rows.
struct PlaceHint {
  std::shared_ptr<arrow::Table> since;
  std::vector<int64_t> changed;
};

// What a checkpoint wrote, for run events and benchmarks.
struct ImageWrite {
  int bases = 0;  // tables written as full images
  int64_t rows_written = 0;  // rows of the files written (base or added)
  int64_t bytes_written = 0;
};

class TableImage {
 public:
  // Writes what epoch `epoch` needs for `table` (null: no table) under
  // file names starting with `name`, appends every file the image needs (old
  // and new) to `files`, and returns the reference for the manifest body.
  // `hint` (may be null) is used when its `since` is the table this image
  // last checkpointed and `options.positional` is on; the caller vouches for
  // it (a wrong hint writes a wrong image).
  arrow::Result<nlohmann::json> Checkpoint(EpochStore& store, int64_t epoch,
                                           const std::string& name,
                                           const std::shared_ptr<arrow::Table>& table,
                                           const ImageOptions& options,
                                           std::vector<EpochFile>* files, ImageWrite* stats,
                                           const PlaceHint* hint = nullptr);
  // Reads the table `ref` (from manifest `m`) describes, checking every file,
  // and becomes its image. A null ref is no table (returns null).
  arrow::Result<std::shared_ptr<arrow::Table>> Restore(const EpochStore& store,
                                                       const EpochManifest& m,
                                                       const nlohmann::json& ref);

 private:
  arrow::Status WriteBase(EpochStore& store, int64_t epoch, const std::string& name,
                          const std::shared_ptr<arrow::Table>& table, ImageWrite* stats);
  void Reset();
  // The number of rows of `table` that are the table last checkpointed (its
  // chunks, the same objects, first in every column), or -1.
  int64_t AppendedTo(const arrow::Table& table) const;
  void Remember(const std::shared_ptr<arrow::Table>& table);
  // Adds the hashes of `rows` (appended to the image's rows) to `hashes_`:
  // an append costs its own rows, not the image's.
  arrow::Status MergeHashes(const arrow::Table& rows);
  // The change `hint` describes, rows hashed at its places only; `hashes_`
  // then describe `table`.
  arrow::Status HintedChange(const std::shared_ptr<arrow::Table>& table, const PlaceHint& hint,
                             std::vector<int64_t>* added, std::vector<RowHash>* removed);
  // Writes `rows` as the added rows of a new delta of epoch `epoch`.
  arrow::Status WriteAdded(EpochStore& store, int64_t epoch, const std::string& name,
                           const std::shared_ptr<arrow::Table>& rows, nlohmann::json* delta,
                           ImageWrite* stats);

  nlohmann::json ref_;             // null: no image yet
  std::vector<EpochFile> files_;   // the files ref_ names
  std::weak_ptr<arrow::Table> last_;  // the table last checkpointed
  // Its chunks, per column (weak: an append holds them, anything else lets
  // them go), and its rows.
  std::vector<std::vector<std::weak_ptr<arrow::Array>>> last_chunks_;
  int64_t last_rows_ = 0;
  // The hashes of the image's rows in the order of the table last
  // checkpointed: the next checkpoint compares the new table's hashes with
  // them place by place, or sorts both and merges (no hash table either way).
  std::vector<RowHash> hashes_;
  bool hashed_ = false;            // hashes_ describe the image
  std::shared_ptr<arrow::Schema> schema_;
  int64_t base_rows_ = 0, delta_rows_ = 0;
  int deltas_ = 0;
  // Epochs left to write full images without hashing: set when a delta
  // turned out too large to pay (most rows change each epoch), or when
  // hashing the table took longer than writing it whole did (a table
  // rebuilt every trigger on a fast disk), so a table that churns is not
  // hashed for nothing every epoch.
  int backoff_ = 0;
  int next_backoff_ = 2;
  double base_ns_per_row_ = -1;  // the last full image's write time, per row
  void BackOff();
};

}  // namespace thund::engine::checkpoint
