// FixedKeyTable<N>: an open-addressing hash set of N-word keys (N = 1 or 2),
// one shard of a KeySet. Linear probing, capacity a power of two, grows at 3/4
// load. An all-zero slot is empty; the one key equal to all zeros is remembered
// by a flag. Memory: 8*N bytes per slot (load 0.375..0.75 after presizing).
// Not thread-safe (the KeySet locks around it).
#pragma once

#include <array>
#include <cstdint>

#include "engine/keyed/key_hash.h"
#include "engine/keyed/zeroed_array.h"

namespace thund::engine::keyed {

template <int N>
class FixedKeyTable {
 public:
  using Key = std::array<uint64_t, N>;

  FixedKeyTable() { Rehash(16); }

  static uint64_t HashOf(const Key& k) { return HashWords(k[0], N > 1 ? k[N - 1] : 0); }

  // Grows so that `n` keys in total fit without rehashing.
  void Reserve(int64_t n) {
    uint64_t want = 16;
    while (static_cast<double>(want) * 0.75 < static_cast<double>(n)) want <<= 1;
    if (want > slots_.size()) Rehash(want);
  }

  // True when `key` was not present (and is now).
  bool Insert(const Key& key, uint64_t hash) {
    if (IsZero(key)) {
      bool added = !has_zero_;
      has_zero_ = true;
      size_ += added ? 1 : 0;
      return added;
    }
    if (static_cast<double>(size_ + 1) > 0.75 * static_cast<double>(slots_.size())) {
      Rehash(slots_.size() * 2);
    }
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      Key& slot = slots_[i];
      if (IsZero(slot)) {
        slot = key;
        ++size_;
        return true;
      }
      if (Equal(slot, key)) return false;
    }
  }

  bool Contains(const Key& key, uint64_t hash) const {
    if (IsZero(key)) return has_zero_;
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Key& slot = slots_[i];
      if (Equal(slot, key)) return true;
      if (IsZero(slot)) return false;
    }
  }

  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }
  void PrefetchEntry(uint64_t, uint64_t) const {}  // keys live in the slots

  int64_t size() const { return size_; }
  int64_t MemoryBytes() const { return static_cast<int64_t>(slots_.size() * sizeof(Key)); }

 private:
  // Word by word (std::array's == calls memcmp).
  static bool Equal(const Key& a, const Key& b) {
    uint64_t diff = 0;
    for (int w = 0; w < N; ++w) diff |= a[w] ^ b[w];
    return diff == 0;
  }
  static bool IsZero(const Key& k) {
    uint64_t any = 0;
    for (uint64_t w : k) any |= w;
    return any == 0;
  }

  void Rehash(uint64_t capacity) {
    ZeroedArray<Key> old(capacity);
    std::swap(old, slots_);
    mask_ = capacity - 1;
    for (size_t j = 0; j < old.size(); ++j) {
      const Key& k = old[j];
      if (IsZero(k)) continue;
      for (uint64_t i = HashOf(k) & mask_;; i = (i + 1) & mask_) {
        if (IsZero(slots_[i])) {
          slots_[i] = k;
          break;
        }
      }
    }
  }

  ZeroedArray<Key> slots_;
  uint64_t mask_ = 0;
  int64_t size_ = 0;
  bool has_zero_ = false;
};

}  // namespace thund::engine::keyed
