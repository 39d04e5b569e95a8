// KeySet: a set of encoded keys split into `buckets` shards (by hash), each
// shard a hash table with its own lock.
//
// Lifecycle and thread-safety:
//   * Insert() may be called from many threads at once (loading the target's
//     keys in parallel): rows are grouped by shard and each shard is locked once
//     per call.
//   * Contains() takes no lock: it REQUIRES that no Insert/InsertIfAbsent runs
//     at the same time (e.g. the target set is complete before filtering starts).
//     Concurrent Contains() calls are fine.
//   * InsertIfAbsent() is for one caller at a time (the ordered write path).
// Memory: see MemoryBytes(); per key, about 14 bytes (kFixed64), 28 (kFixed128)
// or the key's length + 15 (kBytes), as measured in tests/keyed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/keyed/key_encoder.h"
#include "engine/keyed/key_lookup.h"
#include "engine/keyed/key_spec.h"

namespace thund::engine::keyed {

class KeySet : public KeyLookup {
 public:
  // REQUIRES: buckets >= 1.
  static std::unique_ptr<KeySet> Make(KeyStorage storage, int64_t buckets);
  virtual ~KeySet() = default;

  // Presizes for `n` keys in total (spread evenly over the shards). Not thread-safe.
  virtual void Reserve(int64_t n) = 0;

  // Inserts every non-NULL row of `keys` (only rows with mask[i] != 0 when
  // `mask` is given). Returns how many keys were new. Thread-safe.
  virtual int64_t Insert(const EncodedKeys& keys, const uint8_t* mask = nullptr) = 0;

  // out[i] = 1 when row i's key is present (0 for NULL rows). See the header
  // comment for the concurrency requirement.
  virtual void Contains(const EncodedKeys& keys, uint8_t* out) const = 0;
  arrow::Status Lookup(const EncodedKeys& keys, uint8_t* out) const final {
    Contains(keys, out);
    return arrow::Status::OK();
  }

  // For each row with mask[i] != 0 (all rows when null) and a non-NULL key, in
  // row order: inserts it; first[i] = 1 when it was not present before (the
  // first occurrence), else 0. Rows not considered get first[i] = 0.
  virtual void InsertIfAbsent(const EncodedKeys& keys, const uint8_t* mask, uint8_t* first) = 0;

  virtual int64_t buckets() const = 0;
};

}  // namespace thund::engine::keyed
