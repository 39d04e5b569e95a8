// Hash functions for keys. Not cryptographic; fast and well mixed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace thund::engine::keyed {

struct Hash128 {
  uint64_t low = 0;
  uint64_t high = 0;
};

// XXH3 128-bit hash of `size` bytes at `data`.
Hash128 HashBytes128(const void* data, size_t size);

// A bijective mixer (the 64-bit finalizer of MurmurHash3): distinct inputs give
// distinct outputs, so fixed-width keys keep exactness through it.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// The 64-bit hash used to place a fixed-width key (one or two words).
inline uint64_t HashWords(uint64_t w0, uint64_t w1) {
  return Mix64(w0 ^ Mix64(w1 + 0x9e3779b97f4a7c15ULL));
}

// Shard of a 64-bit hash among `buckets` shards (uses the high 32 bits; slots
// inside a shard use the low bits).
inline uint32_t ShardOf(uint64_t hash, uint32_t buckets) {
  return static_cast<uint32_t>(((hash >> 32) * static_cast<uint64_t>(buckets)) >> 32);
}

}  // namespace thund::engine::keyed
