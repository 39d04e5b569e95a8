// ZeroedArray<T>: a fixed-size array of trivially copyable T, zero-filled and
// 64-byte aligned, for the big tables and arenas of a KeySet. Arrays of 2 MiB
// or more come straight from mmap, populated (writable, zeroed) up front;
// smaller ones from aligned_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace thund::engine::keyed {

// Zero-filled memory of `bytes` bytes and its release.
void* AllocateZeroed(size_t bytes);
void FreeZeroed(void* p, size_t bytes);

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n)
      : data_(static_cast<T*>(AllocateZeroed(n * sizeof(T)))), size_(n) {}
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
