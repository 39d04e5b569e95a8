// ZeroedArray<T>: a fixed-size array of trivially copyable T, zero-filled,
// for the big tables of a KeySet. Arrays of 2 MiB or more come straight from
// mmap (zero pages for free, no fill pass); slot tables may ask for transparent
// huge pages: they are probed at random, and huge pages cut the TLB misses of
// such probes (measured: less user time, but on a fragmented machine the
// kernel's compaction costs more system time than it saves when the bulk
// arena asks too; so only slot tables do). Smaller arrays use calloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace thund::engine::keyed {

// Zero-filled memory of `bytes` bytes and its release. `huge_pages` advises
// transparent huge pages (for memory probed at random); otherwise large blocks
// are populated up front (for memory filled front to back).
void* AllocateZeroed(size_t bytes, bool huge_pages);
void FreeZeroed(void* p, size_t bytes);

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n, bool huge_pages = false)
      : data_(static_cast<T*>(AllocateZeroed(n * sizeof(T), huge_pages))), size_(n) {}
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
