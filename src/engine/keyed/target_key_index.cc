#include "engine/keyed/target_key_index.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>

#include "engine/keyed/key_hash.h"
#include "engine/keyed/ordered_parallel.h"
#include "engine/keyed/shard_locking.h"

namespace thund::engine::keyed {
namespace {

constexpr int kRowBits = 40;
constexpr uint64_t kRowMask = (uint64_t{1} << kRowBits) - 1;
int64_t RowOf(uint64_t slot) { return static_cast<int64_t>(slot & kRowMask) - 1; }

}  // namespace

std::vector<TargetKeyIndex::Candidate>& TargetKeyIndex::ScratchCandidates() {
  thread_local std::vector<Candidate> scratch;
  return scratch;
}

// One shard of the slot table: linear probing, sized from the row count so it
// never grows. Entries past 15/16 load (a shard far above its expected share,
// which presizing makes vanishingly rare) go to `overflow`.
struct TargetKeyIndex::Shard {
  std::mutex mu;  // held while building
  ZeroedArray<uint64_t> slots;
  uint64_t mask = 0;
  int64_t size = 0;
  int64_t limit = 0;
  std::unordered_multimap<uint64_t, uint64_t> overflow;  // hash -> slot value

  void Insert(uint64_t hash, uint64_t value) {
    if (size >= limit) {
      overflow.emplace(hash, value);
      return;
    }
    for (uint64_t i = hash & mask;; i = (i + 1) & mask) {
      if (slots[i] == 0) {
        slots[i] = value;
        ++size;
        return;
      }
    }
  }
};

TargetKeyIndex::~TargetKeyIndex() = default;

// The tag: the top bits of the key's second hash word (EncodedKeys::w0),
// independent of the bits that pick the shard and the slot (EncodedKeys::hash).
uint64_t TargetKeyIndex::TagOf(uint64_t w0) const { return (w0 >> kRowBits) & tag_mask_; }
uint64_t TargetKeyIndex::SlotValue(uint64_t w0, int64_t row) const {
  return (TagOf(w0) << kRowBits) | static_cast<uint64_t>(row + 1);
}

arrow::Result<std::unique_ptr<TargetKeyIndex>> TargetKeyIndex::Build(
    std::shared_ptr<arrow::fs::FileSystem> fs, const KeySpec& spec, std::vector<DataFile> files,
    std::vector<int> key_fields, std::vector<std::unique_ptr<DataFileReader>> readers,
    int64_t buckets, int64_t threads, BuildStats* stats, const Tuning& tuning) {
  std::unique_ptr<TargetKeyIndex> index(new TargetKeyIndex());
  const int tag_bits = std::clamp(tuning.tag_bits, 1, 64 - kRowBits);
  index->tag_mask_ = (uint64_t{1} << tag_bits) - 1;
  index->fs_ = std::move(fs);
  index->spec_ = spec;
  index->files_ = std::move(files);
  index->key_fields_ = std::move(key_fields);
  std::vector<size_t> first_unit(readers.size());
  int64_t rows = 0;
  for (size_t f = 0; f < readers.size(); ++f) {
    first_unit[f] = index->units_.size();
    for (int u = 0; u < readers[f]->num_units(); ++u) {
      index->units_.push_back(Unit{static_cast<int>(f), u, rows, readers[f]->unit_rows(u)});
      rows += readers[f]->unit_rows(u);
    }
  }
  if (rows > kMaxRows) return arrow::Status::NotImplemented("too many target rows for an index");

  // Presize every shard for its expected share plus 6 standard deviations.
  const int64_t per = rows / buckets + 1;
  const int64_t want = per + static_cast<int64_t>(6.0 * std::sqrt(static_cast<double>(per))) + 64;
  uint64_t capacity = 16;
  while (static_cast<double>(capacity) * 0.75 < static_cast<double>(want)) capacity <<= 1;
  for (int64_t b = 0; b < buckets; ++b) {
    auto shard = std::make_unique<Shard>();
    shard->slots = ZeroedArray<uint64_t>(capacity);
    shard->mask = capacity - 1;
    shard->limit = static_cast<int64_t>(static_cast<double>(capacity) * tuning.max_load);
    index->shard_ptrs_.push_back(shard.get());
    index->shards_.push_back(std::move(shard));
  }

  std::atomic<int64_t> read{0}, nulls{0};
  ARROW_RETURN_NOT_OK(ParallelFor(static_cast<int64_t>(readers.size()), threads, [&](int64_t f) {
    DataFileReader& reader = *readers[f];
    EncodedKeys keys;
    std::vector<std::vector<uint32_t>> by_shard(index->shards_.size());
    for (int u = 0; u < reader.num_units(); ++u) {
      const Unit& unit = index->units_[first_unit[f] + u];
      int64_t done = 0;
      arrow::Status st = reader.ScanStringColumn(
          u, index->key_fields_[f], kKeyScanRows,
          [&](const std::string_view* values, const uint8_t* is_null, int64_t n) {
            ARROW_RETURN_NOT_OK(EncodeViews(spec, values, is_null, n, &keys));
            ARROW_RETURN_NOT_OK(index->InsertChunk(keys, unit.first_row + done, &by_shard));
            done += n;
            nulls += keys.null_count;
            return arrow::Status::OK();
          });
      if (!st.ok()) {
        return st.WithMessage("target file '", reader.file().path, "': ", st.message());
      }
      if (done != unit.rows) {
        return arrow::Status::IOError("target file '", reader.file().path, "' row group ", u,
                                      ": read ", done, " keys, its footer says ", unit.rows);
      }
      read += done;
    }
    readers[f].reset();  // free the footer and buffers early
    return arrow::Status::OK();
  }));
  stats->rows = read.load();
  stats->null_rows = nulls.load();
  index->size_ = stats->rows - stats->null_rows;
  const int64_t max_redecodes = static_cast<int64_t>(index->units_.size()) / 4 + 16;
  TargetKeyIndex* self = index.get();
  index->cache_ = std::make_unique<UnitKeyCache>(
      static_cast<int>(index->units_.size()), tuning.cache_budget_bytes, max_redecodes,
      [self](int unit, UnitKeys* out) { return self->DecodeUnit(unit, out); });
  return index;
}

arrow::Status TargetKeyIndex::InsertChunk(const EncodedKeys& keys, int64_t first_row,
                                          std::vector<std::vector<uint32_t>>* by_shard) {
  const uint32_t b = static_cast<uint32_t>(shards_.size());
  for (auto& rows : *by_shard) rows.clear();
  for (int64_t i = 0; i < keys.length; ++i) {
    if (!keys.is_null[i]) (*by_shard)[ShardOf(keys.hash[i], b)].push_back(static_cast<uint32_t>(i));
  }
  std::vector<size_t> pending;
  for (size_t s = 0; s < by_shard->size(); ++s) {
    if (!(*by_shard)[s].empty()) pending.push_back(s);
  }
  ForEachShardLocked(
      std::move(pending), [&](size_t s) -> std::mutex& { return shards_[s]->mu; },
      [&](size_t s) {
        Shard& shard = *shards_[s];
        const std::vector<uint32_t>& rows = (*by_shard)[s];
        constexpr size_t kAhead = 16;
        for (size_t r = 0; r < rows.size(); ++r) {
          if (r + kAhead < rows.size()) {
            __builtin_prefetch(&shard.slots[keys.hash[rows[r + kAhead]] & shard.mask], 1);
          }
          const uint32_t i = rows[r];
          shard.Insert(keys.hash[i], SlotValue(keys.w0[i], first_row + i));
        }
      });
  return arrow::Status::OK();
}

// The first slot at or after `p` (in probe order) whose tag is `tag`, or -1
// when an empty slot comes first.
int64_t TargetKeyIndex::NextCandidate(const Shard& s, uint64_t p, uint64_t tag) {
  for (;; p = (p + 1) & s.mask) {
    const uint64_t v = s.slots[p];
    if (v == 0) return -1;
    if ((v >> kRowBits) == tag) return static_cast<int64_t>(p);
  }
}

arrow::Status TargetKeyIndex::Lookup(const EncodedKeys& keys, uint8_t* out) const {
  const int64_t n = keys.length;
  std::fill(out, out + n, 0);
  // Pass 1: for each key, the first slot whose tag matches (most keys have at
  // most one, and stopping there leaves the rest of its cluster untouched).
  std::vector<Candidate>& candidates = ScratchCandidates();
  candidates.clear();
  const uint32_t b = static_cast<uint32_t>(shards_.size());
  const Shard* const* shards = shard_ptrs_.data();
  constexpr int64_t kAhead = 32;  // slots prefetched this many keys ahead
  for (int64_t i = 0; i < n + kAhead; ++i) {
    if (i < n) {
      const Shard& s = *shards[ShardOf(keys.hash[i], b)];
      __builtin_prefetch(&s.slots[keys.hash[i] & s.mask]);
    }
    const int64_t k = i - kAhead;
    if (k < 0 || keys.is_null[k]) continue;
    const Shard& s = *shards[ShardOf(keys.hash[k], b)];
    const int64_t slot = NextCandidate(s, keys.hash[k] & s.mask, TagOf(keys.w0[k]));
    if (slot >= 0 || !s.overflow.empty()) {
      candidates.push_back({k, slot, slot >= 0 ? RowOf(s.slots[slot]) : -1});
    }
  }
  // Pass 2: confirm each candidate against the key in the target (row groups
  // in the order the candidates need them; consecutive ones mostly share one).
  // A key that differs moves on to its next candidate, then the overflow.
  std::shared_ptr<const UnitKeys> unit_keys;
  int64_t lo = 0, hi = 0;
  auto matches = [&](int64_t row, int64_t k) -> arrow::Result<bool> {
    if (row < lo || row >= hi) {
      const int u = UnitOf(row);
      ARROW_ASSIGN_OR_RAISE(unit_keys, cache_->Get(u));
      lo = units_[u].first_row;
      hi = lo + units_[u].rows;
    }
    return unit_keys->At(row - lo) == keys.bytes[k];
  };
  for (const Candidate& c : candidates) {
    const Shard& s = *shards[ShardOf(keys.hash[c.key], b)];
    const uint64_t tag = TagOf(keys.w0[c.key]);
    bool found = false;
    if (c.slot >= 0) {
      ARROW_ASSIGN_OR_RAISE(found, matches(c.row, c.key));
    }
    // Rarely (another key with the same tag): the next candidates.
    for (int64_t slot = c.slot; slot >= 0 && !found;) {
      slot = NextCandidate(s, (static_cast<uint64_t>(slot) + 1) & s.mask, tag);
      if (slot >= 0) {
        ARROW_ASSIGN_OR_RAISE(found, matches(RowOf(s.slots[slot]), c.key));
      }
    }
    if (!found && !s.overflow.empty()) {
      auto [begin, end] = s.overflow.equal_range(keys.hash[c.key]);
      for (auto it = begin; it != end && !found; ++it) {
        if ((it->second >> kRowBits) != tag) continue;
        ARROW_ASSIGN_OR_RAISE(found, matches(RowOf(it->second), c.key));
      }
    }
    out[c.key] = found ? 1 : 0;
  }
  return arrow::Status::OK();
}

int TargetKeyIndex::UnitOf(int64_t row) const {
  auto it = std::upper_bound(units_.begin(), units_.end(), row,
                             [](int64_t r, const Unit& u) { return r < u.first_row; });
  return static_cast<int>(it - units_.begin()) - 1;
}

arrow::Status TargetKeyIndex::DecodeUnit(int unit, UnitKeys* out) const {
  const Unit& u = units_[unit];
  const DataFile& file = files_[u.file];
  auto changed = [&](const std::string& what) {
    return arrow::Status::IOError("target file '", file.path, "' changed while the keyed write ran (",
                                  what, "); rerun the write");
  };
  ARROW_ASSIGN_OR_RAISE(auto reader, DataFileReader::Open(fs_, file));
  if (u.row_group >= reader->num_units() || reader->unit_rows(u.row_group) != u.rows) {
    return changed("row group " + std::to_string(u.row_group) + " is not as it was");
  }
  out->offsets.reserve(static_cast<size_t>(u.rows) + 1);
  ARROW_RETURN_NOT_OK(reader->ScanStringColumn(
      u.row_group, key_fields_[u.file], kKeyScanRows,
      [&](const std::string_view* values, const uint8_t* is_null, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          if (!is_null[i]) out->bytes.insert(out->bytes.end(), values[i].begin(), values[i].end());
          out->offsets.push_back(static_cast<int64_t>(out->bytes.size()));
        }
        return arrow::Status::OK();
      }));
  if (out->rows() != u.rows) return changed("row count");
  return arrow::Status::OK();
}

int64_t TargetKeyIndex::MemoryBytes() const {
  int64_t n = 0;
  for (const auto& s : shards_) {
    n += static_cast<int64_t>(s->slots.size() * sizeof(uint64_t));
    n += static_cast<int64_t>(s->overflow.size()) * 48;  // node + bucket, roughly
  }
  return n + cache_->stats().peak_bytes;
}

}  // namespace thund::engine::keyed
