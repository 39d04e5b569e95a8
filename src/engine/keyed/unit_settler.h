// UnitSettler: settling a source's row groups while the target's keys load.
//
// A rerun usually reads its source in the order the first run wrote the
// target. The target's keys are then loaded in rounds (RowKeyIndexRounds),
// and after each round the source's next row groups are looked up in the
// index so far. A row group whose every key is found is "settled": all its
// rows are already written. Its matches point at the round just loaded, whose
// key columns are still in memory, so they are confirmed without decoding the
// target's key column a second time; and most keys are not even hashed: one
// that follows a found key is compared with the target row after that key's
// match (see Walk). The streaming write skips settled row groups unread.
//
// Source row groups are read only as far as the keys loaded so far could
// cover. One with keys not found yet is kept (the keys still missing) and
// looked up again after the next rounds; if a round brings it no match (its
// missing keys are taken to be new), or it is still not settled after
// kMaxRoundsKept rounds, it is left to the streaming write.
// Settling stops for good once row groups of a step's worth of rows were left
// so with none settled in between (the two orders differ, or the rest is
// new), or when the source is done. A row group with a NULL key, or whose
// keys could not be read or looked up, is left to the streaming write, which
// applies the null_keys option or fails the run naming it. Answers are exact:
// a row group is settled only on matches confirmed against the keys' bytes,
// never on hashes.
//
// Before the first round, row groups whose key column is stored byte for byte
// as some target row group's (a file the first run copied whole; see
// stored_chunk.h) are settled by comparing those bytes, never decoded; the
// rounds then read around them.
//
// Applies (Applies()) to one Parquet source whose key column is the written
// key unchanged (no transform): a single string or binary column, exact keys.
//
// Thread-safety: AfterRound runs between the index's rounds (no insert in
// flight) and uses `threads` threads; the accessors once the index is built.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/keyed/key_spec.h"
#include "engine/keyed/row_key_index.h"
#include "engine/keyed/source_scan.h"
#include "engine/keyed/unit_key_cache.h"

namespace thund::engine::keyed {

class UnitSettler {
 public:
  // Whether a settler can serve `source` for keys `spec`: every file Parquet,
  // with the spec's single key column as a string or binary column.
  static bool Applies(const Source& source, const KeySpec& spec);

  // Target rows per round, and source rows read per step (at least a row
  // group per thread): a round's key columns (~80 bytes a row for URLs) stay
  // in memory while the source is looked up.
  static constexpr int64_t kRoundRows = int64_t{1} << 20;
  static constexpr int64_t kStepRows = int64_t{1} << 19;
  // Rounds a row group is kept for before it is left to the write: one that
  // straddles two rounds' rows settles after the next one.
  static constexpr int kMaxRoundsKept = 2;

  // REQUIRES: Applies(*source, spec); `source` outlives this. With
  // `compare_stored`, Rounds() settles twins first (SettleTwins).
  UnitSettler(std::shared_ptr<arrow::fs::FileSystem> fs, const Source* source, KeySpec spec,
              int64_t threads, int64_t round_rows = kRoundRows, int64_t step_rows = kStepRows,
              bool compare_stored = true);

  // Rounds for RowKeyIndex::Build that call SettleTwins (before the first,
  // with compare_stored; when it settles every row group the target's keys
  // are not loaded at all) and AfterRound.
  RowKeyIndexRounds Rounds();

  // Settles the row groups with no NULL key whose key column chunk has the
  // form and the bytes of one of the target's (`target_readers[f]` opened on
  // `target_files[f]`; null readers and CSV/JSON files are passed over). A
  // chunk that cannot be compared (unreadable, not as its footer says) is
  // left to the rounds and the streaming write, which report it.
  arrow::Status SettleTwins(const std::vector<DataFile>& target_files,
                            const std::vector<std::unique_ptr<DataFileReader>>& target_readers);

  // Looks up the kept row groups again, then new ones while none is kept.
  // Returns whether settling goes on (RowKeyIndexRounds::after_round).
  arrow::Result<bool> AfterRound(const RowKeyIndex& index);
  // Whether the keys of a round that ends with `rows_loaded_after` target
  // rows loaded are worth keeping (RowKeyIndexRounds::keep_round): only when
  // some row group is kept, or reading would reach them. Not when the source
  // read so far runs ahead of them, e.g. over row groups SettleTwins settled.
  bool WantsRound(int64_t rows_loaded_after) const;

  bool settled(int64_t unit) const { return settled_[static_cast<size_t>(unit)] != 0; }
  int64_t settled_units() const { return settled_units_; }
  int64_t settled_rows() const { return settled_rows_; }
  // Of settled_units(), those settled by SettleTwins.
  int64_t twin_units() const { return twin_units_; }

 private:
  struct Kept {
    int64_t unit = -1;
    UnitKeys missing;     // the keys not found so far
    int64_t gained = 0;   // keys found by the last lookup
    int rounds_kept = 0;  // lookups again so far
    bool has_null = false;
    bool failed = false;  // reading or looking up its keys failed
  };
  // Reads row group kept->unit's keys and looks them up.
  arrow::Status FirstLookUp(const RowKeyIndex& index, Kept* kept) const;
  // Looks kept->missing up again.
  arrow::Status LookUpAgain(const RowKeyIndex& index, Kept* kept) const;
  // A walk along the target's rows: keys that follow a found one in the
  // source mostly follow its row in the target too (a rerun of the same
  // input), and are then confirmed against that row in place (RowHolds)
  // instead of being hashed and probed.
  struct Walk {
    int64_t next_row = -1;  // the row after the last one found; -1: none
    RowKeyIndex::RowCursor at;
  };
  // Looks up `n` keys in order, adding those not found to `missing` and
  // counting those found in kept->gained: along `walk` while it holds, else
  // the first key alone (a found one starts a walk), else the rest in one
  // batch.
  arrow::Status LookUp(const RowKeyIndex& index, const std::string_view* values, int64_t n,
                       Kept* kept, UnitKeys* missing, Walk* walk) const;
  // The batch lookup of LookUp; the walk goes on after the last key when it
  // was found.
  arrow::Status LookUpBatch(const RowKeyIndex& index, const std::string_view* values, int64_t n,
                            Kept* kept, UnitKeys* missing, Walk* walk) const;
  void Settle(int64_t unit);
  // Row groups settled already at the front count as read: reading resumes
  // past them (and WantsRound weighs from there).
  void SkipSettled();

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  const Source* source_;
  KeySpec spec_;
  int64_t threads_;
  int64_t round_rows_;
  int64_t step_rows_;
  bool compare_stored_;
  std::vector<int> key_fields_;  // per file
  std::vector<uint8_t> settled_;
  std::vector<Kept> kept_;
  int64_t next_ = 0;          // the next row group not read yet
  int64_t read_rows_ = 0;     // rows of the row groups before it
  int64_t dropped_rows_ = 0;  // rows of row groups given up since one was settled
  bool done_ = false;
  int64_t settled_units_ = 0;
  int64_t settled_rows_ = 0;
  int64_t twin_units_ = 0;
  int64_t target_rows_ = -1;  // all the target's rows (SettleTwins); -1: unknown
};

}  // namespace thund::engine::keyed
