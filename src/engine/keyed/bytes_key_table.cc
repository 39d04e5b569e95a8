#include "engine/keyed/bytes_key_table.h"

#include <algorithm>
#include <cstring>

#include "engine/keyed/key_hash.h"

namespace thund::engine::keyed {
namespace {

size_t Leb128Size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

}  // namespace

BytesKeyTable::BytesKeyTable() { Rehash(16); }

void BytesKeyTable::Reserve(int64_t n) {
  uint64_t want = 16;
  while (static_cast<double>(want) * 0.75 < static_cast<double>(n)) want <<= 1;
  if (want > slots_.size()) Rehash(want);
}

std::string_view BytesKeyTable::Entry(uint64_t slot) const {
  const uint8_t* p = EntryPtr(slot);
  uint64_t length = 0;
  int shift = 0;
  while (true) {
    uint8_t byte = *p++;
    length |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
    shift += 7;
  }
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(length)};
}

uint64_t BytesKeyTable::Append(std::string_view key) {
  const size_t need = Leb128Size(key.size()) + key.size();
  if (chunks_.empty() || used_ + need > chunks_.back().size()) {
    // Chunks grow with the arena (64 KiB .. 4 MiB), so a small set wastes
    // little and a big one takes few, populated, allocations.
    size_t size =
        std::clamp<size_t>(static_cast<size_t>(chunk_bytes_ / 2), kMinChunkBytes, kChunkBytes);
    size = std::max(size, need);
    chunks_.emplace_back(size);
    chunk_bytes_ += static_cast<int64_t>(size);
    used_ = 0;
  }
  uint8_t* p = chunks_.back().data() + used_;
  uint64_t v = key.size();
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    *p++ = byte;
  } while (v != 0);
  std::memcpy(p, key.data(), key.size());
  const uint64_t position = (static_cast<uint64_t>(chunks_.size() - 1) << kChunkBits) | used_;
  used_ += static_cast<uint32_t>(need);
  return position;
}

bool BytesKeyTable::Insert(std::string_view key, uint64_t hash, uint64_t tag_bits) {
  if (static_cast<double>(size_ + 1) > 0.75 * static_cast<double>(slots_.size())) {
    Rehash(slots_.size() * 2);
  }
  const uint64_t tag = TagOf(tag_bits);
  for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
    const uint64_t slot = slots_[i];
    if (slot == 0) {
      slots_[i] = (tag << 48) | (Append(key) + 1);
      ++size_;
      return true;
    }
    if ((slot >> 48) == tag && Entry(slot) == key) return false;
  }
}

bool BytesKeyTable::Contains(std::string_view key, uint64_t hash, uint64_t tag_bits) const {
  const uint64_t tag = TagOf(tag_bits);
  for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
    const uint64_t slot = slots_[i];
    if (slot == 0) return false;
    if ((slot >> 48) == tag && Entry(slot) == key) return true;
  }
}

void BytesKeyTable::Rehash(uint64_t capacity) {
  ZeroedArray<uint64_t> old(capacity);
  std::swap(old, slots_);
  mask_ = capacity - 1;
  for (size_t j = 0; j < old.size(); ++j) {
    const uint64_t slot = old[j];
    if (slot == 0) continue;
    std::string_view key = Entry(slot);
    const uint64_t hash = HashBytes128(key.data(), key.size()).low;
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == 0) {
        slots_[i] = slot;
        break;
      }
    }
  }
}

int64_t BytesKeyTable::MemoryBytes() const {
  return static_cast<int64_t>(slots_.size() * sizeof(uint64_t)) + chunk_bytes_;
}

}  // namespace thund::engine::keyed
