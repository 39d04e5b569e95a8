// ZeroedArray<T>: a fixed-size array of trivially copyable T, zero-filled and
// 64-byte aligned, for the big tables and arenas of a KeySet and the slot
// tables of a RowKeyIndex. Arrays of 2 MiB
// or more come straight from mmap, populated (writable, zeroed) up front, on
// huge pages when asked and the kernel has them free (see AllocateZeroed);
// smaller ones from aligned_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

namespace thund::engine::keyed {

// Which pages a block of 2 MiB or more is mapped with.
enum class PageSize {
  kSmall,       // 4 KiB
  kHugeIfFree,  // huge as far as /proc/buddyinfo shows free 2 MiB blocks (HugePrefixBytes)
  kHuge,        // asks for transparent huge pages (the kernel may still refuse)
};

// Zero-filled, 64-byte aligned memory of `bytes` bytes and its release. Out of
// memory throws std::bad_alloc. (Blocks under 2 MiB ignore `pages`.)
void* AllocateZeroed(size_t bytes, PageSize pages = PageSize::kSmall);

// Test hook: the n-th AllocateZeroed call from now (any thread; n >= 1)
// throws std::bad_alloc as if memory ran out, once. 0 turns it off.
void FailZeroedAllocationAfter(int64_t n);
void FreeZeroed(void* p, size_t bytes);

// Bytes in free blocks of 2 MiB or more, from the text of /proc/buddyinfo
// (4 KiB pages): what huge pages can come from without compacting memory.
int64_t FreeHugePageBytes(std::string_view buddyinfo);

// kHugeIfFree: how many leading bytes of a `bytes` block to ask huge pages
// for, when `free_huge` bytes are free in 2 MiB blocks and other blocks of
// this process are taking `claimed` of them right now: at most half of what
// is left (so the kernel never compacts memory for it), in whole huge pages,
// and nothing when that is under 1/8 of the block (not worth a split).
size_t HugePrefixBytes(size_t bytes, int64_t free_huge, int64_t claimed);

// A block of `bytes` whose first `huge_bytes` (a multiple of 2 MiB, at most
// `bytes`) are asked for on huge pages and the rest on small ones; zeroed,
// 2 MiB aligned. Free with FreeZeroed. Null when out of memory. (What
// AllocateZeroed uses; exposed for tests.)
void* MapHugePrefix(size_t bytes, size_t huge_bytes);

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n, PageSize pages = PageSize::kSmall)
      : data_(static_cast<T*>(AllocateZeroed(n * sizeof(T), pages))), size_(n) {}
  ~ZeroedArray() { FreeZeroed(data_, size_ * sizeof(T)); }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;
  ZeroedArray(ZeroedArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    if (this != &o) {
      FreeZeroed(data_, size_ * sizeof(T));
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  bool ok() const { return data_ != nullptr || size_ == 0; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace thund::engine::keyed
