// Streaming, Recompute mode, end to end through NativeBackend::Run: for each
// output mode the result after all triggers equals the same query run as one
// batch by an independent DuckDB over the same rows, for several splittings
// of the stream into triggers; reruns continue without reading twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include <arrow/api.h>

#include "batch_fixture.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/io/parquet_io.h"
#include "thund/sql_pipeline.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;
using engine::testing::TablesEqualUnordered;

// event_time (timestamp[us, UTC], up to 4 s out of order), k (10 keys), v.
std::shared_ptr<arrow::Table> MakeEvents(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  arrow::StringBuilder k;
  arrow::Int64Builder v;
  const int64_t base = 1767225600LL * 1000000;  // 2026-01-01T00:00:00Z
  for (int64_t i = 0; i < n; ++i) {
    int64_t jitter = static_cast<int64_t>(rng() % 4000) * 1000;
    EXPECT_TRUE(ts.Append(base + i * 250000 - jitter).ok());
    EXPECT_TRUE(k.Append("k" + std::to_string(rng() % 10)).ok());
    EXPECT_TRUE(v.Append(static_cast<int64_t>(rng() % 1000) - 100).ok());
  }
  auto schema = arrow::schema({arrow::field("event_time", ts.type()),
                               arrow::field("k", arrow::utf8()), arrow::field("v", arrow::int64())});
  std::shared_ptr<arrow::Array> a, b, c;
  EXPECT_TRUE(ts.Finish(&a).ok());
  EXPECT_TRUE(k.Finish(&b).ok());
  EXPECT_TRUE(v.Finish(&c).ok());
  return arrow::Table::Make(schema, {a, b, c});
}

// Splits `t` into batches of the given sizes (the last size repeats).
std::vector<std::shared_ptr<arrow::RecordBatch>> Split(const std::shared_ptr<arrow::Table>& t,
                                                       std::vector<int64_t> sizes) {
  auto all = t->CombineChunksToBatch().ValueOrDie();
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  int64_t at = 0;
  size_t i = 0;
  while (at < all->num_rows()) {
    int64_t n = std::min(sizes[std::min(i, sizes.size() - 1)], all->num_rows() - at);
    out.push_back(all->Slice(at, n));
    at += n;
    ++i;
  }
  return out;
}

const char* kPipeline = R"sql(
CREATE STREAMING TABLE events AS SELECT * FROM STREAM read_memory('ev');

CREATE STREAMING TABLE filtered AS
SELECT k, v * 2 AS v2, event_time FROM STREAM(events) WHERE v % 3 <> 0;

CREATE STREAMING TABLE totals_complete WITH (output_mode = 'complete') AS
SELECT k, count(*) AS n, sum(v) AS s FROM STREAM(events) GROUP BY k;

CREATE STREAMING TABLE totals_update WITH (output_mode = 'update') AS
SELECT k, count(*) AS n, sum(v) AS s, max(v) AS top FROM STREAM(events) GROUP BY k;

CREATE STREAMING TABLE windows AS
SELECT k, window, count(*) AS n, sum(v) AS s FROM STREAM(events)
WATERMARK event_time DELAY OF INTERVAL 5 SECONDS
GROUP BY k, window(event_time, '10 seconds');

CREATE MATERIALIZED VIEW top_keys AS
SELECT k, n FROM totals_complete WHERE n >= 10;
)sql";

class StreamRecomputeTest : public BatchFixture {
 protected:

  // Writes all rows where the oracle reads them.
  std::string WriteAll(const std::shared_ptr<arrow::Table>& t) {
    std::string path = Path("all.parquet");
    EXPECT_TRUE(engine::WriteParquetFile(*t, path).ok());
    return "read_parquet(" + QuoteString(path) + ")";
  }

  void ExpectMatchesBatch(const std::string& all) {
    EXPECT_DATASET_MATCHES("events", "SELECT * FROM " + all);
    EXPECT_DATASET_MATCHES("filtered",
                           "SELECT k, v * 2 AS v2, event_time FROM " + all + " WHERE v % 3 <> 0");
    EXPECT_DATASET_MATCHES("totals_complete",
                           "SELECT k, count(*) AS n, sum(v) AS s FROM " + all + " GROUP BY k");
    EXPECT_DATASET_MATCHES("totals_update", "SELECT k, count(*) AS n, sum(v) AS s, max(v) AS top "
                                            "FROM " + all + " GROUP BY k");
    EXPECT_DATASET_MATCHES("top_keys", "SELECT k, count(*) AS n FROM " + all +
                                           " GROUP BY k HAVING count(*) >= 10");
    // Windows, computed by integer arithmetic on epoch microseconds: those the
    // final watermark (latest event time - 5 s) has closed. In-memory input
    // is per run, so its end does not close the others.
    auto actual = Oracle(
        "SELECT k, epoch_us(\"window\".start) AS ws, epoch_us(\"window\".\"end\") AS we, n, s "
        "FROM read_parquet(" + QuoteString(root() + "/windows/current/*.parquet") + ")");
    auto expected = Oracle(
        "WITH w AS (SELECT k, (epoch_us(event_time) // 10000000) * 10000000 AS ws, count(*) AS n, "
        "sum(v) AS s FROM " + all + " GROUP BY k, ws) "
        "SELECT k, ws, ws + 10000000 AS we, n, s FROM w "
        "WHERE ws + 10000000 <= (SELECT max(epoch_us(event_time)) - 5000000 FROM " + all + ")");
    ASSERT_TRUE(actual && expected);
    EXPECT_TRUE(TablesEqualUnordered(*expected, *actual, /*check_types=*/false));
  }
};

TEST_F(StreamRecomputeTest, EveryOutputModeEqualsTheBatchQueryForEverySplitting) {
  auto events = MakeEvents(600, 7);
  const std::string all = WriteAll(events);
  const std::vector<std::vector<int64_t>> splittings = {{600}, {7}, {1, 250, 3, 90, 40}};
  for (const auto& sizes : splittings) {
    SCOPED_TRACE("splitting starting with " + std::to_string(sizes[0]));
    std::filesystem::remove_all(root());
    RunOptions o;
    o.memory_streams["ev"] = Split(events, sizes);
    RunSummary s = Run(ParsePipeline(kPipeline), o);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    EXPECT_EQ(s.mode, "streaming (recompute)");
    ExpectMatchesBatch(all);
    int64_t triggers = 0;
    for (const auto& e : events_) {
      if (e.kind == RunEvent::Kind::kTrigger && e.flow == "events") ++triggers;
    }
    EXPECT_EQ(triggers, static_cast<int64_t>(o.memory_streams["ev"].size()));
    events_.clear();
  }
}

TEST_F(StreamRecomputeTest, MidStreamAppendEmitsOnlyClosedWindowsOnce) {
  auto events = MakeEvents(400, 11);
  const std::string all = WriteAll(events);
  RunOptions o;
  o.memory_streams["ev"] = Split(events, {20});
  o.max_triggers = 8;  // 160 of 400 rows: the stream has not ended
  RunSummary s = Run(ParsePipeline(kPipeline), o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  auto emitted = Oracle(
      "SELECT k, epoch_us(\"window\".start) AS ws, n, s FROM read_parquet(" +
      QuoteString(root() + "/windows/current/*.parquet") + ")");
  ASSERT_TRUE(emitted);
  ASSERT_GT(emitted->num_rows(), 0);
  // Every emitted window is final: equal to its value over the whole stream
  // (out-of-orderness 4 s < the 5 s allowed lateness), and emitted once.
  auto final_rows = Oracle(
      "WITH w AS (SELECT k, (epoch_us(event_time) // 10000000) * 10000000 AS ws, count(*) AS n, "
      "sum(v) AS s FROM " + all + " GROUP BY ALL) "
      "SELECT e.* FROM (SELECT k, epoch_us(\"window\".start) AS ws, n, s FROM read_parquet(" +
      QuoteString(root() + "/windows/current/*.parquet") + ")) e JOIN w USING (k, ws, n, s)");
  EXPECT_EQ(final_rows->num_rows(), emitted->num_rows());
  auto distinct = Oracle("SELECT DISTINCT k, \"window\" FROM read_parquet(" +
                         QuoteString(root() + "/windows/current/*.parquet") + ")");
  EXPECT_EQ(distinct->num_rows(), emitted->num_rows());
}

TEST_F(StreamRecomputeTest, RerunsContinueWhereTheLastCommitStopped) {
  auto events = MakeEvents(300, 5);
  const std::string all = WriteAll(events);
  auto batches = Split(events, {25});
  // Run 1 takes 4 batches; run 2 is given only the rest (memory streams are
  // per run) — together they must equal one run over everything.
  RunOptions first;
  first.memory_streams["ev"] = {batches.begin(), batches.begin() + 4};
  ASSERT_EQ(Run(ParsePipeline(kPipeline), first).status, RunPhase::kCompleted);
  RunOptions second;
  second.memory_streams["ev"] = {batches.begin() + 4, batches.end()};
  RunSummary s = Run(ParsePipeline(kPipeline), second);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  ExpectMatchesBatch(all);
}

TEST_F(StreamRecomputeTest, SeveralAppendFlowsAndAOnceBackfillFeedOneTable) {
  auto a = MakeEvents(120, 1), b = MakeEvents(90, 2), old = MakeEvents(30, 3);
  ASSERT_TRUE(engine::WriteParquetFile(*a, Path("a.parquet")).ok());
  ASSERT_TRUE(engine::WriteParquetFile(*b, Path("b.parquet")).ok());
  ASSERT_TRUE(engine::WriteParquetFile(*old, Path("old.parquet")).ok());
  const std::string sql =
      "CREATE STREAMING TABLE a AS SELECT * FROM STREAM read_memory('a');\n"
      "CREATE STREAMING TABLE b AS SELECT * FROM STREAM read_memory('b');\n"
      "CREATE STREAMING TABLE merged;\n"
      "CREATE FLOW from_a AS INSERT INTO merged BY NAME SELECT k, v, 'a' AS src FROM STREAM(a);\n"
      "CREATE FLOW from_b AS INSERT INTO merged BY NAME SELECT 'b' AS src, v, k FROM STREAM(b) "
      "WHERE v > 0;\n"
      "CREATE FLOW backfill AS INSERT INTO ONCE merged BY NAME SELECT k, v, 'old' AS src FROM "
      "read_parquet(" + QuoteString(Path("old.parquet")) + ");\n";
  const std::string expected =
      "SELECT k, v, 'a' AS src FROM read_parquet(" + QuoteString(Path("a.parquet")) +
      ") UNION ALL SELECT k, v, 'b' FROM read_parquet(" + QuoteString(Path("b.parquet")) +
      ") WHERE v > 0 UNION ALL SELECT k, v, 'old' FROM read_parquet(" +
      QuoteString(Path("old.parquet")) + ")";
  // Two runs, the streams split unevenly between them: the backfill runs once.
  auto sa = Split(a, {50, 7}), sb = Split(b, {13});
  RunOptions first, second;
  first.memory_streams["a"] = {sa.begin(), sa.begin() + 2};
  first.memory_streams["b"] = {sb.begin(), sb.begin() + 5};
  second.memory_streams["a"] = {sa.begin() + 2, sa.end()};
  second.memory_streams["b"] = {sb.begin() + 5, sb.end()};
  ASSERT_EQ(Run(ParsePipeline(sql), first).status, RunPhase::kCompleted);
  RunSummary s = Run(ParsePipeline(sql), second);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_DATASET_MATCHES("merged", expected);
}

TEST_F(StreamRecomputeTest, SummaryIsHonestAboutRecomputeMode) {
  auto events = MakeEvents(50, 3);
  RunOptions o;
  o.memory_streams["ev"] = Split(events, {50});
  RunSummary s = Run(ParsePipeline(kPipeline), o);
  ASSERT_EQ(s.status, RunPhase::kCompleted);
  bool advisory = false;
  for (const auto& n : s.notes) {
    if (n.find("flow 'windows'") != std::string::npos && n.find("advisory") != std::string::npos) {
      advisory = true;
    }
  }
  EXPECT_TRUE(advisory) << s.ToString();
  bool positions = false;
  for (const auto& e : events_) {
    if (e.kind == RunEvent::Kind::kTrigger && e.flow == "events") {
      positions = e.positions.count("events") > 0;
    }
  }
  EXPECT_TRUE(positions);
}

}  // namespace
}  // namespace thund::native::testing
