#include "engine/keyed/memory_pool.h"

#include <algorithm>
#include <cstring>

namespace thund::engine::keyed {

RecyclingMemoryPool::RecyclingMemoryPool(arrow::MemoryPool* backend, int64_t max_cached_bytes)
    : backend_(backend), max_cached_(max_cached_bytes) {}

RecyclingMemoryPool::~RecyclingMemoryPool() { ReleaseUnused(); }

int RecyclingMemoryPool::ClassOf(int64_t size, int64_t alignment) {
  if (size < kMinBytes || alignment > arrow::kDefaultBufferAlignment) return -1;
  int c = 64 - __builtin_clzll(static_cast<uint64_t>(size - 1));  // 2^c >= size
  return c < kClasses - 1 ? c : -1;
}

void RecyclingMemoryPool::Count(int64_t delta) {
  const int64_t now = allocated_.fetch_add(delta) + delta;
  if (delta > 0) {
    total_ += delta;
    ++allocations_;
    int64_t peak = max_allocated_.load();
    while (now > peak && !max_allocated_.compare_exchange_weak(peak, now)) {
    }
  }
}

arrow::Status RecyclingMemoryPool::Allocate(int64_t size, int64_t alignment, uint8_t** out) {
  const int c = ClassOf(size, alignment);
  if (c < 0) {
    ARROW_RETURN_NOT_OK(backend_->Allocate(size, alignment, out));
    Count(size);
    return arrow::Status::OK();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_[c].empty()) {
      *out = free_[c].back();
      free_[c].pop_back();
      cached_ -= ClassBytes(c);
      Count(ClassBytes(c));
      return arrow::Status::OK();
    }
  }
  ARROW_RETURN_NOT_OK(backend_->Allocate(ClassBytes(c), arrow::kDefaultBufferAlignment, out));
  Count(ClassBytes(c));
  return arrow::Status::OK();
}

arrow::Status RecyclingMemoryPool::Reallocate(int64_t old_size, int64_t new_size, int64_t alignment,
                                              uint8_t** ptr) {
  const int old_class = ClassOf(old_size, alignment);
  const int new_class = ClassOf(new_size, alignment);
  if (old_class < 0 && new_class < 0) {
    ARROW_RETURN_NOT_OK(backend_->Reallocate(old_size, new_size, alignment, ptr));
    Count(new_size - old_size);
    return arrow::Status::OK();
  }
  if (old_class == new_class) return arrow::Status::OK();  // the block already fits
  uint8_t* moved = nullptr;
  ARROW_RETURN_NOT_OK(Allocate(new_size, alignment, &moved));
  std::memcpy(moved, *ptr, static_cast<size_t>(std::min(old_size, new_size)));
  Free(*ptr, old_size, alignment);
  *ptr = moved;
  return arrow::Status::OK();
}

void RecyclingMemoryPool::Free(uint8_t* buffer, int64_t size, int64_t alignment) {
  const int c = ClassOf(size, alignment);
  if (c < 0) {
    backend_->Free(buffer, size, alignment);
    Count(-size);
    return;
  }
  Count(-ClassBytes(c));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ + ClassBytes(c) <= max_cached_) {
      free_[c].push_back(buffer);
      cached_ += ClassBytes(c);
      return;
    }
  }
  backend_->Free(buffer, ClassBytes(c), arrow::kDefaultBufferAlignment);
}

void RecyclingMemoryPool::ReleaseUnused() {
  std::lock_guard<std::mutex> lock(mu_);
  for (int c = 0; c < kClasses; ++c) {
    for (uint8_t* p : free_[c]) backend_->Free(p, ClassBytes(c), arrow::kDefaultBufferAlignment);
    free_[c].clear();
  }
  cached_ = 0;
}

int64_t RecyclingMemoryPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

namespace {

std::mutex scopes_mu;
int64_t live_scopes = 0;                // guarded by scopes_mu
std::atomic<int64_t> plain_scopes{0};  // live scopes with recycle=false

}  // namespace

RecyclingMemoryPool* KeyedRecyclingPool() {
  // A few row groups' buffers per thread stay cached; 256 MiB bounds it.
  static RecyclingMemoryPool pool(arrow::system_memory_pool(), int64_t{256} << 20);
  return &pool;
}

arrow::MemoryPool* KeyedMemoryPool() {
  if (plain_scopes.load(std::memory_order_relaxed) > 0) return arrow::system_memory_pool();
  return KeyedRecyclingPool();
}

KeyedMemoryScope::KeyedMemoryScope(bool recycle) : recycle_(recycle) {
  std::lock_guard<std::mutex> lock(scopes_mu);
  ++live_scopes;
  if (!recycle_) plain_scopes.fetch_add(1);
}

KeyedMemoryScope::~KeyedMemoryScope() {
  std::lock_guard<std::mutex> lock(scopes_mu);
  if (!recycle_) plain_scopes.fetch_sub(1);
  if (--live_scopes == 0) KeyedRecyclingPool()->ReleaseUnused();
}

arrow::compute::ExecContext* KeyedExecContext() {
  static arrow::compute::ExecContext recycling(KeyedRecyclingPool());  // stateless: thread-safe
  static arrow::compute::ExecContext plain(arrow::system_memory_pool());
  return KeyedMemoryPool() == KeyedRecyclingPool() ? &recycling : &plain;
}

arrow::io::IOContext KeyedIoContext() { return arrow::io::IOContext(KeyedMemoryPool()); }

}  // namespace thund::engine::keyed
