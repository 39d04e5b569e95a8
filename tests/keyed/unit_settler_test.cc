// UnitSettler: source row groups settled while the target's keys load. A row
// group may be settled only when every one of its keys is in the target (the
// oracle: DuckDB over the files), whatever the orders, the tags' collisions or
// the row group boundaries; the copy around it must write exactly the rows an
// anti-join gives, with or without settling.
#include "engine/keyed/unit_settler.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "engine/keyed/data_file_reader.h"
#include "engine/keyed/file_format.h"
#include "engine/keyed/stored_chunk.h"
#include "keyed/keyed_test_util.h"

namespace thund::engine::keyed {
namespace {

using testing::Copy;
using testing::CopyRun;
using testing::Options;
using testing::Oracle;
using testing::ReadTarget;
using testing::ScratchDir;

constexpr int kFiles = 4;
constexpr int kFileRows = 6144;  // three row groups of 2048 rows each
constexpr int64_t kRows = int64_t{kFiles} * kFileRows;

class UnitSettlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = std::make_shared<arrow::fs::LocalFileSystem>();
    src_ = dir_ / "src";
    dst_ = dir_ / "dst";
    std::filesystem::create_directories(src_);
    std::filesystem::create_directories(dst_);
    WriteSource(kUrl);
    ASSERT_GE(source_.units.size(), 8u) << "the test needs several row groups";
  }

  // Keys share long prefixes (every 37th row the same host and path start).
  static constexpr const char* kUrl = "'https://h' || (i % 37) || '/p/' || i";

  // (Re)writes the source: kFiles files of three 2048-row groups, row i with
  // key `url` (SQL over i) and id i, compressed with `codec`; then opens it
  // as source_.
  void WriteSource(const std::string& url, const std::string& codec = "snappy") {
    std::filesystem::remove_all(src_);
    std::filesystem::create_directories(src_);
    for (int f = 0; f < kFiles; ++f) {
      oracle_.Exec("COPY (SELECT " + url + " AS url, i AS id FROM range(" +
                   std::to_string(f * kFileRows) + ", " + std::to_string((f + 1) * kFileRows) +
                   ") t(i) ORDER BY i) TO '" + src_ + "/part-" + std::to_string(f) +
                   ".parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048, COMPRESSION '" + codec + "')");
    }
    auto source = OpenSource(fs_, "src", src_, std::nullopt, 2);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    source_ = std::move(source).ValueUnsafe();
  }

  // Options for copying the source into the target with settling in rounds
  // of `round_rows` target rows and steps of `step_rows` source rows.
  KeyedCopyOptions SmallRounds(int64_t round_rows = 3000, int64_t step_rows = 2500) {
    auto o = Options(src_, dst_, {"url"});
    o.tuning.settle_by_stored_bytes = compare_stored_;
    o.tuning.settle_round_rows = round_rows;
    o.tuning.settle_step_rows = step_rows;
    return o;
  }

  std::string SourceRows(const std::string& where = "true") {
    return "SELECT * FROM read_parquet('" + src_ + "/*.parquet') WHERE " + where;
  }
  // Writes the source rows matching `where`, ordered by `order`, into the
  // target as `files` files (row groups of 4096 rows by default: not the
  // source's).
  void WriteTarget(const std::string& where, const std::string& order = "id", int files = 3,
                   int row_group_rows = 4096) {
    const int64_t n = oracle_.Int("SELECT count(*) FROM (" + SourceRows(where) + ")");
    for (int f = 0; f < files; ++f) {
      oracle_.Exec("COPY (SELECT url, id FROM (SELECT *, row_number() OVER (ORDER BY " + order +
                   ") - 1 AS k FROM (" + SourceRows(where) + ")) WHERE k * " +
                   std::to_string(files) + " // " + std::to_string(std::max<int64_t>(n, 1)) +
                   " = " + std::to_string(f) + " ORDER BY k) TO '" + dst_ + "/t-" +
                   std::to_string(f) + ".parquet' (FORMAT parquet, ROW_GROUP_SIZE " +
                   std::to_string(row_group_rows) + ")");
    }
  }

  // The oracle: the source row groups whose every key is in the target.
  std::set<int64_t> FullyWritten() {
    std::set<int64_t> out;
    int64_t in_file = 0;
    for (size_t u = 0; u < source_.units.size(); ++u) {
      const SourceUnit& unit = source_.units[u];
      if (u > 0 && source_.units[u - 1].file != unit.file) in_file = 0;
      const std::string rows =
          "SELECT url FROM read_parquet('" + source_.files[unit.file].path +
          "', file_row_number = true) WHERE file_row_number >= " + std::to_string(in_file) +
          " AND file_row_number < " + std::to_string(in_file + unit.rows);
      const int64_t missing = oracle_.Int("SELECT count(*) FROM (" + rows +
                                          ") s WHERE s.url IS NULL OR s.url NOT IN (SELECT url "
                                          "FROM read_parquet('" +
                                          dst_ + "/*.parquet') WHERE url IS NOT NULL)");
      if (missing == 0) out.insert(static_cast<int64_t>(u));
      in_file += unit.rows;
    }
    return out;
  }

  // Loads the target into a RowKeyIndex in rounds of `round_rows` with a
  // settler; returns the settled row groups.
  std::set<int64_t> SettleDirectly(const RowKeyIndex::Tuning& tuning, int64_t round_rows,
                                   int64_t step_rows, UnitKeyCache::Stats* cache = nullptr,
                                   int64_t* twins = nullptr) {
    auto spec = KeySpec::Make(*source_.schema, {"url"}, KeyMatch::kExact, "test");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    EXPECT_TRUE(UnitSettler::Applies(source_, *spec));
    UnitSettler settler(fs_, &source_, *spec, 2, round_rows, step_rows, compare_stored_);
    RowKeyIndexRounds rounds = settler.Rounds();
    auto files = ListTargetFiles(*fs_, dst_);
    EXPECT_TRUE(files.ok());
    std::vector<std::unique_ptr<DataFileReader>> readers;
    std::vector<int> fields;
    for (const auto& f : *files) {
      auto r = DataFileReader::Open(fs_, f);
      EXPECT_TRUE(r.ok());
      fields.push_back((*r)->schema()->GetFieldIndex("url"));
      readers.push_back(std::move(r).ValueUnsafe());
    }
    RowKeyIndex::BuildStats stats;
    auto index = RowKeyIndex::Build(fs_, *spec, *files, fields, std::move(readers), 2, 2, &stats,
                                    tuning, &rounds);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    std::set<int64_t> out;
    if (!index.ok()) return out;
    EXPECT_EQ(stats.rows,
              oracle_.Int("SELECT count(*) FROM read_parquet('" + dst_ + "/*.parquet')"));
    EXPECT_EQ((*index)->size(), stats.rows - stats.null_rows);
    if (cache != nullptr) *cache = (*index)->cache_stats();
    if (twins != nullptr) *twins = settler.twin_units();
    int64_t rows = 0;
    for (size_t u = 0; u < source_.units.size(); ++u) {
      if (settler.settled(static_cast<int64_t>(u))) {
        out.insert(static_cast<int64_t>(u));
        rows += source_.units[u].rows;
      }
    }
    EXPECT_EQ(settler.settled_units(), static_cast<int64_t>(out.size()));
    const std::set<int64_t> written = FullyWritten();
    for (int64_t u : out) EXPECT_TRUE(written.count(u)) << "row group " << u << " has a new key";
    EXPECT_EQ(settler.settled_rows(), rows);
    return out;
  }

  // Copies with settling in small rounds, then checks the target against the
  // oracle (all source rows, each once) and the counts; returns the result.
  KeyedCopyResult CopyAndCheck(int64_t round_rows, int64_t step_rows) {
    const int64_t before =
        oracle_.Int("SELECT count(*) FROM read_parquet('" + dst_ + "/*.parquet')");
    CopyRun run = Copy(SmallRounds(round_rows, step_rows));
    EXPECT_TRUE(run.result.ok()) << run.result.status().ToString();
    if (!run.result.ok()) return {};
    EXPECT_EQ(run.result->counts.rows_read, kRows);
    EXPECT_EQ(run.result->counts.rows_skipped_existing, before);
    EXPECT_EQ(run.result->counts.rows_written, kRows - before);
    EXPECT_EQ(oracle_.Diff("SELECT url, id FROM (" + SourceRows() + ")",
                           "SELECT url, id FROM (" + ReadTarget(dst_) + ")"),
              "");
    EXPECT_EQ(run.HasEvent(KeyedEvent::Kind::kSettled), run.result->units_settled > 0)
        << run.EventsText();
    return *run.result;
  }

  ScratchDir dir_;
  Oracle oracle_;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::string src_, dst_;
  Source source_;
  bool compare_stored_ = true;  // settle by stored bytes too (UnitSettler::SettleTwins)
};

TEST_F(UnitSettlerTest, ATargetInTheSourceOrderSettlesEveryRowGroupWithoutDecodingItAgain) {
  WriteTarget("true");
  UnitKeyCache::Stats cache;
  EXPECT_EQ(SettleDirectly({}, 3000, 2500, &cache).size(), source_.units.size());
  EXPECT_EQ(cache.decodes, 0) << "matches are confirmed against the rounds kept in memory";
  const KeyedCopyResult r = CopyAndCheck(3000, 2500);
  EXPECT_EQ(r.units_settled, static_cast<int64_t>(source_.units.size()));
  EXPECT_EQ(r.files_written, 0);
}

TEST_F(UnitSettlerTest, ABigTargetFileIsLoadedInRoundsOfItsRowGroups) {
  // One file of 12 row groups, rounds of two: each round's row groups are
  // split between the threads, each with a reader of its own. (Its key
  // columns are stored as the source's: settled by their bytes, they would
  // not be looked up at all.)
  compare_stored_ = false;
  WriteTarget("true", "id", /*files=*/1, /*row_group_rows=*/2048);
  UnitKeyCache::Stats cache;
  EXPECT_EQ(SettleDirectly({}, 3000, 2500, &cache).size(), source_.units.size());
  EXPECT_EQ(cache.decodes, 0);
  CopyAndCheck(3000, 2500);
}

TEST_F(UnitSettlerTest, AnInterruptedRunSettlesExactlyTheRowGroupsItFinished) {
  // Not on a row group boundary: the row group it stopped in is not settled.
  WriteTarget("id < " + std::to_string(kRows / 2 + 777));
  const std::set<int64_t> expected = FullyWritten();
  ASSERT_FALSE(expected.empty());
  ASSERT_LT(expected.size(), source_.units.size());
  EXPECT_EQ(SettleDirectly({}, 3000, 2500), expected);
  EXPECT_EQ(CopyAndCheck(3000, 2500).units_settled, static_cast<int64_t>(expected.size()));
}

TEST_F(UnitSettlerTest, ANewKeyInsideARowGroupLeavesOnlyThatRowGroupToTheWrite) {
  WriteTarget("id <> 3000");  // row group 1 of file 0
  const std::set<int64_t> expected = FullyWritten();
  ASSERT_EQ(expected.size(), source_.units.size() - 1);
  EXPECT_EQ(SettleDirectly({}, 3000, 2500), expected);
  const KeyedCopyResult r = CopyAndCheck(3000, 2500);
  EXPECT_EQ(r.units_settled, static_cast<int64_t>(expected.size()));
  EXPECT_EQ(r.counts.rows_written, 1);
}

// Keys that follow a found one are confirmed against the next target row in
// place; rows the source does not have (here every 37th target row) only
// make the walk look the next key up.
TEST_F(UnitSettlerTest, ATargetWithMoreRowsBetweenTheSourcesStillSettlesEverything) {
  const std::string extras =
      "SELECT 'https://extra/' || j AS url, -j AS id, j * 74 + 1 AS ord FROM range(" +
      std::to_string(kRows / 37) + ") t(j)";
  for (int f = 0; f < 3; ++f) {
    oracle_.Exec("COPY (SELECT url, id FROM (SELECT url, id, id * 2 AS ord FROM (" + SourceRows() +
                 ") UNION ALL " + extras + ") WHERE ord * 3 // " + std::to_string(2 * kRows) +
                 " = " + std::to_string(f) + " ORDER BY ord) TO '" + dst_ + "/t-" +
                 std::to_string(f) + ".parquet' (FORMAT parquet)");
  }
  EXPECT_EQ(SettleDirectly({}, 3000, 2500).size(), source_.units.size());
  auto o = SmallRounds();
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->counts.rows_skipped_existing, kRows);
  EXPECT_EQ(run.result->counts.rows_written, 0);
  EXPECT_EQ(run.result->units_settled, static_cast<int64_t>(source_.units.size()));
}

// An empty key must never be taken for a NULL target row (whose bytes are
// empty too) on the walk.
TEST_F(UnitSettlerTest, AnEmptyKeyIsNotANullRowOfTheTarget) {
  WriteSource(std::string("CASE WHEN i = 3000 THEN '' ELSE ") + kUrl + " END");
  // The target: every source row, but NULL where the source has ''.
  oracle_.Exec("COPY (SELECT CASE WHEN url = '' THEN NULL ELSE url END AS url, id FROM (" +
               SourceRows() + ") ORDER BY id) TO '" + dst_ + "/t.parquet' (FORMAT parquet)");
  const std::set<int64_t> settled = SettleDirectly({}, 3000, 2500);
  EXPECT_EQ(settled, FullyWritten());
  EXPECT_EQ(settled.size(), source_.units.size() - 1);
  auto o = SmallRounds();
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->counts.rows_written, 1);  // the '' row: the target had NULL there
  EXPECT_EQ(run.result->counts.rows_skipped_existing, kRows - 1);
  EXPECT_EQ(run.result->units_settled, static_cast<int64_t>(source_.units.size()) - 1);
  EXPECT_EQ(
      oracle_.Int("SELECT count(*) FROM read_parquet('" + dst_ + "/*.parquet') WHERE url = ''"), 1);
}

TEST_F(UnitSettlerTest, CollidingTagsNeverSettleARowGroupWithANewKey) {
  // One tag bit: nearly every key has candidates that are other keys.
  WriteTarget("id % 1000 <> 999");
  RowKeyIndex::Tuning tuning;
  tuning.tag_bits = 1;
  const std::set<int64_t> expected = FullyWritten();
  EXPECT_EQ(SettleDirectly(tuning, 3000, 2500), expected);
  EXPECT_TRUE(expected.empty());
}

TEST_F(UnitSettlerTest, OtherOrdersStopSettlingAndStillWriteExactly) {
  for (const std::string order : {"id DESC", "hash(id)"}) {
    SCOPED_TRACE(order);
    std::filesystem::remove_all(dst_);
    std::filesystem::create_directories(dst_);
    WriteTarget("true", order, /*files=*/8);
    // In a reversed or shuffled target the first row groups' matches are not
    // in the first rounds: settling stops early. Exactness is what matters.
    const std::set<int64_t> settled = SettleDirectly({}, 3000, 2500);
    EXPECT_LT(settled.size(), source_.units.size());
    CopyAndCheck(3000, 2500);
  }
}

TEST_F(UnitSettlerTest, EveryOtherRowWrittenSettlesNothing) {
  WriteTarget("id % 2 = 0");
  EXPECT_TRUE(SettleDirectly({}, 3000, 2500).empty());
  EXPECT_EQ(CopyAndCheck(3000, 2500).units_settled, 0);
}

TEST_F(UnitSettlerTest, OneRoundOrManyGiveTheSameRows) {
  WriteTarget("id < " + std::to_string(kRows / 3) + " OR id % 5 = 0");
  const std::set<int64_t> expected = FullyWritten();
  EXPECT_EQ(SettleDirectly({}, int64_t{1} << 40, int64_t{1} << 40), expected);
  EXPECT_EQ(SettleDirectly({}, 1, 1), expected);
  CopyAndCheck(1, 1);
}

TEST_F(UnitSettlerTest, ARowGroupWithANullKeyIsLeftToTheWriteAndItsNullKeyRule) {
  // Replace the source: row 5000 (row group 2 of file 0) has a NULL key.
  WriteSource(std::string("CASE WHEN i = 5000 THEN NULL ELSE ") + kUrl + " END");
  WriteTarget("url IS NOT NULL");
  const std::set<int64_t> settled = SettleDirectly({}, 3000, 2500);
  EXPECT_EQ(settled, FullyWritten());
  EXPECT_EQ(settled.size(), source_.units.size() - 1);

  auto o = SmallRounds();
  CopyRun failed = Copy(o);  // null_keys=error (the default) still sees it
  ASSERT_FALSE(failed.result.ok());
  EXPECT_NE(failed.result.status().message().find("NULL"), std::string::npos)
      << failed.result.status().ToString();
  o.keyed.null_keys = NullKeys::kDrop;
  CopyRun dropped = Copy(o);
  ASSERT_TRUE(dropped.result.ok()) << dropped.result.status().ToString();
  EXPECT_EQ(dropped.result->counts.rows_null_key, 1);
  EXPECT_EQ(dropped.result->counts.rows_skipped_existing, kRows - 1);
  EXPECT_EQ(dropped.result->counts.rows_written, 0);
  EXPECT_EQ(dropped.result->units_settled, static_cast<int64_t>(source_.units.size()) - 1);
}

TEST_F(UnitSettlerTest, ACorruptSourceRowGroupFailsTheRunNamingTheSourceNotTheTarget) {
  WriteTarget("true");
  // Garbage over the first page of row group 1's key column in file 1: the
  // footer still reads, the page does not.
  const std::string file = source_.files[1].path;
  const int64_t page = oracle_.Int("SELECT data_page_offset FROM parquet_metadata('" + file +
                                   "') WHERE row_group_id = 1 AND path_in_schema = 'url'");
  ASSERT_GT(page, 0);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(page);
    const std::string garbage(64, '\xee');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto o = SmallRounds();
  CopyRun run = Copy(o);
  ASSERT_FALSE(run.result.ok());
  const std::string message = run.result.status().message();
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_EQ(message.find("target"), std::string::npos) << message;
}

TEST_F(UnitSettlerTest, SettlingOnOrOffWritesTheSameRows) {
  WriteTarget("id < 9000 OR id % 3 = 0");
  auto o = SmallRounds();
  o.tuning.settle = false;
  CopyRun off = Copy(o);
  ASSERT_TRUE(off.result.ok()) << off.result.status().ToString();
  EXPECT_EQ(off.result->units_settled, 0);
  EXPECT_FALSE(off.HasEvent(KeyedEvent::Kind::kSettled));
  // The rerun (everything written now) settles what the first run wrote too.
  o.tuning.settle = true;
  CopyRun on = Copy(o);
  ASSERT_TRUE(on.result.ok()) << on.result.status().ToString();
  EXPECT_EQ(on.result->counts.rows_written, 0);
  EXPECT_EQ(on.result->counts.rows_skipped_existing, kRows);
  EXPECT_GT(on.result->units_settled, 0);
  EXPECT_EQ(oracle_.Diff("SELECT url, id FROM (" + SourceRows() + ")",
                         "SELECT url, id FROM (" + ReadTarget(dst_) + ")"),
            "");
}

// A rerun's target holds byte-for-byte copies of the source files the first
// run found all new: their row groups settle by comparing stored key columns,
// never decoded, and the rest as before.
TEST_F(UnitSettlerTest, RowGroupsCopiedWholeIntoTheTargetSettleByTheirStoredBytes) {
  for (int f : {0, 1}) {
    std::filesystem::copy_file(source_.files[f].path,
                               dst_ + "/copied-" + std::to_string(f) + ".parquet");
  }
  WriteTarget("id >= " + std::to_string(2 * kFileRows) + " AND id < " +
                  std::to_string(2 * kFileRows + 3000),
              "id", /*files=*/1);
  const std::set<int64_t> expected = FullyWritten();
  ASSERT_EQ(expected.size(), 7u);  // files 0 and 1, and file 2's first row group
  int64_t twins = -1;
  EXPECT_EQ(SettleDirectly({}, 3000, 2500, nullptr, &twins), expected);
  EXPECT_EQ(twins, 6);
  const KeyedCopyResult r = CopyAndCheck(3000, 2500);
  EXPECT_EQ(r.units_settled, 7);
  EXPECT_EQ(r.units_settled_by_stored_bytes, 6);

  // Off, the same row groups settle by their keys.
  auto o = SmallRounds();
  o.tuning.settle_by_stored_bytes = false;
  std::filesystem::remove_all(dst_);
  std::filesystem::create_directories(dst_);
  for (int f : {0, 1}) {
    std::filesystem::copy_file(source_.files[f].path,
                               dst_ + "/copied-" + std::to_string(f) + ".parquet");
  }
  CopyRun off = Copy(o);
  ASSERT_TRUE(off.result.ok()) << off.result.status().ToString();
  EXPECT_EQ(off.result->units_settled, 6);
  EXPECT_EQ(off.result->units_settled_by_stored_bytes, 0);
}

// Rerunning a copy that finished: every source row group is stored in the
// target byte for byte, so nothing is to be written and the target's keys are
// not even loaded. One row group short of that, they are.
TEST_F(UnitSettlerTest, ARerunOfAFinishedCopyLoadsNoKeys) {
  CopyRun first = Copy(SmallRounds());
  ASSERT_TRUE(first.result.ok()) << first.result.status().ToString();
  ASSERT_EQ(first.result->files_passed_through, kFiles);
  CopyRun again = Copy(SmallRounds());
  ASSERT_TRUE(again.result.ok()) << again.result.status().ToString();
  EXPECT_EQ(again.result->units_settled_by_stored_bytes,
            static_cast<int64_t>(source_.units.size()));
  EXPECT_EQ(again.result->counts.rows_skipped_existing, kRows);
  EXPECT_EQ(again.result->counts.rows_written, 0);
  EXPECT_EQ(again.result->target_keys, 0);
  EXPECT_NE(again.EventsText().find("its keys were not loaded"), std::string::npos)
      << again.EventsText();
  EXPECT_EQ(oracle_.Diff("SELECT url, id FROM (" + SourceRows() + ")",
                         "SELECT url, id FROM (" + ReadTarget(dst_) + ")"),
            "");

  // A new last row: that row group must be read, against the target's keys.
  oracle_.Exec("COPY (SELECT * FROM read_parquet('" + source_.files[kFiles - 1].path +
               "') UNION ALL SELECT 'https://new/1', -1) TO '" + src_ +
               "/part-9.parquet' "
               "(FORMAT parquet)");
  CopyRun more = Copy(SmallRounds());
  ASSERT_TRUE(more.result.ok()) << more.result.status().ToString();
  EXPECT_EQ(more.result->counts.rows_written, 1);
  EXPECT_EQ(more.result->target_keys, kRows);
  EXPECT_EQ(more.EventsText().find("its keys were not loaded"), std::string::npos)
      << more.EventsText();
}

// A chunk whose footer entry is the same (sizes, counts, statistics) but whose
// bytes differ in one key must be decoded: its row group holds a new key.
TEST_F(UnitSettlerTest, AChunkDescribedAlikeButStoredOtherwiseIsNotSettledByItsBytes) {
  WriteSource(kUrl, "uncompressed");  // keys stored verbatim, so one can be edited
  const std::string copy = dst_ + "/copied-0.parquet";
  std::filesystem::copy_file(source_.files[0].path, copy);
  // Key of row 1000, 'https://h1/p/1000', stored after its 4-byte length:
  // made 'https://h1/p/100X', of the same length.
  const std::string key = "https://h1/p/1000";
  std::string bytes = testing::ReadBytes(copy);
  const std::string stored =
      std::string(1, static_cast<char>(key.size())) + std::string(3, '\0') + key;
  const size_t at = bytes.find(stored);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(bytes.find(stored, at + 1), std::string::npos);
  bytes[at + stored.size() - 1] = 'X';
  {
    std::ofstream out(copy, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // The footers describe row group 0's key column alike.
  auto target = DataFileReader::Open(fs_, DataFile{copy, FileFormat::kParquet});
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  const auto mine = StoredNonNullChunk(*source_.footers[0], 0, "url");
  const auto theirs = StoredNonNullChunk(*(*target)->parquet_footer(), 0, "url");
  ASSERT_TRUE(mine && theirs);
  ASSERT_EQ(mine->form, theirs->form) << "the edit must leave the footer alike";
  auto same = SameStoredBytes(*fs_, source_.files[0].path, *mine, copy, *theirs);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_FALSE(*same);

  const std::set<int64_t> expected = FullyWritten();
  ASSERT_EQ(expected, (std::set<int64_t>{1, 2}));
  int64_t twins = -1;
  EXPECT_EQ(SettleDirectly({}, 3000, 2500, nullptr, &twins), expected);
  EXPECT_EQ(twins, 2);
  CopyRun run = Copy(SmallRounds());
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->units_settled, 2);
  EXPECT_EQ(run.result->units_settled_by_stored_bytes, 2);
  EXPECT_EQ(run.result->counts.rows_skipped_existing, kFileRows - 1);
  EXPECT_EQ(run.result->counts.rows_written, kRows - kFileRows + 1);  // row 1000 too
  EXPECT_EQ(oracle_.Diff("SELECT url, id FROM (" + SourceRows() +
                             ") UNION ALL SELECT 'https://h1/p/100X', 1000",
                         "SELECT url, id FROM (" + ReadTarget(dst_) + ")"),
            "");
}

TEST_F(UnitSettlerTest, ACopiedRowGroupWithANullKeyIsLeftToTheWriteAndItsNullKeyRule) {
  WriteSource(std::string("CASE WHEN i = 5000 THEN NULL ELSE ") + kUrl + " END");
  std::filesystem::copy_file(source_.files[0].path, dst_ + "/copied-0.parquet");
  EXPECT_FALSE(StoredNonNullChunk(*source_.footers[0], 2, "url").has_value());
  int64_t twins = -1;
  EXPECT_EQ(SettleDirectly({}, 3000, 2500, nullptr, &twins), FullyWritten());
  EXPECT_EQ(twins, 2);                   // row groups 0 and 1 of file 0, not 2
  CopyRun failed = Copy(SmallRounds());  // null_keys=error
  ASSERT_FALSE(failed.result.ok());
  EXPECT_NE(failed.result.status().message().find("NULL"), std::string::npos)
      << failed.result.status().ToString();
}

}  // namespace
}  // namespace thund::engine::keyed
