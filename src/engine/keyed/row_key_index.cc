#include "engine/keyed/row_key_index.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <new>

#include "engine/keyed/key_hash.h"
#include "engine/keyed/ordered_parallel.h"
#include "engine/keyed/shard_locking.h"
#include "engine/keyed/slot_groups.h"

namespace thund::engine::keyed {
namespace {

constexpr int kRowBits = 40;
constexpr uint64_t kRowMask = (uint64_t{1} << kRowBits) - 1;
constexpr int64_t kPrefetchAhead = 64;                       // keys whose home slots are in flight
constexpr int64_t kHugePageTableBytes = int64_t{512} << 20;  // see AddTable

int64_t RowOf(uint64_t slot) { return static_cast<int64_t>(slot & kRowMask) - 1; }

// The index's groups (slot_groups.h): tags sit above the row.
inline GroupBits Scan(const uint64_t* group, uint64_t tag) {
  return ScanGroup<kRowBits>(group, tag);
}
template <typename ShardT>
inline int64_t NextCandidate(const ShardT& s, uint64_t hash, uint64_t tag, int64_t after) {
  return NextTagged<kRowBits>(s.slots.data(), s.gmask, hash & s.gmask, tag, after);
}

// The Bloom filter's bit in word `i` of a key's block, from the key's
// second hash word (odd multipliers spread it over the top 6 bits).
inline uint64_t FilterBit(uint64_t w0, int i) {
  static constexpr uint64_t kSalts[8] = {0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9, 0x94d049bb133111eb,
                                         0xc2b2ae3d27d4eb4f, 0x165667b19e3779f9, 0xd6e8feb86659fd93,
                                         0xa0761d6478bd642f, 0xe7037ed1a0b428db};
  return uint64_t{1} << ((w0 * kSalts[i]) >> 58);
}

}  // namespace

// One shard of a table: probed by groups of slots (slot_groups.h), never
// rehashed. Entries past `limit` (a shard far above its expected share, which
// presizing makes vanishingly rare) go to `overflow`.
struct RowKeyIndex::Shard {
  std::mutex mu;  // held while Build adds rows
  ZeroedArray<uint64_t> slots;
  uint64_t gmask = 0;  // groups - 1
  int64_t size = 0;
  int64_t limit = 0;
  std::unordered_multimap<uint64_t, uint64_t> overflow;  // hash -> slot value
  // A blocked Bloom filter of every key added (tables Build loads; else
  // empty): a key sets one bit in each of the 8 words of its 64-byte block.
  ZeroedArray<uint64_t> filter;
  uint64_t filter_blocks = 0;

  // The filter block of a key with this hash.
  size_t BlockAt(uint64_t hash) const {
    return (((hash & 0xffffffffu) * filter_blocks) >> 32) * kGroupSlots;
  }
  const uint64_t* Block(uint64_t hash) const { return &filter[BlockAt(hash)]; }
  void Mark(uint64_t hash, uint64_t w0) {
    uint64_t* block = &filter[BlockAt(hash)];
    for (int i = 0; i < 8; ++i) block[i] |= FilterBit(w0, i);
  }
  bool MayHold(uint64_t hash, uint64_t w0) const {
    const uint64_t* block = Block(hash);
    bool all = true;
    for (int i = 0; i < 8; ++i) all &= (block[i] & FilterBit(w0, i)) != 0;
    return all;
  }

  // The group of slots where a key with this hash is looked for first.
  uint64_t* Home(uint64_t hash) { return &slots[(hash & gmask) * kGroupSlots]; }
  const uint64_t* Home(uint64_t hash) const { return &slots[(hash & gmask) * kGroupSlots]; }

  void Add(uint64_t hash, uint64_t value) {
    if (size >= limit) {
      overflow.emplace(hash, value);
      return;
    }
    for (uint64_t g = hash & gmask;; g = (g + 1) & gmask) {
      uint64_t* group = &slots[g * kGroupSlots];
      const unsigned empty = Scan(group, 0).empty;
      if (empty != 0) {
        group[FirstSlot(empty)] = value;
        ++size;
        return;
      }
    }
  }
};

// Shards sized for a number of keys. When the last table fills up, inserts
// go to a new, larger one; lookups probe them all.
struct RowKeyIndex::Table {
  std::vector<std::unique_ptr<Shard>> shards;
  std::vector<const Shard*> ptrs;  // shards, for the lookup loops
  int64_t keys = 0;                // sized for this many
  int64_t size = 0;

  bool HasOverflow() const {
    return std::any_of(ptrs.begin(), ptrs.end(),
                       [](const Shard* s) { return !s->overflow.empty(); });
  }
};

RowKeyIndex::~RowKeyIndex() = default;

// The tag: the top bits of the key's second hash word (EncodedKeys::w0),
// independent of the bits that pick the shard and the slot (EncodedKeys::hash).
uint64_t RowKeyIndex::TagOf(uint64_t w0) const { return (w0 >> kRowBits) & tag_mask_; }
uint64_t RowKeyIndex::SlotValue(uint64_t w0, int64_t row) const {
  return (TagOf(w0) << kRowBits) | static_cast<uint64_t>(row + 1);
}
const RowKeyIndex::Shard& RowKeyIndex::ShardFor(const Table& t, uint64_t hash) const {
  return *t.ptrs[ShardOf(hash, static_cast<uint32_t>(t.ptrs.size()))];
}

// Starts loading the slot where a key with this hash is looked for first, in
// every table.
void RowKeyIndex::PrefetchHome(uint64_t hash) const {
  for (const auto& t : tables_) {
    const Shard& s = ShardFor(*t, hash);
    __builtin_prefetch(s.Home(hash));
  }
}

arrow::Status RowKeyIndex::AddTable(int64_t keys, int64_t threads, bool filter) {
  // Every shard presized for its expected share plus 6 standard deviations.
  const int64_t per = keys / buckets_ + 1;
  const int64_t want = per + static_cast<int64_t>(6.0 * std::sqrt(static_cast<double>(per))) + 64;
  uint64_t capacity = 2 * kGroupSlots;
  while (static_cast<double>(capacity) * tuning_.sized_load < static_cast<double>(want)) {
    capacity <<= 1;
  }
  auto table = std::make_unique<Table>();
  table->keys = keys;
  table->shards.resize(static_cast<size_t>(buckets_));
  // A shard's memory is faulted in when it is allocated (zeroed_array.h),
  // which on the benchmark VM costs 0.3 to 1.4 s per GiB: the threads share
  // that out.
  const int64_t bytes = static_cast<int64_t>(capacity * sizeof(uint64_t)) * buckets_;
  // Huge pages pay off only for big tables. Measured on the benchmark VM,
  // where huge pages come from memory the host has not backed yet (zeroing
  // them costs ~1.4 s per GiB, against ~0.35 s for small pages): a 256 MiB
  // table (18.9M keys) saved ~0.35 s of probe and insert time and lost as
  // much to zeroing; with 2 GiB of tables (189M keys, half of them new) a run
  // took 22.5 s instead of 25-27 s, 11-15 s less user time for ~4 s more
  // system time.
  const PageSize pages = tuning_.huge_pages && bytes >= kHugePageTableBytes ? PageSize::kHugeIfFree
                                                                             : PageSize::kSmall;
  ARROW_RETURN_NOT_OK(ParallelFor("allocating the row key index", buckets_, threads, [&](int64_t b) -> arrow::Status {
    auto shard = std::make_unique<Shard>();
    try {
      shard->slots = ZeroedArray<uint64_t>(capacity, pages);
    } catch (const std::bad_alloc&) {
      return arrow::Status::OutOfMemory("row key index: no memory for a table of ", bytes,
                                        " bytes (", keys, " keys)");
    }
    if (filter && tuning_.filter_bits_per_key > 0) {
      shard->filter_blocks =
          std::max<uint64_t>(1, static_cast<uint64_t>(want) *
                                    static_cast<uint64_t>(tuning_.filter_bits_per_key) / 512);
      try {
        shard->filter = ZeroedArray<uint64_t>(shard->filter_blocks * kGroupSlots, pages);
      } catch (const std::bad_alloc&) {
        return arrow::Status::OutOfMemory("row key index: no memory for a filter of ",
                                          shard->filter_blocks * 64, " bytes");
      }
    }
    shard->gmask = capacity / kGroupSlots - 1;
    shard->limit = static_cast<int64_t>(static_cast<double>(capacity) * tuning_.max_load);
    table->shards[static_cast<size_t>(b)] = std::move(shard);
    return arrow::Status::OK();
  }));
  for (const auto& shard : table->shards) table->ptrs.push_back(shard.get());
  tables_.push_back(std::move(table));
  return arrow::Status::OK();
}

arrow::Status RowKeyIndex::Reserve(int64_t threads) {
  if (!tables_.empty() || expected_keys_ == 0) return arrow::Status::OK();
  return AddTable(expected_keys_, threads);
}

arrow::Result<std::unique_ptr<RowKeyIndex>> RowKeyIndex::Make(
    std::shared_ptr<arrow::fs::FileSystem> fs, std::vector<DataFile> files,
    std::vector<int> key_fields, std::vector<Unit> units, int64_t buckets, int64_t expected_keys,
    const Tuning& tuning) {
  if (!units.empty() && units.back().first_row + units.back().rows > kMaxRows) {
    return arrow::Status::Invalid("more rows than a row index can number (", kMaxRows, ")");
  }
  std::unique_ptr<RowKeyIndex> index(new RowKeyIndex());
  index->fs_ = std::move(fs);
  index->files_ = std::move(files);
  index->key_fields_ = std::move(key_fields);
  index->units_ = std::move(units);
  index->tuning_ = tuning;
  index->buckets_ = std::max<int64_t>(1, buckets);
  index->tag_mask_ = (uint64_t{1} << std::clamp(tuning.tag_bits, 1, 64 - kRowBits)) - 1;
  index->expected_keys_ = std::max<int64_t>(expected_keys, 0);  // the first table: when needed
  const int64_t max_redecodes = static_cast<int64_t>(index->units_.size()) / 4 + 16;
  RowKeyIndex* self = index.get();
  index->cache_ = std::make_unique<UnitKeyCache>(
      static_cast<int>(index->units_.size()), tuning.cache_budget_bytes, max_redecodes,
      [self](int unit, UnitKeys* out) { return self->DecodeUnit(unit, out); });
  return index;
}

arrow::Result<std::unique_ptr<RowKeyIndex>> RowKeyIndex::Build(
    std::shared_ptr<arrow::fs::FileSystem> fs, const KeySpec& spec, std::vector<DataFile> files,
    std::vector<int> key_fields, std::vector<std::unique_ptr<DataFileReader>> readers,
    int64_t buckets, int64_t threads, BuildStats* stats, const Tuning& tuning,
    const RowKeyIndexRounds* rounds) {
  std::vector<Unit> units;
  std::vector<size_t> first_unit(readers.size());
  int64_t rows = 0;
  for (size_t f = 0; f < readers.size(); ++f) {
    first_unit[f] = units.size();
    for (int u = 0; u < readers[f]->num_units(); ++u) {
      units.push_back(Unit{static_cast<int>(f), u, rows, readers[f]->unit_rows(u)});
      rows += readers[f]->unit_rows(u);
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto index, Make(std::move(fs), std::move(files), std::move(key_fields),
                                         std::move(units), buckets, rows, tuning));
  if (rounds != nullptr && rounds->before_rounds != nullptr) {
    ARROW_ASSIGN_OR_RAISE(bool needed, rounds->before_rounds(index->files_, readers));
    if (!needed) {
      stats->skipped = true;
      return index;
    }
  }
  ARROW_RETURN_NOT_OK(index->AddTable(rows, threads, /*filter=*/true));
  std::atomic<int64_t> read{0}, nulls{0}, kept_bytes{0};
  // Loads row groups [begin, end) of file f, with `reader` (opened on that
  // file, used by this thread alone); with `keep`, their keys also go into
  // the cache.
  auto load = [&](int64_t f, int begin, int end, DataFileReader& reader,
                  bool keep) -> arrow::Status {
    EncodedKeys keys;
    std::vector<std::vector<uint32_t>> by_shard(static_cast<size_t>(index->buckets_));
    for (int u = begin; u < end; ++u) {
      const int unit_number = static_cast<int>(first_unit[f]) + u;
      const Unit& unit = index->units_[unit_number];
      std::shared_ptr<UnitKeys> unit_keys;
      if (keep) {
        unit_keys = index->cache_->Buffer();
        unit_keys->begins.reserve(static_cast<size_t>(unit.rows));
        unit_keys->lengths.reserve(static_cast<size_t>(unit.rows));
      }
      int64_t done = 0;
      arrow::Status st = reader.ScanStringColumn(
          u, index->key_fields_[f], kKeyScanRows,
          [&](const std::string_view* values, const uint8_t* is_null, int64_t n) {
            ARROW_RETURN_NOT_OK(EncodeViews(spec, values, is_null, n, &keys));
            index->AddAll(keys, unit.first_row + done, &by_shard);
            if (unit_keys) unit_keys->Append(values, is_null, n);
            done += n;
            nulls += keys.null_count;
            return arrow::Status::OK();
          });
      ARROW_RETURN_NOT_OK(st);  // names the file and row group
      if (done != unit.rows) {
        return arrow::Status::IOError("file '", reader.file().path, "' row group ", u, ": read ",
                                      done, " keys, its footer says ", unit.rows);
      }
      read += done;
      if (unit_keys) {
        kept_bytes += unit_keys->MemoryBytes();
        index->cache_->Put(unit_number, std::move(unit_keys));
      }
    }
    return arrow::Status::OK();
  };
  // A piece of work: row groups [begin, end) of a file.
  struct Piece {
    int64_t file;
    int begin, end;
  };
  const int64_t n_units = static_cast<int64_t>(index->units_.size());
  bool keep = rounds != nullptr && rounds->after_round != nullptr;
  for (int64_t next = 0; next < n_units;) {
    int64_t end = n_units;
    if (keep) {  // a round: about round_rows rows (whole row groups)
      int64_t round_rows = 0;
      for (end = next; end < n_units && (end == next || round_rows < rounds->round_rows); ++end) {
        round_rows += index->units_[end].rows;
      }
    }
    // The round's row groups by file, halved while there are fewer pieces
    // than threads (a file's row groups are read by one thread at a time).
    std::vector<Piece> pieces;
    for (int64_t u = next; u < end; ++u) {
      const Unit& unit = index->units_[u];
      if (pieces.empty() || pieces.back().file != unit.file) {
        pieces.push_back(Piece{unit.file, unit.row_group, unit.row_group});
      }
      pieces.back().end = unit.row_group + 1;
    }
    while (static_cast<int64_t>(pieces.size()) < threads) {
      auto widest = std::max_element(
          pieces.begin(), pieces.end(),
          [](const Piece& a, const Piece& b) { return a.end - a.begin < b.end - b.begin; });
      if (widest == pieces.end() || widest->end - widest->begin < 2) break;
      const Piece second{widest->file, widest->begin + (widest->end - widest->begin) / 2,
                         widest->end};
      widest->end = second.begin;
      pieces.insert(widest + 1, second);
    }
    kept_bytes = 0;
    const int64_t end_rows = end < n_units ? index->units_[end].first_row : rows;
    const bool keep_keys = keep && (rounds->keep_round == nullptr || rounds->keep_round(end_rows));
    ARROW_RETURN_NOT_OK(ParallelFor("loading the target's keys into the row key index", static_cast<int64_t>(pieces.size()), threads, [&](int64_t i) {
      const Piece& piece = pieces[static_cast<size_t>(i)];
      const bool whole = piece.begin == 0 && piece.end == readers[piece.file]->num_units();
      if (whole) {  // the reader opened for it, released once done
        ARROW_RETURN_NOT_OK(
            load(piece.file, piece.begin, piece.end, *readers[piece.file], keep_keys));
        readers[piece.file].reset();
        return arrow::Status::OK();
      }
      // Part of a file: a reader of its own (readers are one per thread).
      ARROW_ASSIGN_OR_RAISE(auto reader,
                            DataFileReader::Open(index->fs_, index->files_[piece.file]));
      return load(piece.file, piece.begin, piece.end, *reader, keep_keys);
    }));
    index->size_ = read.load() - nulls.load();
    index->tables_.back()->size = index->size_;
    index->loaded_rows_ = end_rows;
    next = end;
    if (!keep) continue;
    index->cache_->Trim(kept_bytes.load());  // this round's keys stay
    ARROW_ASSIGN_OR_RAISE(keep, rounds->after_round(*index));
    if (!keep || next == n_units) index->cache_->Trim(0);
  }
  stats->rows = read.load();
  stats->null_rows = nulls.load();
  return index;
}

void RowKeyIndex::AddAll(const EncodedKeys& keys, int64_t first_row,
                         std::vector<std::vector<uint32_t>>* by_shard) {
  Table& table = *tables_.back();
  const uint32_t b = static_cast<uint32_t>(table.shards.size());
  for (auto& rows : *by_shard) rows.clear();
  for (int64_t i = 0; i < keys.length; ++i) {
    if (!keys.is_null[i]) (*by_shard)[ShardOf(keys.hash[i], b)].push_back(static_cast<uint32_t>(i));
  }
  std::vector<size_t> pending;
  for (size_t s = 0; s < by_shard->size(); ++s) {
    if (!(*by_shard)[s].empty()) pending.push_back(s);
  }
  ForEachShardLocked(
      std::move(pending), [&](size_t s) -> std::mutex& { return table.shards[s]->mu; },
      [&](size_t s) { AddRows(table.shards[s].get(), (*by_shard)[s], keys, first_row); });
}

void RowKeyIndex::AddRows(Shard* shard, const std::vector<uint32_t>& rows, const EncodedKeys& keys,
                          int64_t first_row) {
  constexpr size_t kAhead = 32;
  const bool filter = shard->filter_blocks > 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (r + kAhead < rows.size()) {
      const uint64_t ahead = keys.hash[rows[r + kAhead]];
      __builtin_prefetch(shard->Home(ahead), 1);
      if (filter) __builtin_prefetch(shard->Block(ahead), 1);
    }
    const uint32_t i = rows[r];
    shard->Add(keys.hash[i], SlotValue(keys.w0[i], first_row + i));
    if (filter) shard->Mark(keys.hash[i], keys.w0[i]);
  }
}

arrow::Result<bool> RowKeyIndex::Matches(int64_t row, const EncodedKeys& keys, int64_t k,
                                         const Batch& batch,
                                         std::shared_ptr<const UnitKeys>* unit_keys, int64_t* lo,
                                         int64_t* hi) const {
  if (batch.keys != nullptr) {  // a row added earlier in this batch: its key is at hand
    int64_t j = -1;
    if (batch.rows == nullptr) {
      if (row >= batch.first_row && row < batch.first_row + batch.added) j = row - batch.first_row;
    } else {
      const int64_t* end = batch.rows + batch.added;
      const int64_t* at = std::lower_bound(batch.rows, end, row);
      if (at != end && *at == row) j = at - batch.rows;
    }
    if (j >= 0) return batch.keys->bytes[j] == keys.bytes[k];
  }
  if (row < *lo || row >= *hi) {
    const int u = UnitOf(row);
    ARROW_ASSIGN_OR_RAISE(*unit_keys, cache_->Get(u));
    *lo = units_[u].first_row;
    *hi = *lo + units_[u].rows;
  }
  return (*unit_keys)->At(row - *lo) == keys.bytes[k];
}

arrow::Result<bool> RowKeyIndex::AnyMatch(const EncodedKeys& keys, int64_t k, const Candidate* skip,
                                          const Batch& batch,
                                          std::shared_ptr<const UnitKeys>* unit_keys, int64_t* lo,
                                          int64_t* hi, int64_t* row) const {
  const uint64_t hash = keys.hash[k], tag = TagOf(keys.w0[k]);
  for (size_t t = 0; t < tables_.size(); ++t) {
    const Shard& s = ShardFor(*tables_[t], hash);
    for (int64_t slot = NextCandidate(s, hash, tag, -1); slot >= 0;
         slot = NextCandidate(s, hash, tag, slot)) {
      if (skip != nullptr && skip->table == static_cast<int>(t) && skip->slot == slot) continue;
      ARROW_ASSIGN_OR_RAISE(bool same,
                            Matches(RowOf(s.slots[slot]), keys, k, batch, unit_keys, lo, hi));
      if (same) {
        if (row != nullptr) *row = RowOf(s.slots[slot]);
        return true;
      }
    }
    if (s.overflow.empty()) continue;
    auto [begin, end] = s.overflow.equal_range(hash);
    for (auto it = begin; it != end; ++it) {
      if ((it->second >> kRowBits) != tag) continue;
      ARROW_ASSIGN_OR_RAISE(bool same,
                            Matches(RowOf(it->second), keys, k, batch, unit_keys, lo, hi));
      if (same) {
        if (row != nullptr) *row = RowOf(it->second);
        return true;
      }
    }
  }
  return false;
}

// The common case of pass 1 (one table, nothing overflowed): per key one scan
// of its home group, its outcome recorded by moving the ends of two lists
// rather than by branching on the slots. That decides most keys; the few
// whose home group is full and holds no candidate are scanned on afterwards.
int64_t RowKeyIndex::MayHold(const Table& table, const EncodedKeys& keys,
                             std::vector<int64_t>* which) const {
  const int64_t n = keys.length;
  which->resize(static_cast<size_t>(n));
  int64_t* out = which->data();
  int64_t count = 0;
  const uint32_t shards = static_cast<uint32_t>(table.ptrs.size());
  if (table.ptrs.empty() || table.ptrs[0]->filter_blocks == 0) {
    for (int64_t k = 0; k < n; ++k) {
      out[count] = k;
      count += keys.is_null[k] == 0;
    }
    return count;
  }
  constexpr int64_t kAhead = 32;
  int64_t filtered = 0;  // keys looked up (not NULL); less `count`: answered by the filter
  for (int64_t i = 0; i < n + kAhead; ++i) {
    if (i < n) __builtin_prefetch(table.ptrs[ShardOf(keys.hash[i], shards)]->Block(keys.hash[i]));
    const int64_t k = i - kAhead;
    if (k < 0) continue;
    const Shard& s = *table.ptrs[ShardOf(keys.hash[k], shards)];
    const int64_t live = keys.is_null[k] == 0;
    out[count] = k;
    count += live & s.MayHold(keys.hash[k], keys.w0[k]);
    filtered += live;
  }
  lookups_filtered_ += filtered - count;
  return count;
}

void RowKeyIndex::FirstCandidates(const Table& table, const EncodedKeys& keys, const int64_t* which,
                                  int64_t n, std::vector<Candidate>* out) const {
  // The shards' slot arrays and masks, copied next to each other: reading
  // them through table.ptrs costs one more dependent load per key (lookups
  // ~3 ns slower per key, measured).
  struct View {
    const uint64_t* slots;
    uint64_t gmask;
    const uint64_t* Home(uint64_t hash) const { return slots + (hash & gmask) * kGroupSlots; }
  };
  thread_local std::vector<View> views;
  thread_local std::vector<int64_t> more;
  views.clear();
  for (const Shard* s : table.ptrs) views.push_back(View{s->slots.data(), s->gmask});
  const uint32_t shards = static_cast<uint32_t>(views.size());
  out->resize(static_cast<size_t>(n));
  more.resize(static_cast<size_t>(n));
  Candidate* found = out->data();
  int64_t* rest = more.data();
  int64_t nfound = 0, nrest = 0;
  for (int64_t i = 0; i < n + kPrefetchAhead; ++i) {
    if (i < n) {
      const uint64_t hash = keys.hash[which[i]];
      __builtin_prefetch(views[ShardOf(hash, shards)].Home(hash));
    }
    if (i < kPrefetchAhead) continue;
    const int64_t k = which[i - kPrefetchAhead];
    const View& v = views[ShardOf(keys.hash[k], shards)];
    const uint64_t* group = v.Home(keys.hash[k]);
    const GroupBits bits = Scan(group, TagOf(keys.w0[k]));
    const unsigned j = FirstSlot(bits.tags) & (kGroupSlots - 1);  // slot 0 when none
    const int64_t slot = (group - v.slots) + j;
    // A full home group without a candidate: the key's entries go on in the
    // next group, scanned after this loop. Start loading that now, while the
    // home's page is at hand (else the prefetch is of the home, a no-op): at
    // 189M keys ~15% of lookups take this path, and it cost them ~20% less.
    const uint64_t next = ((group - v.slots) / kGroupSlots + 1) & v.gmask;
    __builtin_prefetch(bits.empty == 0 && bits.tags == 0 ? v.slots + next * kGroupSlots : group);
    found[nfound] = Candidate{k, 0, slot, RowOf(group[j])};
    nfound += bits.tags != 0;  // (`which` holds no NULL key)
    rest[nrest] = k;
    nrest += (bits.tags == 0) & (bits.empty == 0);
  }
  out->resize(static_cast<size_t>(nfound));
  if (nrest > 0) lookups_past_home_ += nrest;
  for (int64_t r = 0; r < nrest; ++r) {
    const int64_t k = rest[r];
    const Shard& s = ShardFor(table, keys.hash[k]);
    const int64_t slot = NextCandidate(s, keys.hash[k], TagOf(keys.w0[k]), -1);
    if (slot >= 0) out->push_back(Candidate{k, 0, slot, RowOf(s.slots[slot])});
  }
}

arrow::Status RowKeyIndex::LookupRows(const EncodedKeys& keys, uint8_t* out, int64_t* rows) const {
  const int64_t n = keys.length;
  std::fill(out, out + n, 0);
  if (rows != nullptr) std::fill(rows, rows + n, -1);
  if (size_ == 0) return arrow::Status::OK();
  // Pass 1, pipelined: each key's first slot with a matching tag (most keys
  // have at most one; stopping there leaves the rest of its groups alone).
  thread_local std::vector<Candidate> candidates;
  thread_local std::vector<int64_t> which;
  candidates.clear();
  if (tables_.size() == 1 && !tables_[0]->HasOverflow()) {
    const int64_t count = MayHold(*tables_[0], keys, &which);
    FirstCandidates(*tables_[0], keys, which.data(), count, &candidates);
  } else {
    for (int64_t i = 0; i < n + kPrefetchAhead; ++i) {
      if (i < n) PrefetchHome(keys.hash[i]);
      const int64_t k = i - kPrefetchAhead;
      if (k < 0 || keys.is_null[k]) continue;
      const uint64_t tag = TagOf(keys.w0[k]);
      Candidate c{k, -1, -1, -1};
      bool overflow = false;
      for (size_t t = 0; t < tables_.size() && c.table < 0; ++t) {
        const Shard& s = ShardFor(*tables_[t], keys.hash[k]);
        const int64_t slot = NextCandidate(s, keys.hash[k], tag, -1);
        if (slot >= 0) c = Candidate{k, static_cast<int>(t), slot, RowOf(s.slots[slot])};
        overflow = overflow || !s.overflow.empty();
      }
      if (c.table >= 0 || overflow) candidates.push_back(c);
    }
  }
  // Pass 2: confirm against the keys themselves (row groups in the order the
  // candidates need them; consecutive candidates mostly share one).
  std::shared_ptr<const UnitKeys> unit_keys;
  int64_t lo = 0, hi = 0;
  const Batch none;
  for (const Candidate& c : candidates) {
    bool found = false;
    int64_t row = c.row;
    if (c.table >= 0) {
      ARROW_ASSIGN_OR_RAISE(found, Matches(c.row, keys, c.key, none, &unit_keys, &lo, &hi));
    }
    if (!found) {  // rarely: another key with the same tag, or the overflow
      ARROW_ASSIGN_OR_RAISE(found, AnyMatch(keys, c.key, c.table >= 0 ? &c : nullptr, none,
                                            &unit_keys, &lo, &hi, &row));
    }
    out[c.key] = found ? 1 : 0;
    if (found && rows != nullptr) rows[c.key] = row;
  }
  return arrow::Status::OK();
}

arrow::Status RowKeyIndex::InsertIfAbsent(const EncodedKeys& keys, int64_t first_row,
                                          const uint8_t* mask, uint8_t* first) {
  return InsertIfAbsentImpl(keys, first_row, nullptr, mask, first);
}

arrow::Status RowKeyIndex::InsertIfAbsent(const EncodedKeys& keys, const int64_t* rows,
                                          const uint8_t* mask, uint8_t* first) {
  return InsertIfAbsentImpl(keys, 0, rows, mask, first);
}

arrow::Status RowKeyIndex::InsertIfAbsentImpl(const EncodedKeys& keys, int64_t first_row,
                                              const int64_t* rows, const uint8_t* mask,
                                              uint8_t* first) {
  const int64_t n = keys.length;
  std::fill(first, first + n, 0);
  int64_t adding = 0;
  for (int64_t i = 0; i < n; ++i) adding += !keys.is_null[i] && (mask == nullptr || mask[i]);
  if (tables_.empty()) {
    ARROW_RETURN_NOT_OK(AddTable(std::max(expected_keys_, adding)));
  } else if (tables_.back()->size + adding > tables_.back()->keys) {
    // A new table, large enough that tables stay few (each is probed).
    ARROW_RETURN_NOT_OK(AddTable(std::max({4 * size_, 2 * adding, int64_t{1} << 16})));
  }
  Table* last = tables_.back().get();
  Batch batch{&keys, rows, first_row, 0};
  std::shared_ptr<const UnitKeys> unit_keys;
  int64_t lo = 0, hi = 0;
  for (int64_t i = 0; i < n + kPrefetchAhead; ++i) {
    if (i < n) PrefetchHome(keys.hash[i]);
    const int64_t k = i - kPrefetchAhead;
    if (k < 0) continue;
    batch.added = k;  // rows of this batch before k may be in the index already
    if (keys.is_null[k] || (mask != nullptr && !mask[k])) continue;
    const uint64_t hash = keys.hash[k];
    const int64_t row = rows != nullptr ? rows[k] : first_row + k;
    Shard& s = *last->shards[ShardOf(hash, static_cast<uint32_t>(last->shards.size()))];
    if (tables_.size() == 1 && s.overflow.empty() && s.size < s.limit) {
      // One table, no overflow (the usual case): one scan of the key's groups
      // both confirms candidates and finds the empty slot to fill.
      const uint64_t tag = TagOf(keys.w0[k]);
      bool present = false;
      uint64_t* group = nullptr;
      GroupBits bits;
      for (uint64_t g = hash & s.gmask; !present; g = (g + 1) & s.gmask) {
        group = &s.slots[g * kGroupSlots];
        bits = Scan(group, tag);
        for (unsigned m = bits.tags; m != 0 && !present; m &= m - 1) {
          ARROW_ASSIGN_OR_RAISE(
              present, Matches(RowOf(group[FirstSlot(m)]), keys, k, batch, &unit_keys, &lo, &hi));
        }
        if (bits.empty != 0) break;
      }
      if (present) continue;
      group[FirstSlot(bits.empty)] = SlotValue(keys.w0[k], row);
      ++s.size;
    } else {
      ARROW_ASSIGN_OR_RAISE(bool present, AnyMatch(keys, k, nullptr, batch, &unit_keys, &lo, &hi));
      if (present) continue;
      s.Add(hash, SlotValue(keys.w0[k], row));
    }
    if (s.filter_blocks > 0) s.Mark(hash, keys.w0[k]);
    ++last->size;
    ++size_;
    first[k] = 1;
  }
  return arrow::Status::OK();
}

arrow::Result<bool> RowKeyIndex::RowHolds(int64_t row, std::string_view key, RowCursor* at) const {
  if (row < 0 || row >= loaded_rows_) return false;
  if (at->keys == nullptr || row < at->lo || row >= at->hi) {
    const int u = UnitOf(row);
    ARROW_ASSIGN_OR_RAISE(at->keys, cache_->Get(u));
    at->lo = units_[u].first_row;
    at->hi = at->lo + units_[u].rows;
  }
  const int64_t i = row - at->lo;
  return !at->keys->IsNull(i) && at->keys->At(i) == key;
}

int RowKeyIndex::UnitOf(int64_t row) const {
  auto it = std::upper_bound(units_.begin(), units_.end(), row,
                             [](int64_t r, const Unit& u) { return r < u.first_row; });
  return static_cast<int>(it - units_.begin()) - 1;
}

arrow::Status RowKeyIndex::DecodeUnit(int unit, UnitKeys* out) const {
  const Unit& u = units_[unit];
  const DataFile& file = files_[u.file];
  auto changed = [&](const std::string& what) {
    return arrow::Status::IOError("file '", file.path, "' changed while the keyed write ran (",
                                  what, "); rerun the write");
  };
  ARROW_ASSIGN_OR_RAISE(auto reader, DataFileReader::Open(fs_, file));
  if (u.row_group >= reader->num_units() || reader->unit_rows(u.row_group) != u.rows) {
    return changed("row group " + std::to_string(u.row_group) + " is not as it was");
  }
  out->begins.reserve(static_cast<size_t>(u.rows));
  out->lengths.reserve(static_cast<size_t>(u.rows));
  ARROW_RETURN_NOT_OK(reader->ScanStringColumn(
      u.row_group, key_fields_[u.file], kKeyScanRows,
      [&](const std::string_view* values, const uint8_t* is_null, int64_t n) {
        out->Append(values, is_null, n);
        return arrow::Status::OK();
      }));
  if (out->rows() != u.rows) return changed("row count");
  return arrow::Status::OK();
}

int64_t RowKeyIndex::MemoryBytes() const {
  int64_t n = 0;
  for (const auto& t : tables_) {
    for (const auto& s : t->shards) {
      n += static_cast<int64_t>((s->slots.size() + s->filter.size()) * sizeof(uint64_t));
      n += static_cast<int64_t>(s->overflow.size()) * 48;  // node + bucket, roughly
    }
  }
  return n + cache_->stats().peak_bytes;
}

}  // namespace thund::engine::keyed
