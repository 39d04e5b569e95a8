#include "engine/keyed/key_set.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

#include "engine/keyed/bytes_key_table.h"
#include "engine/keyed/fixed_key_table.h"
#include "engine/keyed/key_hash.h"
#include "engine/keyed/shard_locking.h"

namespace thund::engine::keyed {
namespace {

// Adapters giving the three tables one shape: Insert/Contains on row i.
template <int N>
struct FixedOps {
  using Table = FixedKeyTable<N>;
  static typename Table::Key KeyAt(const EncodedKeys& k, int64_t i) {
    if constexpr (N == 1) {
      return {k.w0[i]};
    } else {
      return {k.w0[i], k.w1[i]};
    }
  }
  static bool Insert(Table& t, const EncodedKeys& k, int64_t i) {
    return t.Insert(KeyAt(k, i), k.hash[i]);
  }
  static bool Contains(const Table& t, const EncodedKeys& k, int64_t i) {
    return t.Contains(KeyAt(k, i), k.hash[i]);
  }
};

struct BytesOps {
  using Table = BytesKeyTable;
  static bool Insert(Table& t, const EncodedKeys& k, int64_t i) {
    return t.Insert(k.bytes[i], k.hash[i], k.w0[i]);
  }
  static bool Contains(const Table& t, const EncodedKeys& k, int64_t i) {
    return t.Contains(k.bytes[i], k.hash[i], k.w0[i]);
  }
};

template <typename Ops>
class ShardedKeySet final : public KeySet {
 public:
  explicit ShardedKeySet(int64_t buckets) : shards_(static_cast<size_t>(buckets)) {}

  void Reserve(int64_t n) override {
    const int64_t per = n / static_cast<int64_t>(shards_.size()) + 1;
    // Shard sizes spread like a binomial: allow 6 standard deviations.
    const int64_t slack = static_cast<int64_t>(6.0 * std::sqrt(static_cast<double>(per))) + 64;
    for (auto& s : shards_) s.table.Reserve(per + slack);
  }

  int64_t Insert(const EncodedKeys& keys, const uint8_t* mask) override {
    int64_t added = 0;
    InsertRows(keys, mask, [&](int64_t, bool inserted) { added += inserted ? 1 : 0; });
    return added;
  }

  // Probes are pipelined: the slot of row i + 32 and the entry bytes of row
  // i + 16 are prefetched while row i is compared, hiding most cache misses.
  void Contains(const EncodedKeys& keys, uint8_t* out) const override {
    const uint32_t b = static_cast<uint32_t>(shards_.size());
    constexpr int64_t kSlotAhead = 64, kEntryAhead = 24;
    const int64_t n = keys.length;
    for (int64_t i = 0; i < n + kSlotAhead; ++i) {
      if (i < n) {
        const uint64_t h = keys.hash[i];
        shards_[ShardOf(h, b)].table.Prefetch(h);
      }
      const int64_t j = i - (kSlotAhead - kEntryAhead);
      if (j >= 0 && j < n) {
        const uint64_t h = keys.hash[j];
        shards_[ShardOf(h, b)].table.PrefetchEntry(h, keys.w0[j]);
      }
      const int64_t k = i - kSlotAhead;
      if (k >= 0) {
        out[k] =
            !keys.is_null[k] && Ops::Contains(shards_[ShardOf(keys.hash[k], b)].table, keys, k);
      }
    }
  }

  // Rows are grouped by shard; within a shard they keep their order, and equal
  // keys always share a shard, so "first" means first in row order.
  void InsertIfAbsent(const EncodedKeys& keys, const uint8_t* mask, uint8_t* first) override {
    std::fill(first, first + keys.length, 0);
    InsertRows(keys, mask, [&](int64_t row, bool inserted) { first[row] = inserted ? 1 : 0; });
  }

  // Inserts the masked rows shard by shard (each shard under its lock, rows in
  // order); `done(row, inserted)`.
  template <typename Done>
  void InsertRows(const EncodedKeys& keys, const uint8_t* mask, Done&& done) {
    std::vector<std::vector<int64_t>> by_shard = GroupByShard(keys, mask);
    std::vector<size_t> pending;
    for (size_t s = 0; s < shards_.size(); ++s) {
      if (!by_shard[s].empty()) pending.push_back(s);
    }
    ForEachShardLocked(
        std::move(pending), [&](size_t s) -> std::mutex& { return shards_[s].mu; },
        [&](size_t s) { InsertShard(shards_[s].table, keys, by_shard[s], done); });
  }

  // The rows of one shard, in order, the slot of a row 12 ahead prefetched.
  template <typename Done>
  static void InsertShard(typename Ops::Table& table, const EncodedKeys& keys,
                          const std::vector<int64_t>& rows, Done& done) {
    constexpr size_t kAhead = 12;
    for (size_t r = 0; r < rows.size(); ++r) {
      if (r + kAhead < rows.size()) table.Prefetch(keys.hash[rows[r + kAhead]]);
      done(rows[r], Ops::Insert(table, keys, rows[r]));
    }
  }

  int64_t size() const override {
    int64_t n = 0;
    for (const auto& s : shards_) {
      std::lock_guard<std::mutex> lock(s.mu);
      n += s.table.size();
    }
    return n;
  }

  int64_t MemoryBytes() const override {
    int64_t n = 0;
    for (const auto& s : shards_) {
      std::lock_guard<std::mutex> lock(s.mu);
      n += s.table.MemoryBytes();
    }
    return n;
  }

  int64_t buckets() const override { return static_cast<int64_t>(shards_.size()); }

 private:
  struct alignas(64) Shard {  // one cache line each: no false sharing between loaders
    mutable std::mutex mu;
    typename Ops::Table table;
  };

  std::vector<std::vector<int64_t>> GroupByShard(const EncodedKeys& keys,
                                                 const uint8_t* mask) const {
    const uint32_t b = static_cast<uint32_t>(shards_.size());
    std::vector<std::vector<int64_t>> out(shards_.size());
    for (int64_t i = 0; i < keys.length; ++i) {
      if (keys.is_null[i] || (mask != nullptr && !mask[i])) continue;
      out[ShardOf(keys.hash[i], b)].push_back(i);
    }
    return out;
  }

  std::vector<Shard> shards_;
};

}  // namespace

std::unique_ptr<KeySet> KeySet::Make(KeyStorage storage, int64_t buckets) {
  switch (storage) {
    case KeyStorage::kFixed64:
      return std::make_unique<ShardedKeySet<FixedOps<1>>>(buckets);
    case KeyStorage::kFixed128:
      return std::make_unique<ShardedKeySet<FixedOps<2>>>(buckets);
    case KeyStorage::kBytes:
      break;
  }
  return std::make_unique<ShardedKeySet<BytesOps>>(buckets);
}

}  // namespace thund::engine::keyed
