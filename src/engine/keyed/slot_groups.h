// Probing a table of 64-bit slots a cache line at a time.
//
// A key's home is a group of kGroupSlots slots (one 64-byte line: tables are
// 64-byte aligned, see ZeroedArray), picked by its hash; its entries lie in
// the groups from there on, up to the first group that has an empty slot.
// Slots are never emptied, so that group also ends every entry inserted
// before it. A slot is 0 when empty; otherwise its bits from `tag_shift` up
// hold the entry's tag.
//
// ScanGroup is plain code that compilers turn into a few vector compares when
// the target has them. Hot loops that call it are built twice with
// THUND_VECTOR_CLONES (AVX2 and the baseline, picked once at load time by the
// CPU): on the benchmark VM an AVX2 probe of a 128 MiB table took 17 ns per
// key against 41 ns for the baseline build. Most of that is not the compares
// themselves: fewer instructions per key keep more cache and TLB misses in
// flight at once.
#pragma once

#include <cstdint>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define THUND_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define THUND_VECTOR_CLONES
#endif

namespace thund::engine::keyed {

inline constexpr uint64_t kGroupSlots = 8;

// Bit j set: slot j of the group.
struct GroupBits {
  unsigned tags = 0;   // occupied, with the tag looked for
  unsigned empty = 0;  // empty
};

template <int kTagShift>
inline GroupBits ScanGroup(const uint64_t* group, uint64_t tag) {
  unsigned tags = 0, empty = 0;
  for (uint64_t j = 0; j < kGroupSlots; ++j) {
    tags |= static_cast<unsigned>((group[j] >> kTagShift) == tag) << j;
    empty |= static_cast<unsigned>(group[j] == 0) << j;
  }
  return GroupBits{tags & ~empty, empty};
}

// The lowest slot set in `bits`; kGroupSlots when there is none.
inline unsigned FirstSlot(unsigned bits) {
  return static_cast<unsigned>(__builtin_ctz(bits | (1u << kGroupSlots)));
}

// The next slot, in probe order, after slot `after` whose tag is `tag`,
// starting at home group `home` when `after` is -1; -1 when the key's groups
// hold no more. `slots` has gmask + 1 groups.
template <int kTagShift>
inline int64_t NextTagged(const uint64_t* slots, uint64_t gmask, uint64_t home, uint64_t tag,
                          int64_t after) {
  uint64_t g = after < 0 ? home : static_cast<uint64_t>(after) / kGroupSlots;
  // Slots of the first group already visited: those up to `after`.
  unsigned visited = after < 0 ? 0u : (2u << (static_cast<uint64_t>(after) % kGroupSlots)) - 1;
  for (;; g = (g + 1) & gmask, visited = 0) {
    const GroupBits bits = ScanGroup<kTagShift>(slots + g * kGroupSlots, tag);
    const unsigned tags = bits.tags & ~visited;
    if (tags != 0) return static_cast<int64_t>(g * kGroupSlots + FirstSlot(tags));
    if (bits.empty != 0) return -1;
  }
}

}  // namespace thund::engine::keyed
