// BytesKeyTable: an open-addressing hash set of variable-length keys, one shard
// of a KeySet. The keys' bytes live in an append-only arena (LEB128 length +
// bytes, in chunks of 64 KiB growing to 4 MiB); each 8-byte slot holds a 16-bit tag (more hash
// bits, so most mismatches are rejected without touching the arena) and the
// entry's arena position. Lookups compare the full bytes: exact, never fooled by
// a hash collision. Memory per key: its length + 1-2 bytes + 8 bytes / load
// (load 0.375..0.75, so 10.7..21.3 bytes of slots per key). Not thread-safe (the KeySet locks
// around it).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/keyed/zeroed_array.h"

namespace thund::engine::keyed {

class BytesKeyTable {
 public:
  BytesKeyTable();

  // Grows so that `n` keys in total fit without rehashing.
  void Reserve(int64_t n);

  // `hash` places the key, `tag_bits` supplies the tag. True when the key was
  // not present (and is now). REQUIRES: key.size() < 32 MiB.
  bool Insert(std::string_view key, uint64_t hash, uint64_t tag_bits);
  bool Contains(std::string_view key, uint64_t hash, uint64_t tag_bits) const;
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }
  // When the key's home slot (already prefetched) holds an entry with its tag,
  // prefetches that entry's bytes, so a probe that hits waits on one miss less.
  void PrefetchEntry(uint64_t hash, uint64_t tag_bits) const {
    const uint64_t tag = TagOf(tag_bits);
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      const uint64_t slot = slots_[i];
      if (slot == 0) return;
      if ((slot >> 48) == tag) {
        const uint8_t* p = EntryPtr(slot);
        __builtin_prefetch(p);
        __builtin_prefetch(p + 63);
        return;
      }
    }
  }

  int64_t size() const { return size_; }
  int64_t MemoryBytes() const;

 private:
  static constexpr int kChunkBits = 26;            // positions address 64 MiB per chunk
  static constexpr size_t kChunkBytes = 4u << 20;  // largest usual chunk
  static constexpr size_t kMinChunkBytes = 64u << 10;
  static uint64_t TagOf(uint64_t tag_bits) { return tag_bits >> 48; }

  const uint8_t* EntryPtr(uint64_t slot) const {
    const uint64_t position = (slot & ((uint64_t{1} << 48) - 1)) - 1;
    return chunks_[position >> kChunkBits].data() + (position & ((1u << kChunkBits) - 1));
  }
  std::string_view Entry(uint64_t slot) const;
  uint64_t Append(std::string_view key);  // arena position of a new entry
  void Rehash(uint64_t capacity);

  ZeroedArray<uint64_t> slots_;  // 0 = empty, else tag << 48 | (position + 1)
  uint64_t mask_ = 0;
  int64_t size_ = 0;
  std::vector<ZeroedArray<uint8_t>> chunks_;
  uint32_t used_ = 0;        // bytes used in the last chunk
  int64_t chunk_bytes_ = 0;  // all chunks' sizes
};

}  // namespace thund::engine::keyed
