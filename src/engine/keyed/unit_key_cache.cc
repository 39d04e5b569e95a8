#include "engine/keyed/unit_key_cache.h"

#include <algorithm>

namespace thund::engine::keyed {
namespace {

constexpr size_t kMaxSpares = 8;

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

void UnitKeyCache::EvictLocked(int keep) {
  while (!stats_.keeps_all && cached_bytes_ > budget_ && !lru_.empty()) {
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

UnitKeyCache::Stats UnitKeyCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace thund::engine::keyed
