// RunKeyedCopy end to end through the C++ API: every result is compared with
// the same data processed by plain DuckDB SQL (the oracle).
#include <gtest/gtest.h>

#include <fstream>

#include "keyed/keyed_test_util.h"

namespace thund::engine::keyed {
namespace {

using testing::Copy;
using testing::CopyRun;
using testing::Options;
using testing::Oracle;
using testing::ReadTarget;
using testing::ScratchDir;

class KeyedCopyTest : public ::testing::Test {
 protected:
  // `files` Parquet files of `rows` rows each: id = file * rows + row, plus payload.
  std::string MakeSource(int files, int rows, const std::string& name = "src") {
    std::string dir = dir_ / name;
    std::filesystem::create_directories(dir);
    for (int f = 0; f < files; ++f) {
      oracle_.Exec("COPY (SELECT i AS id, 'v' || i AS v, i % 7 AS g FROM range(" +
                   std::to_string(f * rows) + ", " + std::to_string((f + 1) * rows) +
                   ") t(i)) TO '" + dir + "/part-" + std::to_string(f) +
                   ".parquet' (FORMAT parquet)");
    }
    return dir;
  }
  std::string Source(const std::string& dir) {
    return "SELECT * FROM read_parquet('" + dir + "/*.parquet')";
  }

  ScratchDir dir_;
  Oracle oracle_;
};

TEST_F(KeyedCopyTest, ResumesFromAPartialTargetAndRerunsAsANoOp) {
  const std::string src = MakeSource(10, 1000);
  const std::string dst = dir_ / "dst";
  std::filesystem::create_directories(dst);
  // A previous run committed the rows whose id is a multiple of 3.
  oracle_.Exec("COPY (SELECT * FROM read_parquet('" + src + "/*.parquet') WHERE id % 3 = 0) TO '" +
               dst + "/earlier.parquet' (FORMAT parquet)");
  const int64_t earlier = oracle_.Int("SELECT count(*) FROM read_parquet('" + dst + "/*.parquet')");

  auto o = Options(src, dst, {"id"});
  o.output.rows_per_file = 1500;
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->counts.rows_read, 10000);
  EXPECT_EQ(run.result->counts.rows_skipped_existing, earlier);
  EXPECT_EQ(run.result->counts.rows_written, 10000 - earlier);
  EXPECT_EQ(run.result->files_written, (10000 - earlier + 1499) / 1500);
  EXPECT_TRUE(run.HasEvent(KeyedEvent::Kind::kTargetLoaded, "loaded " + std::to_string(earlier)))
      << run.EventsText();
  EXPECT_TRUE(run.HasEvent(KeyedEvent::Kind::kPlacement, "right after source 'src'"));
  EXPECT_EQ(oracle_.Diff(Source(src), ReadTarget(dst)), "");

  CopyRun again = Copy(o);
  ASSERT_TRUE(again.result.ok()) << again.result.status().ToString();
  EXPECT_EQ(again.result->counts.rows_skipped_existing, 10000);
  EXPECT_EQ(again.result->counts.rows_written, 0);
  EXPECT_EQ(again.result->files_written, 0);
  EXPECT_EQ(oracle_.Diff(Source(src), ReadTarget(dst)), "");
}

TEST_F(KeyedCopyTest, MissingAndEmptyTargetsSkipNothingAndSaySo) {
  const std::string src = MakeSource(2, 100);
  CopyRun missing = Copy(Options(src, dir_ / "new/nested", {"id"}));
  ASSERT_TRUE(missing.result.ok()) << missing.result.status().ToString();
  EXPECT_TRUE(missing.HasEvent(KeyedEvent::Kind::kTargetMissing, "no row is skipped"));
  EXPECT_EQ(missing.result->counts.rows_written, 200);

  std::filesystem::create_directories(dir_ / "empty");
  CopyRun empty = Copy(Options(src, dir_ / "empty", {"id"}));
  ASSERT_TRUE(empty.result.ok());
  EXPECT_TRUE(empty.HasEvent(KeyedEvent::Kind::kTargetEmpty, "no row is skipped"))
      << empty.EventsText();
  EXPECT_EQ(oracle_.Diff(Source(src), ReadTarget(dir_ / "empty")), "");
}

TEST_F(KeyedCopyTest, CompositeKeys) {
  const std::string src = dir_ / "pairs.parquet";
  // (a, b) unique; a and b each repeat.
  oracle_.Exec(
      "COPY (SELECT i // 10 AS a, 'b' || (i % 10) AS b, i AS payload FROM range(3000) t(i)) TO '" +
      src + "' (FORMAT parquet)");
  const std::string dst = dir_ / "dst";
  std::filesystem::create_directories(dst);
  oracle_.Exec("COPY (SELECT * FROM read_parquet('" + src + "') WHERE (a + payload) % 4 = 0) TO '" +
               dst + "/old.parquet' (FORMAT parquet)");
  const int64_t old_rows = oracle_.Int("SELECT count(*) FROM '" + dst + "/old.parquet'");
  auto o = Options(src, dst, {"a", "b"});
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->counts.rows_skipped_existing, old_rows);
  EXPECT_EQ(oracle_.Diff("SELECT * FROM '" + src + "'", ReadTarget(dst)), "");
}

TEST_F(KeyedCopyTest, DuplicatesFirstKeepsTheFirstRowPerKeyInInputOrder) {
  const std::string src = dir_ / "src";
  std::filesystem::create_directories(src);
  // Three files; ids repeat within and across files with different payloads.
  for (int f = 0; f < 3; ++f) {
    oracle_.Exec("COPY (SELECT (i * 7 + " + std::to_string(f) + ") % 250 AS id, 'f" +
                 std::to_string(f) + "-' || i AS v FROM range(300) t(i)) TO '" + src + "/p" +
                 std::to_string(f) + ".parquet' (FORMAT parquet)");
  }
  const std::string dst = dir_ / "dst";
  std::filesystem::create_directories(dst);
  oracle_.Exec("COPY (SELECT 5 AS id, 'old' AS v UNION ALL SELECT 6, 'old') TO '" + dst +
               "/old.parquet' (FORMAT parquet)");
  auto o = Options(src, dst, {"id"});
  o.keyed.batch_size = 50;  // first occurrences span batches, units and files
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  const std::string first_rows =
      "SELECT id, v FROM (SELECT id, v, row_number() OVER (PARTITION BY id ORDER BY filename, "
      "file_row_number) AS rn FROM read_parquet('" +
      src +
      "/*.parquet', filename = true, file_row_number = true) WHERE id NOT IN (5, 6)) WHERE rn = 1 "
      "UNION ALL SELECT 5, 'old' UNION ALL SELECT 6, 'old'";
  EXPECT_EQ(oracle_.Diff(first_rows, ReadTarget(dst)), "");
  const int64_t distinct_new = oracle_.Int("SELECT count(DISTINCT id) FROM read_parquet('" + src +
                                           "/*.parquet') WHERE id NOT IN (5, 6)");
  const int64_t existing =
      oracle_.Int("SELECT count(*) FROM read_parquet('" + src + "/*.parquet') WHERE id IN (5, 6)");
  EXPECT_EQ(run.result->counts.rows_written, distinct_new);
  EXPECT_EQ(run.result->counts.rows_skipped_existing, existing);
  EXPECT_EQ(run.result->counts.rows_skipped_duplicate, 900 - existing - distinct_new);
}

TEST_F(KeyedCopyTest, DuplicatesAllWritesEveryRowAndGroupsRepeatedKeysInOneFile) {
  const std::string src = dir_ / "src.parquet";
  oracle_.Exec(
      "COPY (SELECT i % 40 AS id, i AS v FROM range(100) t(i) UNION ALL "
      "SELECT 1000 + i, i FROM range(20) t(i)) TO '" +
      src + "' (FORMAT parquet)");
  const std::string dst = dir_ / "dst";
  std::filesystem::create_directories(dst);
  oracle_.Exec("COPY (SELECT 3::BIGINT AS id, -1::BIGINT AS v) TO '" + dst +
               "/old.parquet' (FORMAT parquet)");
  auto o = Options(src, dst, {"id"});
  o.keyed.duplicates = Duplicates::kAll;
  o.output.rows_per_file = 7;
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(oracle_.Diff("SELECT * FROM '" + src + "' WHERE id <> 3 UNION ALL SELECT 3, -1",
                         ReadTarget(dst)),
            "");
  EXPECT_TRUE(run.HasEvent(KeyedEvent::Kind::kDeferred, "one final file")) << run.EventsText();
  // Every repeated key lives in exactly one file (so a crash commits all or none of it).
  EXPECT_EQ(
      oracle_.Int("SELECT count(*) FROM (SELECT id FROM read_parquet('" + dst +
                  "/*.parquet', filename = true) GROUP BY id HAVING count(DISTINCT filename) > 1)"),
      0);
  EXPECT_EQ(run.result->counts.rows_skipped_duplicate, 0);
  EXPECT_EQ(run.result->counts.rows_skipped_existing, 3);  // id 3 occurs 3 times in 0..99
}

TEST_F(KeyedCopyTest, NullKeysFailByDefaultNamingTheRow) {
  const std::string src = dir_ / "nulls.parquet";
  oracle_.Exec(
      "COPY (SELECT CASE WHEN i = 41 THEN NULL ELSE i END AS id, i AS v FROM range(100) t(i)) TO "
      "'" +
      src + "' (FORMAT parquet)");
  CopyRun run = Copy(Options(src, dir_ / "dst", {"id"}));
  ASSERT_TRUE(run.result.status().IsInvalid()) << run.result.status().ToString();
  const std::string msg = run.result.status().message();
  EXPECT_NE(msg.find("nulls.parquet' row group 0 row 42"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--null-keys drop"), std::string::npos) << msg;
}

TEST_F(KeyedCopyTest, NullKeysDropIsCountedAndNeverWritten) {
  const std::string src = dir_ / "nulls.parquet";
  oracle_.Exec(
      "COPY (SELECT CASE WHEN i % 10 = 0 THEN NULL ELSE i % 50 END AS id, 'x' || (i % 3) AS k2, i "
      "AS v "
      "FROM range(200) t(i)) TO '" +
      src + "' (FORMAT parquet)");
  const std::string dst = dir_ / "dst";
  auto o = Options(src, dst, {"id", "k2"});
  o.keyed.null_keys = NullKeys::kDrop;
  o.keyed.duplicates = Duplicates::kAll;
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->counts.rows_null_key, 20);
  EXPECT_EQ(oracle_.Diff("SELECT * FROM '" + src + "' WHERE id IS NOT NULL", ReadTarget(dst)), "");
  // A rerun drops them again and writes nothing else.
  CopyRun again = Copy(o);
  ASSERT_TRUE(again.result.ok());
  EXPECT_EQ(again.result->counts.rows_written, 0);
  EXPECT_EQ(again.result->counts.rows_null_key, 20);
}

TEST_F(KeyedCopyTest, NullStringKeysOnTheZeroCopyPath) {
  // A single string key in Parquet is looked up straight from the pages.
  const std::string src = dir_ / "urls.parquet";
  oracle_.Exec(
      "COPY (SELECT CASE WHEN i % 9 = 4 THEN NULL ELSE 'u' || (i % 70) END AS url, i AS v "
      "FROM range(300) t(i)) TO '" +
      src + "' (FORMAT parquet, ROW_GROUP_SIZE 100)");
  CopyRun failed = Copy(Options(src, dir_ / "a", {"url"}));
  ASSERT_TRUE(failed.result.status().IsInvalid());
  EXPECT_NE(failed.result.status().message().find(
                "urls.parquet' row group 0 row 5: a key column (url) is NULL"),
            std::string::npos)
      << failed.result.status().message();

  const std::string dst = dir_ / "b";
  std::filesystem::create_directories(dst);
  oracle_.Exec("COPY (SELECT 'u3' AS url, -1::BIGINT AS v) TO '" + dst +
               "/old.parquet' (FORMAT parquet)");
  auto o = Options(src, dst, {"url"});
  o.keyed.null_keys = NullKeys::kDrop;
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->counts.rows_null_key,
            oracle_.Int("SELECT count(*) FROM '" + src + "' WHERE url IS NULL"));
  const std::string expected =
      "SELECT url, v FROM (SELECT url, v, row_number() OVER (PARTITION BY url ORDER BY v) AS rn "
      "FROM '" +
      src + "' WHERE url IS NOT NULL AND url <> 'u3') WHERE rn = 1 UNION ALL SELECT 'u3', -1";
  EXPECT_EQ(oracle_.Diff(expected, ReadTarget(dst)), "");
}

TEST_F(KeyedCopyTest, JoinOfTwoSourcesFiltersTheKeyCarryingSide) {
  const std::string orders = dir_ / "orders.parquet";
  const std::string customers = dir_ / "customers.csv";
  oracle_.Exec(
      "COPY (SELECT i AS order_id, i % 30 AS customer_id, i * 1.5 AS amount FROM range(2000) t(i)) "
      "TO '" +
      orders + "' (FORMAT parquet)");
  oracle_.Exec("COPY (SELECT i AS customer_id, 'name' || i AS name FROM range(25) t(i)) TO '" +
               customers + "' (FORMAT csv, HEADER)");
  const std::string join =
      "SELECT o.order_id, c.name, o.amount FROM orders o JOIN customers c USING (customer_id)";
  const std::string dst = dir_ / "dst";
  std::filesystem::create_directories(dst);
  // Earlier rows: the joined output for even order ids.
  oracle_.Exec("COPY (SELECT o.order_id, c.name, o.amount FROM '" + orders + "' o JOIN read_csv('" +
               customers + "') c USING (customer_id) WHERE order_id % 2 = 0) TO '" + dst +
               "/old.parquet' (FORMAT parquet)");
  KeyedCopyOptions o = Options(orders, dst, {"order_id"});
  o.sources[0].name = "orders";
  o.sources.push_back(CopySource{"customers", customers, std::nullopt});
  o.transform_sql = join;
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_TRUE(run.HasEvent(KeyedEvent::Kind::kPlacement, "right after source orders (order_id)"))
      << run.EventsText();
  EXPECT_EQ(run.result->shape, "materialized");
  EXPECT_EQ(run.result->counts.rows_read, 2025);
  // Skipped at the source: every order already in the target.
  EXPECT_EQ(run.result->counts.rows_skipped_existing,
            oracle_.Int("SELECT count(*) FROM '" + dst + "/old.parquet'"));
  const std::string expected = "SELECT o.order_id, c.name, o.amount FROM '" + orders +
                               "' o JOIN read_csv('" + customers + "') c USING (customer_id)";
  EXPECT_EQ(oracle_.Diff(expected, ReadTarget(dst)), "");
}

TEST_F(KeyedCopyTest, UnionFiltersEachBranch) {
  const std::string a = dir_ / "a.parquet";
  const std::string b = dir_ / "b.json";
  oracle_.Exec("COPY (SELECT i AS id, 'a' AS origin FROM range(0, 500) t(i)) TO '" + a +
               "' (FORMAT parquet)");
  oracle_.Exec("COPY (SELECT i AS id, 'b' AS origin FROM range(500, 900) t(i)) TO '" + b +
               "' (FORMAT json)");
  const std::string dst = dir_ / "dst";
  std::filesystem::create_directories(dst);
  oracle_.Exec("COPY (SELECT i AS id, 'old' AS origin FROM range(0, 900, 4) t(i)) TO '" + dst +
               "/old.parquet' (FORMAT parquet)");
  KeyedCopyOptions o = Options(a, dst, {"id"});
  o.sources[0].name = "a";
  o.sources.push_back(CopySource{"b", b, std::nullopt});
  o.transform_sql = "SELECT id, origin FROM a UNION ALL SELECT id, origin FROM b";
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_TRUE(run.HasEvent(KeyedEvent::Kind::kPlacement, "a (id), b (id)")) << run.EventsText();
  EXPECT_EQ(run.result->counts.rows_skipped_existing, 225);
  const std::string expected =
      "SELECT id, origin FROM (SELECT * FROM '" + a + "' UNION ALL SELECT * FROM read_json('" + b +
      "')) WHERE id % 4 <> 0 UNION ALL SELECT i, 'old' FROM range(0, 900, 4) t(i)";
  EXPECT_EQ(oracle_.Diff(expected, ReadTarget(dst)), "");
}

TEST_F(KeyedCopyTest, ComputedKeyIsFilteredBeforeTheWrite) {
  const std::string src = MakeSource(3, 200);
  const std::string dst = dir_ / "dst";
  std::filesystem::create_directories(dst);
  oracle_.Exec("COPY (SELECT 'k' || i AS key, 'old' AS v FROM range(0, 600, 5) t(i)) TO '" + dst +
               "/old.parquet' (FORMAT parquet)");
  KeyedCopyOptions o = Options(src, dst, {"key"});
  o.transform_sql = "SELECT 'k' || id AS key, upper(v) AS v FROM src";
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_TRUE(
      run.HasEvent(KeyedEvent::Kind::kPlacement, "filter before the write: key key is computed"))
      << run.EventsText();
  EXPECT_EQ(run.result->shape, "streaming");  // row-wise: batch by batch
  EXPECT_EQ(run.result->counts.rows_skipped_existing, 120);
  const std::string expected = "SELECT 'k' || id AS key, upper(v) AS v FROM read_parquet('" + src +
                               "/*.parquet') WHERE id % 5 <> 0 UNION ALL SELECT 'k' || i, 'old' "
                               "FROM range(0, 600, 5) t(i)";
  EXPECT_EQ(oracle_.Diff(expected, ReadTarget(dst)), "");
}

TEST_F(KeyedCopyTest, RowWiseTransformIsFilteredAtTheSource) {
  const std::string src = MakeSource(4, 250);
  const std::string dst = dir_ / "dst";
  KeyedCopyOptions o = Options(src, dst, {"id"});
  o.transform_sql = "SELECT id, g, upper(v) AS v FROM src WHERE g <> 3";
  CopyRun first = Copy(o);
  ASSERT_TRUE(first.result.ok()) << first.result.status().ToString();
  CopyRun again = Copy(o);
  ASSERT_TRUE(again.result.ok());
  EXPECT_EQ(again.result->shape, "streaming");
  EXPECT_EQ(again.result->counts.rows_written, 0);
  // Every row whose key is in the target is skipped at the source: the rows the
  // WHERE removed in the first run are not in the target, so they reach the query.
  EXPECT_EQ(again.result->counts.rows_skipped_existing, first.result->counts.rows_written);
  EXPECT_EQ(oracle_.Diff("SELECT id, g, upper(v) AS v FROM read_parquet('" + src +
                             "/*.parquet') WHERE g <> 3",
                         ReadTarget(dst)),
            "");
}

TEST_F(KeyedCopyTest, CsvAndJsonTargetsReadTheirKeysWithTheWrittenType) {
  const std::string src = dir_ / "src.parquet";
  // String keys that look like numbers: "007" must stay "007" when the keys are
  // read back from a CSV or JSON target (type inference would make it 7).
  oracle_.Exec("COPY (SELECT lpad(i::VARCHAR, 3, '0') AS code, i AS v FROM range(300) t(i)) TO '" +
               src + "' (FORMAT parquet)");
  for (FileFormat fmt : {FileFormat::kCsv, FileFormat::kJson, FileFormat::kParquet}) {
    const std::string dst = dir_ / (std::string("dst_") + Name(fmt));
    KeyedCopyOptions o = Options(src, dst, {"code"});
    o.output.format = fmt;
    o.output.rows_per_file = 100;
    o.transform_sql = "SELECT code, v FROM src WHERE v < 200";
    CopyRun first = Copy(o);
    ASSERT_TRUE(first.result.ok()) << first.result.status().ToString();
    EXPECT_EQ(first.result->counts.rows_written, 200);
    o.transform_sql.clear();
    CopyRun second = Copy(o);
    ASSERT_TRUE(second.result.ok()) << Name(fmt) << ": " << second.result.status().ToString();
    EXPECT_EQ(second.result->counts.rows_skipped_existing, 200) << Name(fmt);
    EXPECT_EQ(second.result->counts.rows_written, 100) << Name(fmt);
    const std::string files = dst + "/*" + ExtensionOf(fmt);
    const std::string actual =
        fmt == FileFormat::kCsv ? "SELECT code, v FROM read_csv('" + files +
                                      "', types = {'code': 'VARCHAR', 'v': 'BIGINT'})"
        : fmt == FileFormat::kJson ? "SELECT code, v FROM read_json('" + files +
                                         "', columns = {'code': 'VARCHAR', 'v': 'BIGINT'})"
                                   : "SELECT code, v FROM read_parquet('" + files + "')";
    EXPECT_EQ(oracle_.Diff("SELECT code, v FROM '" + src + "'", actual), "") << Name(fmt);
  }
}

TEST_F(KeyedCopyTest, PartialFilesOfAKilledWriterAreIgnoredAndRemoved) {
  const std::string src = MakeSource(2, 100);
  const std::string dst = dir_ / "dst";
  std::filesystem::create_directories(dst);
  // What a SIGKILL mid-write leaves: a temporary holding a truncated Parquet file.
  std::ofstream(dst + "/_tmp-0123456789abcdef-part-x-000003.parquet.inprogress")
      << "PAR1 truncated";
  CopyRun run = Copy(Options(src, dst, {"id"}));
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_TRUE(run.HasEvent(KeyedEvent::Kind::kCleanup, "removed 1 partial file"))
      << run.EventsText();
  EXPECT_FALSE(
      std::filesystem::exists(dst + "/_tmp-0123456789abcdef-part-x-000003.parquet.inprogress"));
  EXPECT_EQ(oracle_.Diff(Source(src), ReadTarget(dst)), "");
}

TEST_F(KeyedCopyTest, SmallBatchesManyBucketsAndHashMatchingGiveTheSameRows) {
  const std::string src = dir_ / "src.parquet";
  oracle_.Exec(
      "COPY (SELECT 'https://example.com/' || (i * 7919 % 5000) AS url, i AS v FROM range(5000) "
      "t(i)) TO '" +
      src + "' (FORMAT parquet)");
  const std::string dst_exact = dir_ / "exact";
  const std::string dst_hash = dir_ / "hash";
  for (const auto& dst : {dst_exact, dst_hash}) {
    std::filesystem::create_directories(dst);
    oracle_.Exec("COPY (SELECT * FROM '" + src + "' WHERE v % 3 = 1) TO '" + dst +
                 "/old.parquet' (FORMAT parquet)");
  }
  KeyedCopyOptions exact = Options(src, dst_exact, {"url"});
  exact.keyed.batch_size = 7;
  exact.keyed.buckets = 3;
  exact.keyed.threads = 3;
  KeyedCopyOptions hashed = Options(src, dst_hash, {"url"});
  hashed.keyed.match = KeyMatch::kHash;
  for (const auto& o : {exact, hashed}) {
    CopyRun run = Copy(o);
    ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
    EXPECT_EQ(oracle_.Diff("SELECT * FROM '" + src + "'", ReadTarget(o.target)), "") << o.target;
  }
}

}  // namespace
}  // namespace thund::engine::keyed
