// Running work on several locked shards without queueing behind other threads.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

namespace thund::engine::keyed {

// Calls fn(s) for every shard index in `pending`, each under its mutex
// (mutex_of(s)). Shards another thread holds are skipped and come back later,
// so threads loading at the same time work on different shards instead of
// waiting for one another; the last shard left is waited for.
template <typename MutexOf, typename Fn>
void ForEachShardLocked(std::vector<size_t> pending, MutexOf&& mutex_of, Fn&& fn) {
  while (!pending.empty()) {
    size_t kept = 0;
    for (size_t p = 0; p < pending.size(); ++p) {
      const size_t s = pending[p];
      std::unique_lock<std::mutex> lock(mutex_of(s), std::defer_lock);
      if (p + 1 == pending.size() && kept == 0) {
        lock.lock();
      } else if (!lock.try_lock()) {
        pending[kept++] = s;
        continue;
      }
      fn(s);
    }
    pending.resize(kept);
  }
}

}  // namespace thund::engine::keyed
