// TargetKeyIndex: the keys of a keyed write's target without a copy of their
// bytes, for the common case of one string/binary key column stored in
// Parquet files (URLs, ids as text, ...).
//
// Per target row it keeps one 64-bit slot: a 24-bit tag (more bits of the key's
// hash) and the row's number. A lookup whose tag matches is confirmed against
// the key itself, read back from the target's file (that row group's key
// column, decoded on demand and cached: UnitKeyCache), so a hash collision
// never counts as a match -- lookups are exact, like a KeySet's.
//
// Why: a KeySet of 18.9M ~64-byte URL keys holds ~1.5 GB, and on the
// benchmark VM first touching that much memory costs 0.35 to 2 s per GiB of
// system time. The index holds ~256 MiB of slots plus a bounded cache; the
// price is decoding the key column of the row groups that lookups hit a second
// time. Lookups that follow the target's row order (a rerun reading its source
// in the order the first run wrote it) decode each such row group once more;
// others are bounded by the cache's rule (unit_key_cache.h).
//
// Usable when IsSingleVariableKey(spec), spec.storage is kBytes, every file is
// Parquet and DataFileReader::ScansStrings holds for the key column
// (LoadTargetKeys checks; otherwise it builds a KeySet).
//
// Thread-safety: Build uses `threads` threads; Lookup is safe from many
// threads at once. Target files must not change while the index is used.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/keyed/data_file_reader.h"
#include "engine/keyed/key_lookup.h"
#include "engine/keyed/key_spec.h"
#include "engine/keyed/unit_key_cache.h"
#include "engine/keyed/zeroed_array.h"

namespace thund::engine::keyed {

// Knobs of a TargetKeyIndex, with sound defaults; tests turn them to force the
// rare paths.
struct TargetKeyIndexTuning {
  int tag_bits = 24;                                // 1..24; fewer = more candidates to confirm
  int64_t cache_budget_bytes = int64_t{128} << 20;  // UnitKeyCache budget
  double max_load = 15.0 / 16;                      // a shard's fill before entries overflow
};

class TargetKeyIndex final : public KeyLookup {
 public:
  struct BuildStats {
    int64_t rows = 0;       // rows read
    int64_t null_rows = 0;  // rows with a NULL key (not indexed)
  };

  using Tuning = TargetKeyIndexTuning;

  // Indexes the key column (`key_fields[i]` of file i) of every file, reading
  // them with the already opened `readers` (released as each file is done).
  // `buckets` shards the slot table; `threads` read files in parallel.
  static arrow::Result<std::unique_ptr<TargetKeyIndex>> Build(
      std::shared_ptr<arrow::fs::FileSystem> fs, const KeySpec& spec, std::vector<DataFile> files,
      std::vector<int> key_fields, std::vector<std::unique_ptr<DataFileReader>> readers,
      int64_t buckets, int64_t threads, BuildStats* stats, const Tuning& tuning = {});

  ~TargetKeyIndex() override;

  arrow::Status Lookup(const EncodedKeys& keys, uint8_t* out) const override;
  int64_t size() const override { return size_; }
  // Slot tables plus the most the cache of decoded row groups held.
  int64_t MemoryBytes() const override;

  UnitKeyCache::Stats cache_stats() const { return cache_->stats(); }

  // Row numbers must fit the slot (40 bits).
  static constexpr int64_t kMaxRows = (int64_t{1} << 40) - 2;

 private:
  struct Unit {
    int file = 0;
    int row_group = 0;
    int64_t first_row = 0;  // number of the unit's first row, counted over all files
    int64_t rows = 0;
  };
  struct Shard;
  struct Candidate {
    int64_t key;   // row in the looked-up keys
    int64_t slot;  // first slot of its shard whose tag matches, or -1
    int64_t row;   // the target row in that slot
  };
  static std::vector<Candidate>& ScratchCandidates();  // per thread, reused
  static int64_t NextCandidate(const Shard& s, uint64_t p, uint64_t tag);
  uint64_t TagOf(uint64_t w0) const;
  uint64_t SlotValue(uint64_t w0, int64_t row) const;

  TargetKeyIndex() = default;
  arrow::Status InsertChunk(const EncodedKeys& keys, int64_t first_row,
                            std::vector<std::vector<uint32_t>>* by_shard);
  arrow::Status DecodeUnit(int unit, UnitKeys* out) const;
  int UnitOf(int64_t row) const;

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  KeySpec spec_;
  std::vector<DataFile> files_;
  std::vector<int> key_fields_;
  std::vector<Unit> units_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::vector<const Shard*> shard_ptrs_;  // shards_, for the lookup loop
  std::unique_ptr<UnitKeyCache> cache_;
  uint64_t tag_mask_ = 0;
  int64_t size_ = 0;
};

}  // namespace thund::engine::keyed
