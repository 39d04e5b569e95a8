// The Arrow memory pool of keyed writes.
//
// Keyed writes allocate and free a row group's worth of buffers per unit of
// work (Parquet decompression buffers of ~1 MiB, decoded columns). Two costs
// showed up on the 18.9M-row benchmark (bench/README.md):
//   * the wheel's default pool (mimalloc) returned those blocks to the kernel as
//     transparent huge pages and got them back zeroed 2 MiB at a time (twice the
//     system time of the system allocator, for the same user time);
//   * the system allocator, in turn, trims and unmaps freed blocks of that size,
//     so every unit faulted its buffers in again (page faults, TLB shootdowns:
//     ~15% of the probe phase).
// So keyed writes use the system allocator behind a small recycling layer:
// freed blocks of 256 KiB or more are kept, by power-of-two size class, up to a
// bounded total (see RecyclingMemoryPool), and handed out again.
#pragma once

#include <arrow/compute/exec.h>
#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace thund::engine::keyed {

// A MemoryPool over `backend` that keeps freed large blocks for reuse.
// Blocks of at least kMinBytes (and alignment <= 64) are rounded up to a power
// of two; freeing one keeps it in its class's free list while the cached total
// stays under `max_cached_bytes`, else it goes back to `backend`. Reallocating
// within a class keeps the pointer. Thread-safe (one mutex, taken only for
// large blocks, which are few).
class RecyclingMemoryPool final : public arrow::MemoryPool {
 public:
  static constexpr int64_t kMinBytes = int64_t{256} << 10;

  RecyclingMemoryPool(arrow::MemoryPool* backend, int64_t max_cached_bytes);
  ~RecyclingMemoryPool() override;

  using arrow::MemoryPool::Allocate;
  using arrow::MemoryPool::Free;
  using arrow::MemoryPool::Reallocate;

  arrow::Status Allocate(int64_t size, int64_t alignment, uint8_t** out) override;
  arrow::Status Reallocate(int64_t old_size, int64_t new_size, int64_t alignment,
                           uint8_t** ptr) override;
  void Free(uint8_t* buffer, int64_t size, int64_t alignment) override;
  void ReleaseUnused() override;

  int64_t bytes_allocated() const override { return allocated_.load(); }
  int64_t max_memory() const override { return max_allocated_.load(); }
  int64_t total_bytes_allocated() const override { return total_.load(); }
  int64_t num_allocations() const override { return allocations_.load(); }
  std::string backend_name() const override {
    return "recycling(" + backend_->backend_name() + ")";
  }

  int64_t cached_bytes() const;

 private:
  static constexpr int kClasses = 64;
  // The class of a large block, or -1 when the block bypasses the cache.
  static int ClassOf(int64_t size, int64_t alignment);
  static int64_t ClassBytes(int c) { return int64_t{1} << c; }
  void Count(int64_t delta);

  arrow::MemoryPool* backend_;
  const int64_t max_cached_;
  mutable std::mutex mu_;
  std::array<std::vector<uint8_t*>, kClasses> free_;  // guarded by mu_
  int64_t cached_ = 0;                                // guarded by mu_
  std::atomic<int64_t> allocated_{0}, max_allocated_{0}, total_{0}, allocations_{0};
};

// The pool keyed reads and writes allocate from: the process-lifetime
// RecyclingMemoryPool (over the system allocator), or Arrow's system pool
// while a KeyedMemoryScope with recycle=false is alive (the plain twin; a
// buffer always returns to the pool it came from, so switching is safe).
arrow::MemoryPool* KeyedMemoryPool();
// The recycling pool itself (for tests and the scope below).
RecyclingMemoryPool* KeyedRecyclingPool();

// One keyed write's use of KeyedMemoryPool, for the write's whole life.
// recycle=false turns the recycling pool off for every keyed write of the
// process while the scope lives (a process-wide switch: the pool is shared).
// When the last live scope ends, the blocks the recycling pool keeps cached
// are returned to the system (ReleaseUnused): a long-running process (thund
// run, a server) holds no cache between keyed writes. Thread-safe.
class KeyedMemoryScope {
 public:
  explicit KeyedMemoryScope(bool recycle);
  ~KeyedMemoryScope();
  KeyedMemoryScope(const KeyedMemoryScope&) = delete;
  KeyedMemoryScope& operator=(const KeyedMemoryScope&) = delete;

 private:
  bool recycle_;
};

// An ExecContext for arrow::compute calls (Cast, Filter) on that pool.
arrow::compute::ExecContext* KeyedExecContext();
arrow::io::IOContext KeyedIoContext();

}  // namespace thund::engine::keyed
