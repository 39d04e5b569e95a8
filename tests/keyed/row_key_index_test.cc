// RowKeyIndex (row numbers in memory, keys confirmed from their
// files) and its UnitKeyCache: lookups must answer exactly what a std::set of
// the target's keys (read by DuckDB, the oracle) answers, also when tags
// collide all the time, when every entry overflows, when the cache holds
// nothing, from several threads, and in any order. A file that changes under
// the index is an error, never a wrong answer.
#include "engine/keyed/row_key_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "engine/keyed/key_encoder.h"
#include "engine/keyed/target_keys.h"
#include "keyed/keyed_test_util.h"

namespace thund::engine::keyed {
namespace {

using testing::Oracle;
using testing::ScratchDir;

KeySpec UrlSpec(KeyMatch match = KeyMatch::kExact) {
  auto spec =
      KeySpec::Make(*arrow::schema({arrow::field("url", arrow::utf8())}), {"url"}, match, "test");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

// Keys to look up: every 3rd target key, keys that are not there (some share
// long prefixes with target keys), NULLs; shuffled unless `in_order`.
std::vector<std::optional<std::string>> Probes(int64_t rows, bool in_order) {
  std::vector<std::optional<std::string>> out;
  for (int64_t i = 0; i < rows; i += 3)
    out.push_back("https://site/" + std::to_string(i % 997) + "/a" + std::to_string(i));
  for (int64_t i = 0; i < rows / 4; ++i) {
    out.push_back("https://site/" + std::to_string(i % 997) + "/a" + std::to_string(i) + "x");
    out.push_back("https://site/none/" + std::to_string(i));
  }
  out.push_back(std::nullopt);
  out.push_back(std::string());
  if (!in_order) std::shuffle(out.begin(), out.end(), std::mt19937(7));
  return out;
}

class RowKeyIndexTest : public ::testing::Test {
 protected:
  static constexpr int64_t kRows = 6000;

  void SetUp() override {
    fs_ = std::make_shared<arrow::fs::LocalFileSystem>();
    std::filesystem::create_directories(dir_ / "t");
    // Three files, several row groups each; every 50th row has a NULL key,
    // every 7th key appears in two files, one file holds the empty string.
    for (int f = 0; f < 3; ++f) {
      const int64_t begin = kRows * f / 3, end = kRows * (f + 1) / 3 + (f < 2 ? 100 : 0);
      oracle_.Exec("COPY (SELECT CASE WHEN i % 50 = 49 THEN NULL WHEN i = " +
                   std::to_string(begin) + " AND " + std::to_string(f) +
                   " = 1 THEN '' ELSE 'https://site/' || (i % 997) || '/a' || i END AS url, i AS "
                   "id FROM range(" +
                   std::to_string(begin) + ", " + std::to_string(end) + ") t(i)) TO '" +
                   dir_ / ("t/part-" + std::to_string(f) + ".parquet") +
                   "' (FORMAT parquet, ROW_GROUP_SIZE 700)");
    }
    expected_ = {};
    auto& s = oracle_.session();
    auto keys = s.Query("SELECT DISTINCT url FROM read_parquet('" + dir_ / "t/*.parquet" +
                        "') WHERE url IS NOT NULL");
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    for (const auto& chunk : (*keys)->column(0)->chunks()) {
      const auto& column = static_cast<const arrow::StringArray&>(*chunk);
      for (int64_t i = 0; i < column.length(); ++i) expected_.insert(column.GetString(i));
    }
    non_null_rows_ =
        oracle_.Int("SELECT count(url) FROM read_parquet('" + dir_ / "t/*.parquet" + "')");
  }

  arrow::Result<std::unique_ptr<RowKeyIndex>> Build(const RowKeyIndex::Tuning& tuning,
                                                    int64_t buckets = 4) {
    ARROW_ASSIGN_OR_RAISE(auto files, ListTargetFiles(*fs_, dir_ / "t"));
    std::vector<std::unique_ptr<DataFileReader>> readers;
    std::vector<int> fields;
    for (const auto& f : files) {
      ARROW_ASSIGN_OR_RAISE(auto r, DataFileReader::Open(fs_, f));
      fields.push_back(r->schema()->GetFieldIndex("url"));
      EXPECT_TRUE(r->ScansStrings(fields.back()));
      readers.push_back(std::move(r));
    }
    RowKeyIndex::BuildStats stats;
    ARROW_ASSIGN_OR_RAISE(
        auto index, RowKeyIndex::Build(fs_, UrlSpec(), files, fields, std::move(readers), buckets,
                                       2, &stats, tuning));
    EXPECT_EQ(stats.rows,
              oracle_.Int("SELECT count(*) FROM read_parquet('" + dir_ / "t/*.parquet" + "')"));
    EXPECT_EQ(index->size(), non_null_rows_);
    return index;
  }

  // Builds an index with `tuning` into `*index` and checks shuffled probes
  // against the oracle set.
  void BuildAndExpectExact(const RowKeyIndex::Tuning& tuning, int64_t buckets,
                           std::unique_ptr<RowKeyIndex>* index) {
    KEYED_ASSERT_OK_AND_ASSIGN(*index, Build(tuning, buckets));
    ExpectExact(**index, Probes(kRows, /*in_order=*/false));
  }

  // Looks `probes` up in batches of `batch` and compares with the oracle set.
  void ExpectExact(const RowKeyIndex& index, const std::vector<std::optional<std::string>>& probes,
                   int64_t batch = 512) {
    const KeySpec spec = UrlSpec();
    for (size_t at = 0; at < probes.size(); at += static_cast<size_t>(batch)) {
      const size_t n = std::min(probes.size() - at, static_cast<size_t>(batch));
      std::vector<std::string_view> views(n);
      std::vector<uint8_t> is_null(n);
      for (size_t i = 0; i < n; ++i) {
        is_null[i] = !probes[at + i].has_value();
        if (!is_null[i]) views[i] = *probes[at + i];
      }
      EncodedKeys keys;
      ASSERT_TRUE(
          EncodeViews(spec, views.data(), is_null.data(), static_cast<int64_t>(n), &keys).ok());
      std::vector<uint8_t> out(n, 7);
      auto st = index.Lookup(keys, out.data());
      ASSERT_TRUE(st.ok()) << st.ToString();
      for (size_t i = 0; i < n; ++i) {
        const bool want = probes[at + i] && expected_.count(*probes[at + i]) > 0;
        ASSERT_EQ(out[i], want ? 1 : 0)
            << "key " << (probes[at + i] ? "'" + *probes[at + i] + "'" : "NULL");
      }
    }
  }

  ScratchDir dir_;
  Oracle oracle_;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::set<std::string> expected_;
  int64_t non_null_rows_ = 0;
};

TEST_F(RowKeyIndexTest, LookupsMatchTheOracleInAndOutOfOrder) {
  std::unique_ptr<RowKeyIndex> index;
  KEYED_ASSERT_OK_AND_ASSIGN(index, Build({}));
  ExpectExact(*index, Probes(kRows, /*in_order=*/true));
  ExpectExact(*index, Probes(kRows, /*in_order=*/false));
  EXPECT_GT(index->MemoryBytes(), 0);
}

// The Bloom filter in front of the table answers most keys that are not there
// on its own, and never one that is: with it, without it, and when it is so
// small that it lets most absent keys through, answers stay exact.
TEST_F(RowKeyIndexTest, TheBloomFilterAnswersMostAbsentKeysAloneAndNeverHidesOne) {
  const auto probes = Probes(kRows, /*in_order=*/false);
  int64_t absent = 0;
  for (const auto& p : probes) absent += p.has_value() && expected_.count(*p) == 0;
  ASSERT_GT(absent, 1000);
  for (int bits : {10, 0, 1}) {
    SCOPED_TRACE("bits per key " + std::to_string(bits));
    RowKeyIndex::Tuning tuning;
    tuning.filter_bits_per_key = bits;
    std::unique_ptr<RowKeyIndex> index;
    KEYED_ASSERT_OK_AND_ASSIGN(index, Build(tuning));
    ExpectExact(*index, probes);
    const int64_t filtered = index->lookups_filtered();
    switch (bits) {
      case 10:
        EXPECT_GT(filtered, absent * 9 / 10);
        break;
      case 0:
        EXPECT_EQ(filtered, 0);
        break;
      default:
        EXPECT_LT(filtered, absent / 2);
    }
  }
}

// RowHolds answers from the row's own bytes (never a NULL row, whose bytes are
// empty, for the empty key); LookupRows names a row that holds each key found.
TEST_F(RowKeyIndexTest, RowsHoldExactlyTheirKeysAndLookupsNameSuchARow) {
  RowKeyIndex::Tuning tuning;
  tuning.tag_bits = 1;  // matches mostly confirmed past a colliding slot
  std::unique_ptr<RowKeyIndex> index;
  KEYED_ASSERT_OK_AND_ASSIGN(index, Build(tuning));
  // The rows in index order: files by name, rows in file order.
  auto rows = oracle_.session().Query(
      "SELECT url FROM read_parquet('" + dir_ / "t/*.parquet" +
      "', filename = true, file_row_number = true) ORDER BY filename, file_row_number");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::optional<std::string>> urls;
  for (const auto& chunk : (*rows)->column(0)->chunks()) {
    const auto& column = static_cast<const arrow::StringArray&>(*chunk);
    for (int64_t i = 0; i < column.length(); ++i) {
      urls.push_back(column.IsNull(i) ? std::nullopt
                                      : std::optional<std::string>(column.GetString(i)));
    }
  }
  RowKeyIndex::RowCursor at;
  int64_t nulls = 0;
  for (int64_t r = 0; r < static_cast<int64_t>(urls.size()); ++r) {
    const auto& url = urls[static_cast<size_t>(r)];
    KEYED_ASSERT_OK_AND_ASSIGN(bool empty_holds, index->RowHolds(r, "", &at));
    EXPECT_EQ(empty_holds, url.has_value() && url->empty())
        << "row " << r << " " << url.value_or("NULL");
    if (!url) {
      ++nulls;
      continue;
    }
    KEYED_ASSERT_OK_AND_ASSIGN(bool holds, index->RowHolds(r, *url, &at));
    EXPECT_TRUE(holds) << "row " << r;
    KEYED_ASSERT_OK_AND_ASSIGN(bool other, index->RowHolds(r, *url + "x", &at));
    EXPECT_FALSE(other) << "row " << r;
  }
  EXPECT_GT(nulls, 0);
  KEYED_ASSERT_OK_AND_ASSIGN(
      bool past, index->RowHolds(static_cast<int64_t>(urls.size()), "https://site/0/a0", &at));
  EXPECT_FALSE(past);

  const std::vector<std::optional<std::string>> probes = Probes(kRows, /*in_order=*/false);
  std::vector<std::string_view> views;
  std::vector<uint8_t> is_null;
  for (const auto& p : probes) {
    is_null.push_back(!p.has_value());
    views.push_back(p ? std::string_view(*p) : std::string_view());
  }
  EncodedKeys keys;
  KEYED_ASSERT_OK(EncodeViews(UrlSpec(), views.data(), is_null.data(),
                              static_cast<int64_t>(views.size()), &keys));
  std::vector<uint8_t> found(views.size());
  std::vector<int64_t> where(views.size());
  KEYED_ASSERT_OK(index->LookupRows(keys, found.data(), where.data()));
  for (size_t i = 0; i < views.size(); ++i) {
    const bool want = probes[i] && expected_.count(*probes[i]) > 0;
    ASSERT_EQ(found[i], want ? 1 : 0) << i;
    if (!want) {
      EXPECT_EQ(where[i], -1);
      continue;
    }
    KEYED_ASSERT_OK_AND_ASSIGN(bool holds, index->RowHolds(where[i], views[i], &at));
    EXPECT_TRUE(holds) << "key '" << views[i] << "' said to be at row " << where[i];
  }
}

TEST_F(RowKeyIndexTest, TagCollisionsAreConfirmedAgainstTheKeyNotTrusted) {
  // One tag bit: about half of all entries share a probe's tag, so almost every
  // absent key meets candidates that must be read back and rejected.
  RowKeyIndex::Tuning tuning;
  tuning.tag_bits = 1;
  std::unique_ptr<RowKeyIndex> index;
  BuildAndExpectExact(tuning, /*buckets=*/4, &index);
}

TEST_F(RowKeyIndexTest, OverflowEntriesAreFoundAndConfirmed) {
  RowKeyIndex::Tuning tuning;
  tuning.max_load = 0;  // every entry overflows
  tuning.tag_bits = 2;
  std::unique_ptr<RowKeyIndex> index;
  BuildAndExpectExact(tuning, /*buckets=*/1, &index);
}

// Shards sized for ~95% fill: many home groups are full, so lookups go on to
// the next groups (and wrap around the end of a shard). Exact all the same,
// with real tags and with 1-bit tags (candidates everywhere).
TEST_F(RowKeyIndexTest, FullHomeGroupsAreScannedOnExactly) {
  for (int tag_bits : {24, 1}) {
    SCOPED_TRACE("tag_bits " + std::to_string(tag_bits));
    RowKeyIndex::Tuning tuning;
    tuning.tag_bits = tag_bits;
    tuning.sized_load = 0.95;
    std::unique_ptr<RowKeyIndex> index;
    BuildAndExpectExact(tuning, /*buckets=*/1, &index);
    if (tag_bits == 24 && index != nullptr) {
      EXPECT_GT(index->lookups_past_home(), 0);
    }
  }
}

TEST_F(RowKeyIndexTest, AnEmptyCacheBudgetStaysExactAndStopsEvictingWhenLookupsJumpAround) {
  RowKeyIndex::Tuning tuning;
  tuning.cache_budget_bytes = 1;
  std::unique_ptr<RowKeyIndex> index;
  KEYED_ASSERT_OK_AND_ASSIGN(index, Build(tuning));
  ExpectExact(*index, Probes(kRows, false), /*batch=*/64);
  const UnitKeyCache::Stats stats = index->cache_stats();
  EXPECT_TRUE(stats.keeps_all);
  // Bounded (unit_key_cache.h): each unit once, max_redecodes (units / 4 + 16)
  // + 1 re-decodes, then each unit evicted by then once more.
  const int64_t units =
      oracle_.Int("SELECT count(DISTINCT (file_name, row_group_id)) FROM parquet_metadata('" +
                  dir_ / "t/*.parquet" + "')");
  EXPECT_GT(units, 3);
  EXPECT_LE(stats.decodes, 2 * units + units / 4 + 17);
}

TEST_F(RowKeyIndexTest, ConcurrentLookupsAreExact) {
  RowKeyIndex::Tuning tuning;
  tuning.cache_budget_bytes = 20000;  // a few row groups: eviction while threads read
  tuning.tag_bits = 4;
  std::unique_ptr<RowKeyIndex> index;
  KEYED_ASSERT_OK_AND_ASSIGN(index, Build(tuning));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto probes = Probes(kRows, t % 2 == 0);
      ExpectExact(*index, probes, 100 + 37 * t);
    });
  }
  for (auto& t : threads) t.join();
}

TEST_F(RowKeyIndexTest, AFileThatChangesUnderTheIndexIsAnErrorNotAWrongAnswer) {
  RowKeyIndex::Tuning tuning;
  tuning.cache_budget_bytes = 1;
  std::unique_ptr<RowKeyIndex> index;
  KEYED_ASSERT_OK_AND_ASSIGN(index, Build(tuning));
  oracle_.Exec("COPY (SELECT 'x' || i AS url, i AS id FROM range(10) t(i)) TO '" +
               dir_ / "t/part-0.parquet" + "' (FORMAT parquet)");
  const KeySpec spec = UrlSpec();
  std::string_view key = "https://site/0/a0";  // in part-0 before the rewrite
  uint8_t is_null = 0, out = 0;
  EncodedKeys keys;
  ASSERT_TRUE(EncodeViews(spec, &key, &is_null, 1, &keys).ok());
  auto st = index->Lookup(keys, &out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("changed while the keyed write ran"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("part-0.parquet"), std::string::npos) << st.ToString();
}

TEST_F(RowKeyIndexTest, LoadTargetKeysIndexesOnlyExactSingleStringKeysInParquet) {
  KeyedWriteOptions options;
  options.keys = {"url"};
  options.threads = 2;
  auto loaded = LoadTargetKeys(fs_, dir_ / "t", UrlSpec(), options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->indexed);
  EXPECT_EQ(loaded->keys, non_null_rows_);
  EXPECT_EQ(loaded->null_rows, oracle_.Int("SELECT count(*) FROM read_parquet('" +
                                           dir_ / "t/*.parquet" + "') WHERE url IS NULL"));

  auto hashed = LoadTargetKeys(fs_, dir_ / "t", UrlSpec(KeyMatch::kHash), options);
  ASSERT_TRUE(hashed.ok()) << hashed.status().ToString();
  EXPECT_FALSE(hashed->indexed);  // --key-match hash keeps its 16-byte hash set

  oracle_.Exec("COPY (SELECT * FROM read_parquet('" + dir_ / "t/part-0.parquet" + "')) TO '" +
               dir_ / "t/extra.csv" + "' (FORMAT csv, HEADER)");
  auto mixed = LoadTargetKeys(fs_, dir_ / "t", UrlSpec(), options);
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_FALSE(mixed->indexed);  // a CSV file: keys go into a KeySet
  EXPECT_EQ(mixed->keys, static_cast<int64_t>(expected_.size()));
}

TEST_F(RowKeyIndexTest, ACorruptTargetFileFailsTheLoadNamingIt) {
  const std::string path = dir_ / "t/part-1.parquet";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    const std::string garbage(200, '\xa7');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  KeyedWriteOptions options;
  options.keys = {"url"};
  options.threads = 2;
  auto loaded = LoadTargetKeys(fs_, dir_ / "t", UrlSpec(), options);
  ASSERT_FALSE(loaded.ok());
  const std::string message = loaded.status().message();
  EXPECT_NE(message.find("loading the target's keys"), std::string::npos) << message;
  EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("row group"), std::string::npos) << message;
  EXPECT_NE(message.find("repair that file or move it away"), std::string::npos) << message;
}

// The set of keys a run writes (InsertIfAbsent): rows of the files in order,
// some masked out; first[i] must say exactly whether the key is new to what
// was inserted before, with tags colliding all the time (confirmations read
// earlier row groups back, or the batch itself) and from a small table that
// has to grow.
TEST_F(RowKeyIndexTest, InsertIfAbsentMatchesASetOracle) {
  // Expecting 100 keys makes the index grow into several tables; expecting
  // 100000 keeps one table (the single-scan insert), allocated at the first
  // insert or up front by Reserve (on two threads).
  struct Case {
    int tag_bits;
    int64_t expected;
    bool reserve;
  };
  for (const Case c : {Case{1, 100, false}, Case{24, 100, false}, Case{1, 100000, false},
                       Case{24, 100000, false}, Case{24, 100000, true}, Case{24, 100, true}}) {
    const auto [tag_bits, expected, reserve] = c;
    SCOPED_TRACE("tag_bits " + std::to_string(tag_bits) + ", expected " + std::to_string(expected) +
                 (reserve ? ", reserved" : ""));
    std::vector<DataFile> files;
    KEYED_ASSERT_OK_AND_ASSIGN(files, ListTargetFiles(*fs_, dir_ / "t"));
    std::vector<std::unique_ptr<DataFileReader>> readers;
    std::vector<int> fields;
    std::vector<RowKeyIndex::Unit> units;
    int64_t rows = 0;
    for (size_t f = 0; f < files.size(); ++f) {
      std::unique_ptr<DataFileReader> r;
      KEYED_ASSERT_OK_AND_ASSIGN(r, DataFileReader::Open(fs_, files[f]));
      fields.push_back(r->schema()->GetFieldIndex("url"));
      for (int u = 0; u < r->num_units(); ++u) {
        units.push_back({static_cast<int>(f), u, rows, r->unit_rows(u)});
        rows += r->unit_rows(u);
      }
      readers.push_back(std::move(r));
    }
    RowKeyIndex::Tuning tuning;
    tuning.tag_bits = tag_bits;
    tuning.cache_budget_bytes = 30000;
    std::unique_ptr<RowKeyIndex> index;
    KEYED_ASSERT_OK_AND_ASSIGN(index, RowKeyIndex::Make(fs_, files, fields, units,
                                                        /*buckets=*/2, expected, tuning));
    if (reserve) {
      KEYED_ASSERT_OK(index->Reserve(/*threads=*/2));
      KEYED_ASSERT_OK(index->Reserve(/*threads=*/2));  // a table exists: nothing more
    }
    std::set<std::string> seen;
    const KeySpec spec = UrlSpec();
    for (const auto& unit : units) {
      int64_t row = unit.first_row;
      auto st = readers[unit.file]->ScanStringColumn(
          unit.row_group, fields[unit.file], 300,
          [&](const std::string_view* values, const uint8_t* is_null, int64_t n) {
            EncodedKeys keys;
            ARROW_RETURN_NOT_OK(EncodeViews(spec, values, is_null, n, &keys));
            std::vector<uint8_t> mask(n), first(n, 9);
            for (int64_t i = 0; i < n; ++i) mask[i] = (row + i) % 5 != 0;
            ARROW_RETURN_NOT_OK(index->InsertIfAbsent(keys, row, mask.data(), first.data()));
            for (int64_t i = 0; i < n; ++i) {
              bool want = false;
              if (mask[i] && !is_null[i]) want = seen.insert(std::string(values[i])).second;
              EXPECT_EQ(first[i], want ? 1 : 0) << "row " << row + i << " '" << values[i] << "'";
            }
            row += n;
            return arrow::Status::OK();
          });
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
    EXPECT_EQ(index->size(), static_cast<int64_t>(seen.size()));
    // The same keys again: all present now.
    std::vector<std::optional<std::string>> again(seen.begin(), seen.end());
    expected_ = seen;
    ExpectExact(*index, again);
  }
}

// A table that cannot be allocated is an OutOfMemory error, not a crash. Its
// shards (256 TiB each) exceed x86-64's 128 TiB of user address space, so the
// kernel refuses the mapping whatever its overcommit policy.
TEST(RowKeyIndexMemoryTest, ATableTooBigForTheMachineIsOutOfMemory) {
  const std::vector<RowKeyIndex::Unit> units = {{0, 0, 0, 10}};
  std::unique_ptr<RowKeyIndex> index;
  KEYED_ASSERT_OK_AND_ASSIGN(index, RowKeyIndex::Make(nullptr, {}, {0}, units, /*buckets=*/2,
                                                      /*expected_keys=*/int64_t{1} << 45));
  const arrow::Status st = index->Reserve(/*threads=*/2);
  EXPECT_TRUE(st.IsOutOfMemory()) << st.ToString();
  EXPECT_NE(st.message().find("no memory for a table"), std::string::npos) << st.message();
}

TEST(UnitKeyCacheTest, DecodesOnceForConcurrentCallersAndReportsFailures) {
  std::atomic<int> calls{0};
  UnitKeyCache cache(3, int64_t{1} << 20, 4, [&](int unit, UnitKeys* out) {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (unit == 2) return arrow::Status::IOError("disk on fire");
    out->bytes = {'a', static_cast<char>('0' + unit)};
    out->begins = {0};
    out->lengths = {2};
    return arrow::Status::OK();
  });
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      auto keys = cache.Get(1);
      if (keys.ok() && (*keys)->At(0) == "a1") ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 6);
  EXPECT_EQ(calls.load(), 1);
  auto failed = cache.Get(2);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("disk on fire"), std::string::npos);
}

TEST(UnitKeyCacheTest, EvictsLeastRecentlyUsedWithinBudget) {
  int calls = 0;
  UnitKeyCache cache(4, 3 * 64, 100, [&](int unit, UnitKeys* out) {
    ++calls;
    out->bytes.assign(44, static_cast<char>('a' + unit));
    out->bytes.shrink_to_fit();
    out->begins = {0};
    out->begins.shrink_to_fit();
    out->lengths = {44};
    out->lengths.shrink_to_fit();
    return arrow::Status::OK();
  });
  for (int u : {0, 1, 0, 2, 0, 3}) ASSERT_TRUE(cache.Get(u).ok());
  // Each unit holds 44 + 8 + 4 bytes; the budget keeps 3, so 1 (least
  // recently used) was evicted and 0 (used often) was not.
  const int before = calls;
  ASSERT_TRUE(cache.Get(0).ok());
  EXPECT_EQ(calls, before);
  ASSERT_TRUE(cache.Get(1).ok());
  EXPECT_EQ(calls, before + 1);
  EXPECT_EQ(cache.stats().redecodes, 1);
  EXPECT_FALSE(cache.stats().keeps_all);
}

}  // namespace
}  // namespace thund::engine::keyed
