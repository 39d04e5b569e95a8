// KeyLookup: "which of these keys are present?" -- what a keyed write asks of
// the keys already in its target. Two implementations: a KeySet (the keys held
// in memory) and a RowKeyIndex (row numbers in memory, keys read back from
// the target's files to confirm a match).
#pragma once

#include <arrow/status.h>

#include <cstdint>

#include "engine/keyed/key_encoder.h"

namespace thund::engine::keyed {

class KeyLookup {
 public:
  virtual ~KeyLookup() = default;

  // out[i] = 1 when row i's key is present, else 0 (0 for NULL rows). Safe to
  // call from many threads at once once the lookup is built. Fails only when
  // confirming a match needs a read that fails (RowKeyIndex).
  virtual arrow::Status Lookup(const EncodedKeys& keys, uint8_t* out) const = 0;

  // Keys held (a RowKeyIndex counts every target row with a key, so a key
  // the target holds twice counts twice) and the bytes of memory used.
  virtual int64_t size() const = 0;
  virtual int64_t MemoryBytes() const = 0;
};

}  // namespace thund::engine::keyed
