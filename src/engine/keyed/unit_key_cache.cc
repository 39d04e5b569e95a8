#include "engine/keyed/unit_key_cache.h"

#include <algorithm>

namespace thund::engine::keyed {
namespace {

// Evicted buffers kept for reuse: enough for a round of an index load
// (RowKeyIndex::Build) to decode into memory already touched.
constexpr size_t kMaxSpares = 64;

}  // namespace

UnitKeyCache::UnitKeyCache(int units, int64_t budget_bytes, int64_t max_redecodes, DecodeFn decode)
    : budget_(budget_bytes),
      max_redecodes_(max_redecodes),
      decode_(std::move(decode)),
      entries_(static_cast<size_t>(units)) {}

arrow::Result<std::shared_ptr<const UnitKeys>> UnitKeyCache::Get(int unit) {
  std::unique_lock<std::mutex> lock(mu_);
  Entry& e = entries_[static_cast<size_t>(unit)];
  if (e.ready.valid()) {
    if (e.cached) lru_.splice(lru_.end(), lru_, e.lru);
    Ready ready = e.ready;
    lock.unlock();
    return ready.get();
  }
  std::promise<arrow::Result<std::shared_ptr<const UnitKeys>>> promise;
  e.ready = promise.get_future().share();
  if (e.times_decoded++ > 0 && ++stats_.redecodes > max_redecodes_) stats_.keeps_all = true;
  ++stats_.decodes;
  std::shared_ptr<UnitKeys> keys;
  if (!spares_.empty()) {
    keys = std::move(spares_.back());
    spares_.pop_back();
  } else {
    keys = std::make_shared<UnitKeys>();
  }
  lock.unlock();

  keys->Clear();
  arrow::Status st = decode_(unit, keys.get());

  lock.lock();
  Entry& done = entries_[static_cast<size_t>(unit)];
  if (!st.ok()) {
    promise.set_value(st);  // stays in `ready`: later callers get the error too
    return st;
  }
  done.keys = keys;
  done.bytes = keys->MemoryBytes();
  done.cached = true;
  done.lru = lru_.insert(lru_.end(), unit);
  cached_bytes_ += done.bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, cached_bytes_);
  std::shared_ptr<const UnitKeys> result = keys;
  promise.set_value(result);
  EvictLocked(unit);
  return result;
}

std::shared_ptr<UnitKeys> UnitKeyCache::Buffer() {
  std::unique_lock<std::mutex> lock(mu_);
  if (spares_.empty()) return std::make_shared<UnitKeys>();
  std::shared_ptr<UnitKeys> keys = std::move(spares_.back());
  spares_.pop_back();
  lock.unlock();
  keys->Clear();
  return keys;
}

void UnitKeyCache::Put(int unit, std::shared_ptr<UnitKeys> keys) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[static_cast<size_t>(unit)];
  if (e.ready.valid()) return;  // cached, or a Get is decoding it
  std::promise<arrow::Result<std::shared_ptr<const UnitKeys>>> promise;
  promise.set_value(std::shared_ptr<const UnitKeys>(keys));
  e.ready = promise.get_future().share();
  e.keys = std::move(keys);
  e.bytes = e.keys->MemoryBytes();
  e.cached = true;
  e.lru = lru_.insert(lru_.end(), unit);
  cached_bytes_ += e.bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, cached_bytes_);
}

void UnitKeyCache::Trim(int64_t at_least) {
  std::lock_guard<std::mutex> lock(mu_);
  floor_ = at_least;
  EvictLocked(-1);
}

void UnitKeyCache::EvictLocked(int keep) {
  const int64_t budget = std::max(budget_, floor_);
  while (!stats_.keeps_all && cached_bytes_ > budget && !lru_.empty()) {
    const int victim = lru_.front();
    if (victim == keep) break;  // only the newest is left
    lru_.pop_front();
    Entry& e = entries_[static_cast<size_t>(victim)];
    e.cached = false;
    e.ready = Ready();
    cached_bytes_ -= e.bytes;
    std::shared_ptr<UnitKeys> keys = std::move(e.keys);
    // Reused only when no reader still holds it.
    if (keys.use_count() == 1 && spares_.size() < kMaxSpares) spares_.push_back(std::move(keys));
  }
}

void UnitKeys::Append(const std::string_view* values, const uint8_t* is_null, int64_t n) {
  bool any_null = false;
  for (int64_t i = 0; i < n && !any_null; ++i) any_null = is_null[i] != 0;
  if (any_null || !nulls.empty()) {  // rows before the first NULL: not NULL
    nulls.resize(lengths.size(), 0);
    nulls.insert(nulls.end(), is_null, is_null + n);
  }
  // Keys of a plain-encoded page lie one after the other, 4 length bytes
  // apart: then the whole run is copied at once.
  bool one_piece = n > 0;
  for (int64_t i = 0; i < n && one_piece; ++i) {
    one_piece = !is_null[i] &&
                (i == 0 || values[i].data() == values[i - 1].data() + values[i - 1].size() + 4);
  }
  if (one_piece) {
    const int64_t base = static_cast<int64_t>(bytes.size());
    const char* start = values[0].data();
    bytes.insert(bytes.end(), start, values[n - 1].data() + values[n - 1].size());
    for (int64_t i = 0; i < n; ++i) {
      begins.push_back(base + (values[i].data() - start));
      lengths.push_back(static_cast<uint32_t>(values[i].size()));
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) Add(is_null[i] ? std::string_view() : values[i]);
}

UnitKeyCache::Stats UnitKeyCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace thund::engine::keyed
