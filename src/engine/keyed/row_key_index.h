// RowKeyIndex: an exact set of keys that lives in Parquet files, held as row
// numbers instead of copies of the keys' bytes. For one string/binary key
// column (URLs, ids as text, ...); used for
//   * the keys already in a keyed write's target (Build: every row of the
//     target's files), and
//   * the keys a run has written so far, when they come from a Parquet source
//     (InsertIfAbsent: rows of the source, by their number in it).
//
// Per key it keeps one 64-bit slot: a 24-bit tag (more bits of the key's hash)
// and the row's number, in tables probed a cache line of slots at a time
// (slot_groups.h). A key whose tag matches a slot's is confirmed against
// the key itself, read back from its file (that row group's key column,
// decoded on demand and cached: UnitKeyCache), or taken from the batch being
// inserted when the row is in it. A hash collision therefore never counts as
// a match: answers are exact, like a KeySet's.
//
// Why: a KeySet of 18.9M ~64-byte URL keys holds ~1.5 GB, and on the
// benchmark VM first touching that much memory costs 0.35 to 2 s per GiB of
// system time. The index holds ~14 bytes per key plus a bounded cache; the
// price is decoding again the key column of the row groups that matches point
// at. Lookups that follow the file order (a rerun reading its source in the
// order the first run wrote it) decode each such row group about once more;
// others are bounded by the cache's rule (unit_key_cache.h). Keys written in
// this run rarely match (only real duplicates do), so that set almost never
// reads anything back.
//
// Usable when IsSingleVariableKey(spec), spec.storage is kBytes, every file is
// Parquet and DataFileReader::ScansStrings holds for its key column.
//
// Thread-safety: Build uses `threads` threads. Lookup is safe from many
// threads at once while nothing inserts; InsertIfAbsent is for one thread at
// a time. The files must not change while the index is used (a changed row
// group is reported as an error, never answered).
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/keyed/data_file_reader.h"
#include "engine/keyed/key_lookup.h"
#include "engine/keyed/key_spec.h"
#include "engine/keyed/slot_groups.h"
#include "engine/keyed/unit_key_cache.h"
#include "engine/keyed/zeroed_array.h"

namespace thund::engine::keyed {

// Knobs of a RowKeyIndex, with sound defaults; tests turn them to force the
// rare paths.
struct RowKeyIndexTuning {
  int tag_bits = 24;                                // 1..24; fewer = more candidates to confirm
  int64_t cache_budget_bytes = int64_t{128} << 20;  // UnitKeyCache budget
  double max_load = 15.0 / 16;                      // a shard's fill before entries overflow
  double sized_load = 0.75;                         // the fill a shard is sized for (< max_load)
  // Bits per key of the Bloom filter in front of the tables Build loads (0:
  // none). Looking up a key that is not there then mostly reads a filter
  // block instead of a slot group: ~11x less memory to reach into.
  int filter_bits_per_key = 10;
  // Tables of kHugePageTableBytes or more may ask for huge pages (false: never).
  bool huge_pages = true;

  // The defaults for `threads` reading at once: each may need a few row groups
  // of its own in the cache, so the budget grows by 32 MiB per thread past 4.
  static RowKeyIndexTuning ForThreads(int64_t threads) {
    RowKeyIndexTuning t;
    t.cache_budget_bytes += (threads > 4 ? threads - 4 : 0) * (int64_t{32} << 20);
    return t;
  }
};

class RowKeyIndex;

// Loading an index in rounds (RowKeyIndex::Build), so that lookups can start
// while the keys of the last row groups loaded are still in memory: the row
// groups are read about `round_rows` rows at a time (whole row groups, split
// between the threads; a thread reading part of a file opens its own reader).
// While `after_round` returns true, each round's key columns are put into the
// cache of decoded row groups, and after each round `after_round` sees the
// index of every key loaded so far (Lookup allowed; its answers are exact for
// those keys, and matches in the last round are confirmed without reading a
// file again). When it returns false, the other row groups are loaded in one
// go and nothing more is kept. `before_rounds`, when set, sees the files and
// their opened readers (footers read, nothing loaded yet) first, and returns
// whether the keys are needed at all: when not, nothing is loaded (the index
// stays empty; BuildStats::skipped). `keep_round`,
// when set, is asked before each round (given the rows loaded once it is done)
// whether to keep that round's keys in the cache at all.
struct RowKeyIndexRounds {
  int64_t round_rows = int64_t{1} << 20;
  std::function<arrow::Result<bool>(const RowKeyIndex&)> after_round;
  std::function<bool(int64_t rows_loaded_after)> keep_round;
  std::function<arrow::Result<bool>(const std::vector<DataFile>& files,
                                    const std::vector<std::unique_ptr<DataFileReader>>& readers)>
      before_rounds;
};

class RowKeyIndex final : public KeyLookup {
 public:
  using Tuning = RowKeyIndexTuning;

  // A row group of one of the files, and the numbers of its rows.
  struct Unit {
    int file = 0;
    int row_group = 0;
    int64_t first_row = 0;  // counted over all files, in order
    int64_t rows = 0;
  };

  // Row numbers must fit the slot (40 bits).
  static constexpr int64_t kMaxRows = (int64_t{1} << 40) - 2;

  // An empty index over `units` of `files` (key column `key_fields[f]` of file
  // f), for about `expected_keys` in `buckets` shards (allocated at the first
  // insert; it grows past that).
  // Invalid when the rows do not fit kMaxRows.
  // Keys given to it must be encoded by a spec for which IsSingleVariableKey
  // holds and whose storage is kBytes (so a key's bytes are the column's).
  static arrow::Result<std::unique_ptr<RowKeyIndex>> Make(std::shared_ptr<arrow::fs::FileSystem> fs,
                                                          std::vector<DataFile> files,
                                                          std::vector<int> key_fields,
                                                          std::vector<Unit> units, int64_t buckets,
                                                          int64_t expected_keys,
                                                          const Tuning& tuning = {});

  struct BuildStats {
    int64_t rows = 0;       // rows read
    int64_t null_rows = 0;  // rows with a NULL key (not indexed)
    bool skipped = false;   // RowKeyIndexRounds::before_rounds said no key is needed
  };
  // An index of every row of `files`, read with the already opened `readers`
  // (released as each file is done) on `threads` threads; in rounds when
  // `rounds` is given (see RowKeyIndexRounds).
  static arrow::Result<std::unique_ptr<RowKeyIndex>> Build(
      std::shared_ptr<arrow::fs::FileSystem> fs, const KeySpec& spec, std::vector<DataFile> files,
      std::vector<int> key_fields, std::vector<std::unique_ptr<DataFileReader>> readers,
      int64_t buckets, int64_t threads, BuildStats* stats, const Tuning& tuning = {},
      const RowKeyIndexRounds* rounds = nullptr);

  ~RowKeyIndex() override;

  // Allocates the table for the `expected_keys` given to Make now, on up to
  // `threads` threads, instead of at the first insert (which runs on one).
  // Does nothing when a table exists or none is expected.
  arrow::Status Reserve(int64_t threads);

  arrow::Status Lookup(const EncodedKeys& keys, uint8_t* out) const override {
    return LookupRows(keys, out, nullptr);
  }
  // Lookup that also tells, for each key found, the number of a row holding
  // it (rows[i]; -1 when not found). `rows` may be null.
  arrow::Status LookupRows(const EncodedKeys& keys, uint8_t* out, int64_t* rows) const;

  // Where a walk along the rows stands (RowHolds): the row group at hand.
  struct RowCursor {
    std::shared_ptr<const UnitKeys> keys;
    int64_t lo = 0, hi = 0;  // its rows
  };
  // Whether row `row` of the files holds `key`: its bytes, exactly; never a
  // NULL row. For confirming keys that follow a found one in the files' order
  // without looking them up. False for a row not loaded yet (Build in rounds)
  // or past the end; an index made by Make has no loaded rows. Safe like
  // Lookup.
  arrow::Result<bool> RowHolds(int64_t row, std::string_view key, RowCursor* at) const;

  // For each row i of `keys` with mask[i] != 0 (all rows when null) and a key,
  // in order: first[i] = 1 and the key is added as row `first_row + i` when it
  // was not present (also not earlier in this batch), else first[i] = 0. Rows
  // not considered get 0. REQUIRES: keys.bytes holds the keys of those rows
  // (in the files), which were never added before.
  arrow::Status InsertIfAbsent(const EncodedKeys& keys, int64_t first_row, const uint8_t* mask,
                               uint8_t* first);
  // Same, for rows numbered rows[i] (ascending).
  arrow::Status InsertIfAbsent(const EncodedKeys& keys, const int64_t* rows, const uint8_t* mask,
                               uint8_t* first);

  int64_t size() const override { return size_; }
  // Slot tables plus the most the cache of decoded row groups held.
  int64_t MemoryBytes() const override;
  UnitKeyCache::Stats cache_stats() const { return cache_->stats(); }
  // Looked-up keys whose home group was full and held no candidate, so that
  // the following groups were scanned too.
  int64_t lookups_past_home() const { return lookups_past_home_.load(); }
  // Looked-up keys the Bloom filter answered alone (not there).
  int64_t lookups_filtered() const { return lookups_filtered_.load(); }

 private:
  struct Shard;
  struct Table;
  struct Candidate {
    int64_t key;  // row in the looked-up keys
    int table;
    int64_t slot;  // first slot of its shard in `table` whose tag matches
    int64_t row;   // the row in that slot
  };
  // The batch being inserted: its rows 0..added-1 may be in the index, and
  // their keys are at hand. Row i is number rows[i], or first_row + i.
  struct Batch {
    const EncodedKeys* keys = nullptr;
    const int64_t* rows = nullptr;
    int64_t first_row = 0;
    int64_t added = 0;
  };

  RowKeyIndex() = default;
  // Appends a table sized for `keys` keys, its shards allocated on up to
  // `threads` threads. OutOfMemory when they cannot be.
  arrow::Status AddTable(int64_t keys, int64_t threads = 1, bool filter = false);
  THUND_VECTOR_CLONES arrow::Status InsertIfAbsentImpl(const EncodedKeys& keys, int64_t first_row,
                                                       const int64_t* rows, const uint8_t* mask,
                                                       uint8_t* first);
  uint64_t TagOf(uint64_t w0) const;
  uint64_t SlotValue(uint64_t w0, int64_t row) const;
  const Shard& ShardFor(const Table& t, uint64_t hash) const;
  void PrefetchHome(uint64_t hash) const;
  // Pass 1 of Lookup for one table without overflow entries: `out` gets the
  // first candidate of each key `which[0..count)` of `keys`.
  THUND_VECTOR_CLONES void FirstCandidates(const Table& table, const EncodedKeys& keys,
                                           const int64_t* which, int64_t count,
                                           std::vector<Candidate>* out) const;
  // The non-NULL keys of `keys` the table's Bloom filter may hold (all of
  // them when it has none), into `which`; returns how many.
  THUND_VECTOR_CLONES int64_t MayHold(const Table& table, const EncodedKeys& keys,
                                      std::vector<int64_t>* which) const;
  // Adds every non-NULL key of `keys` as row first_row + i (no check). Safe
  // from several threads (shard locks).
  void AddAll(const EncodedKeys& keys, int64_t first_row,
              std::vector<std::vector<uint32_t>>* by_shard);
  // AddAll's rows `rows` of `keys`, all of `shard` (locked by the caller).
  THUND_VECTOR_CLONES void AddRows(Shard* shard, const std::vector<uint32_t>& rows,
                                   const EncodedKeys& keys, int64_t first_row);
  // Whether some entry for keys[k] holds an equal key, checking every
  // candidate after `skip` (the one already checked, if any).
  // (`row`, when given, gets the matching row's number.)
  arrow::Result<bool> AnyMatch(const EncodedKeys& keys, int64_t k, const Candidate* skip,
                               const Batch& batch, std::shared_ptr<const UnitKeys>* unit_keys,
                               int64_t* lo, int64_t* hi, int64_t* row = nullptr) const;
  arrow::Result<bool> Matches(int64_t row, const EncodedKeys& keys, int64_t k, const Batch& batch,
                              std::shared_ptr<const UnitKeys>* unit_keys, int64_t* lo,
                              int64_t* hi) const;
  arrow::Status DecodeUnit(int unit, UnitKeys* out) const;
  int UnitOf(int64_t row) const;

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::vector<DataFile> files_;
  std::vector<int> key_fields_;
  std::vector<Unit> units_;
  Tuning tuning_;
  int64_t buckets_ = 1;
  uint64_t tag_mask_ = 0;
  int64_t expected_keys_ = 0;                   // sizes the first table
  std::vector<std::unique_ptr<Table>> tables_;  // the last takes inserts
  std::unique_ptr<UnitKeyCache> cache_;
  int64_t size_ = 0;
  int64_t loaded_rows_ = 0;  // rows 0..loaded_rows_-1 are in the index (Build)
  mutable std::atomic<int64_t> lookups_past_home_{0};
  mutable std::atomic<int64_t> lookups_filtered_{0};
};

}  // namespace thund::engine::keyed
