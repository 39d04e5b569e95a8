// UnitKeyCache: the key column of a target's row groups ("units"), decoded on
// demand and kept for a while, for RowKeyIndex to confirm matches.
//
// Entries are evicted least recently used first once their bytes exceed a
// budget. Lookups that follow the target's order (a rerun reading its source
// in the order the first run wrote it) need each unit once or twice; lookups
// that jump around would decode units again and again, so once units have come
// back after eviction more than `max_redecodes` times the cache stops
// evicting: in all, at most 2 x units + max_redecodes + 1 decodes (each unit,
// the re-decodes up to the switch, then once more each unit evicted by then),
// at the price of holding the target's keys (about what a KeySet would hold).
//
// Thread-safety: Get may be called from many threads; a unit is decoded by one
// of them while the others wanting it wait.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace thund::engine::keyed {

// The keys of one unit, row by row: key i is bytes[begins[i], + lengths[i]).
// (Keys need not be adjacent: a Parquet page's keys are copied in one piece,
// with the 4-byte lengths between them.)
struct UnitKeys {
  std::vector<int64_t> begins;
  std::vector<uint32_t> lengths;
  std::vector<char> bytes;
  std::vector<uint8_t> nulls;  // nulls[i] = 1 for a NULL key (empty key bytes); empty: none

  int64_t rows() const { return static_cast<int64_t>(lengths.size()); }
  std::string_view At(int64_t i) const { return {bytes.data() + begins[i], lengths[i]}; }
  bool IsNull(int64_t i) const { return !nulls.empty() && nulls[static_cast<size_t>(i)] != 0; }
  int64_t MemoryBytes() const {
    return static_cast<int64_t>(begins.capacity() * sizeof(int64_t) +
                                lengths.capacity() * sizeof(uint32_t) + bytes.capacity() +
                                nulls.capacity());
  }
  void Clear() {
    begins.clear();
    lengths.clear();
    bytes.clear();
    nulls.clear();
  }
  // Appends one (non-NULL) key.
  void Add(std::string_view key) {
    begins.push_back(static_cast<int64_t>(bytes.size()));
    lengths.push_back(static_cast<uint32_t>(key.size()));
    bytes.insert(bytes.end(), key.begin(), key.end());
  }
  // Appends n keys from a string column scan (DataFileReader::
  // ScanStringColumn); a NULL (is_null[i] != 0) is an empty key marked in
  // `nulls`.
  void Append(const std::string_view* values, const uint8_t* is_null, int64_t n);
};

class UnitKeyCache {
 public:
  // Fills `out` (cleared) with the keys of `unit`.
  using DecodeFn = std::function<arrow::Status(int unit, UnitKeys* out)>;

  UnitKeyCache(int units, int64_t budget_bytes, int64_t max_redecodes, DecodeFn decode);

  // The keys of `unit`, decoding them if they are not cached. A failed decode
  // is returned to every caller waiting for that unit.
  arrow::Result<std::shared_ptr<const UnitKeys>> Get(int unit);

  struct Stats {
    int64_t decodes = 0;    // units decoded (including again after eviction)
    int64_t redecodes = 0;  // of which units decoded before
    int64_t peak_bytes = 0;
    bool keeps_all = false;  // stopped evicting (see the header comment)
  };
  Stats stats() const;

  // A buffer for keys to Put: an evicted entry's when one is spare (its memory
  // already touched), else a new one. Cleared.
  std::shared_ptr<UnitKeys> Buffer();
  // Caches `keys` as unit `unit`'s (decoded elsewhere, e.g. while loading an
  // index) unless the unit is cached or being decoded. Nothing is evicted:
  // call Trim once the batch of Puts is done. REQUIRES: `keys` are exactly
  // what the DecodeFn gives for `unit`.
  void Put(int unit, std::shared_ptr<UnitKeys> keys);
  // Evicts least recently used entries while their bytes exceed
  // max(budget, `at_least`); later evictions keep that much too, until the
  // next Trim (Trim(0): back to the budget).
  void Trim(int64_t at_least);

 private:
  using Ready = std::shared_future<arrow::Result<std::shared_ptr<const UnitKeys>>>;
  struct Entry {
    Ready ready;                     // valid while cached or being decoded
    std::shared_ptr<UnitKeys> keys;  // owner, for reuse after eviction
    std::list<int>::iterator lru;    // valid while `cached`
    bool cached = false;
    int64_t bytes = 0;
    int64_t times_decoded = 0;
  };

  // Evicts least recently used entries (never `keep`) while over max(budget,
  // floor). mu_ held.
  void EvictLocked(int keep);

  const int64_t budget_;
  const int64_t max_redecodes_;
  const DecodeFn decode_;
  mutable std::mutex mu_;
  std::vector<Entry> entries_;                     // guarded by mu_
  std::list<int> lru_;                             // guarded by mu_; front = oldest
  std::vector<std::shared_ptr<UnitKeys>> spares_;  // guarded by mu_; evicted, unused
  int64_t cached_bytes_ = 0;                       // guarded by mu_
  int64_t floor_ = 0;                              // guarded by mu_; see Trim
  Stats stats_;                                    // guarded by mu_
};

}  // namespace thund::engine::keyed
