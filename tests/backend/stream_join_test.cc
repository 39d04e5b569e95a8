// The incremental mode's joins and deduplication end to end: results equal
// Recompute mode and the batch query on bounded streams, a rerun in pieces
// equals one run (the kept rows are committed state), a state TTL bounds an
// unbounded join, `thund explain` names each operator and its state, and the
// shapes they cannot run fall back (or fail) with their reason. The property
// test (stream_incremental_property_test.cc) covers random streams.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <random>
#include <regex>
#include <tuple>

#include <arrow/api.h>

#include "batch_fixture.h"
#include "event_rows.h"
#include "stream_test_helpers.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/stream/incremental_plan.h"
#include "sql/sql_analysis.h"
#include "thund/sql_pipeline.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;
using engine::testing::TablesEqualUnordered;

// Two bounded keyed streams with disorder, and a flow of each operator.
const char* kJoins = R"sql(
CREATE STREAMING TABLE l AS SELECT * FROM STREAM read_generator(kind => 'keyed_events',
  seed => 3, rows_per_batch => 250, total_rows => 2500, events_per_second => 100,
  out_of_orderness => '2s', keys => '7');
CREATE STREAMING TABLE r AS SELECT * FROM STREAM read_generator(kind => 'keyed_events',
  seed => 4, rows_per_batch => 200, total_rows => 2000, events_per_second => 80,
  out_of_orderness => '2s', keys => '5');

CREATE STREAMING TABLE window_join WITH (mode = '{mode}', watermark = 'event_time',
  allowed_lateness = '3 seconds') AS
SELECT a.window_start, a.key, count(*) AS n, sum(b.value) AS total
FROM TUMBLE(TABLE l, DESCRIPTOR(event_time), INTERVAL '5' SECONDS) AS a
JOIN TUMBLE(TABLE r, DESCRIPTOR(event_time), INTERVAL '5' SECONDS) AS b
  ON a.window_start = b.window_start AND a.key = b.key
GROUP BY a.window_start, a.key;

CREATE STREAMING TABLE interval_join WITH (mode = '{mode}', watermark = 'event_time',
  allowed_lateness = '3 seconds') AS
SELECT a.seq AS lseq, b.seq AS rseq, a.key
FROM STREAM(l) AS a JOIN STREAM(r) AS b
  ON a.key = b.key AND b.event_time BETWEEN a.event_time - INTERVAL '1' SECOND
                                         AND a.event_time + INTERVAL '2' SECONDS
WHERE a.value > b.value;

CREATE STREAMING TABLE equi_join WITH (mode = '{mode}') AS
SELECT a.seq AS lseq, b.seq AS rseq FROM STREAM(l) AS a JOIN STREAM(r) AS b
  ON a.key = b.key AND a.value = b.value;

CREATE STREAMING TABLE top_per_window WITH (mode = '{mode}', watermark = 'event_time',
  allowed_lateness = '3 seconds') AS
SELECT ws, key, value FROM (
  SELECT window_start AS ws, key, value,
         row_number() OVER (PARTITION BY window_start ORDER BY value DESC, seq) AS rn
  FROM TUMBLE(TABLE l, DESCRIPTOR(event_time), INTERVAL '10' SECONDS)) AS t
WHERE rn <= 3;

CREATE STREAMING TABLE distinct_values WITH (mode = '{mode}', watermark = 'event_time',
  allowed_lateness = '3 seconds') AS
SELECT DISTINCT key, value % 10 AS bucket FROM STREAM(l);

CREATE STREAMING TABLE first_per_key WITH (mode = '{mode}', watermark = 'event_time',
  allowed_lateness = '3 seconds') AS
SELECT key, seq FROM (
  SELECT *, row_number() OVER (PARTITION BY key ORDER BY event_time) AS rn FROM STREAM(l)) AS f
WHERE rn = 1;
)sql";

const std::vector<std::string> kFlows = {"window_join",   "interval_join",   "equi_join",
                                         "top_per_window", "distinct_values", "first_per_key"};

class StreamJoinTest : public BatchFixture {
 protected:
  // `index`: unbounded joins hash their kept rows by key (join_index.h), or
  // bind every kept row, the plain twin.
  RunSummary RunAt(const std::string& mode, const std::string& storage, int64_t triggers = 0,
                   bool index = true) {
    std::string sql = kJoins;
    for (size_t at; (at = sql.find("{mode}")) != std::string::npos;) sql.replace(at, 6, mode);
    RunOptions o;
    o.storage_root = storage;
    o.max_triggers = triggers;
    o.native.join_index = index;
    return Run(ParsePipeline(sql), o);
  }
  std::shared_ptr<arrow::Table> Read(const std::string& storage, const std::string& dataset) {
    return Oracle("SELECT * FROM read_parquet(" +
                  QuoteString(storage + "/" + dataset + "/current/*.parquet") + ")");
  }
};

TEST_F(StreamJoinTest, EveryOperatorEqualsRecomputeAndTheBatchQuery) {
  const std::string inc = Path("inc"), rec = Path("rec");
  RunSummary a = RunAt("incremental", inc);
  ASSERT_EQ(a.status, RunPhase::kCompleted) << a.ToString();
  for (const auto& e : events_) ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
  // The late rows the incremental mode dropped: none is later than the
  // generator's disorder (2 s) behind the lateness (3 s).
  for (const auto& e : events_) EXPECT_NE(e.kind, RunEvent::Kind::kLateRows) << e.message;
  events_.clear();
  RunSummary b = RunAt("recompute", rec);
  ASSERT_EQ(b.status, RunPhase::kCompleted) << b.ToString();
  for (const auto& flow : kFlows) {
    SCOPED_TRACE(flow);
    auto x = Read(inc, flow), y = Read(rec, flow);
    ASSERT_TRUE(x && y);
    EXPECT_GT(x->num_rows(), 0);
    if (flow != "top_per_window" && flow != "first_per_key") {
      // (Recompute's Append keeps rows that a later row displaced from a
      // top-N or a first row: only the batch query below is their oracle.)
      EXPECT_TRUE(TablesEqualUnordered(*y, *x, /*check_types=*/false));
    }
  }
  // The batch queries, over every row of the inputs.
  const std::string l = StoredRows(inc, "l"), r = StoredRows(inc, "r");
  auto first = Oracle("SELECT key, seq FROM (SELECT *, row_number() OVER (PARTITION BY key "
                      "ORDER BY event_time) AS rn FROM " + l + ") WHERE rn = 1");
  EXPECT_TRUE(TablesEqualUnordered(*first, *Read(inc, "first_per_key"), false));
  auto top = Oracle("SELECT ws, key, value FROM (SELECT *, row_number() OVER (PARTITION BY ws "
                    "ORDER BY value DESC, seq) AS rn FROM (SELECT *, time_bucket(INTERVAL 10 "
                    "SECONDS, event_time::TIMESTAMP) AS ws FROM " + l + ")) WHERE rn <= 3");
  auto top_out = Oracle("SELECT ws::TIMESTAMP AS ws, key, value FROM " +
                        StoredRows(inc, "top_per_window"));
  EXPECT_TRUE(TablesEqualUnordered(*top, *top_out, false));
  auto interval = Oracle(
      "SELECT a.seq AS lseq, b.seq AS rseq, a.key FROM " + l + " AS a JOIN " + r + " AS b ON "
      "a.key = b.key AND epoch_us(b.event_time) BETWEEN epoch_us(a.event_time) - 1000000 AND "
      "epoch_us(a.event_time) + 2000000 WHERE a.value > b.value");
  EXPECT_TRUE(TablesEqualUnordered(*interval, *Read(inc, "interval_join"), false));
}

TEST_F(StreamJoinTest, ARerunInPiecesEqualsOneRun) {
  const std::string once = Path("once"), pieces = Path("pieces");
  ASSERT_EQ(RunAt("incremental", once).status, RunPhase::kCompleted);
  for (int64_t triggers : {3, 2, 0}) {
    RunSummary s = RunAt("incremental", pieces, triggers);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  }
  for (const auto& flow : kFlows) {
    SCOPED_TRACE(flow);
    auto x = Read(once, flow), y = Read(pieces, flow);
    ASSERT_TRUE(x && y);
    EXPECT_TRUE(TablesEqualUnordered(*x, *y, false));
  }
}

// The join index against its plain twin: one run and a run in pieces (the
// index is rebuilt from the restored kept rows), and random rows with NULL
// keys and values, joined on a string key and on an integer key with more
// conditions; Recompute mode as the oracle of the random rows.
TEST_F(StreamJoinTest, TheJoinIndexGivesTheRowsOfEveryKeptRow) {
  const std::string plain = Path("plain"), indexed = Path("indexed"), pieces = Path("ipieces");
  ASSERT_EQ(RunAt("incremental", plain, 0, /*index=*/false).status, RunPhase::kCompleted);
  ASSERT_EQ(RunAt("incremental", indexed, 0, /*index=*/true).status, RunPhase::kCompleted);
  for (int64_t triggers : {3, 2, 0}) {
    RunSummary s = RunAt("incremental", pieces, triggers, /*index=*/true);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  }
  for (const auto& flow : kFlows) {
    SCOPED_TRACE(flow);
    auto x = Read(plain, flow), y = Read(indexed, flow), z = Read(pieces, flow);
    ASSERT_TRUE(x && y && z);
    EXPECT_TRUE(TablesEqualUnordered(*x, *y, true));
    EXPECT_TRUE(TablesEqualUnordered(*x, *z, false));
  }

  constexpr const char* kSql = R"sql(
CREATE STREAMING TABLE a AS SELECT * FROM STREAM read_memory('a');
CREATE STREAMING TABLE b AS SELECT * FROM STREAM read_memory('b');
CREATE STREAMING TABLE by_key WITH (mode = '{mode}') AS
SELECT x.v AS xv, y.v AS yv, x.k FROM STREAM(a) AS x JOIN STREAM(b) AS y ON x.k = y.k;
CREATE STREAMING TABLE by_value WITH (mode = '{mode}') AS
SELECT x.k AS xk, y.k AS yk, y.v FROM STREAM(a) AS x JOIN STREAM(b) AS y
  ON y.v = x.v AND x.k < y.k;
CREATE STREAMING TABLE filtered WITH (mode = '{mode}') AS
SELECT x.v AS xv, y.v AS yv, x.k FROM STREAM(a) AS x JOIN STREAM(b) AS y
  ON x.k = y.k AND y.v % 3 <> 0
WHERE x.v > 4 AND (x.k = 'a' OR x.k = 'b' OR x.v IS NULL) AND x.v + y.v > 6;
)sql";
  // Which sides get a key: both of an equi-join of the scans' own columns.
  {
    std::string sql = kSql;
    for (size_t at; (at = sql.find("{mode}")) != std::string::npos;) sql.replace(at, 6, "incremental");
    const Pipeline p = ParsePipeline(sql);
    for (const auto& [flow, keys] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"by_key", {"k", "k"}}, {"by_value", {"v", "v"}}, {"filtered", {"k", "k"}}}) {
      auto root = sql::PlanQuery(p.FindFlow(flow)->sql);
      ASSERT_TRUE(root.ok());
      auto planned = engine::stream::PlanFlowIncremental(p, *p.FindFlow(flow), **root, "__s");
      ASSERT_TRUE(planned.ok());
      ASSERT_EQ(planned->plan.reach.size(), 2u);
      EXPECT_EQ(planned->plan.reach[0].join_key, keys[0]) << flow;
      EXPECT_EQ(planned->plan.reach[1].join_key, keys[1]) << flow;
      // The conditions on one side alone (WHERE, and ON besides the key) filter
      // that side's rows before they are kept; x.v + y.v reads both.
      const bool filtered = flow == "filtered";
      EXPECT_EQ(planned->plan.reach[0].keep_sql,
                filtered ? "((x.v > 4)) AND (((x.k = 'a') OR (x.k = 'b') OR (x.v IS NULL)))"
                         : "")
          << flow;
      EXPECT_EQ(planned->plan.reach[1].keep_sql, filtered ? "(((y.v % 3) != 0))" : "") << flow;
    }
  }
  int with_rows = 0;
  for (uint32_t seed : {5u, 6u, 7u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::map<std::string, std::vector<std::shared_ptr<arrow::RecordBatch>>> feeds;
    for (const char* name : {"a", "b"}) {
      for (int t = 0; t < 5; ++t) {
        std::vector<EventRow> rows;
        for (int i = static_cast<int>(rng() % 40); i > 0; --i) {
          EventRow r;
          r.ts = 1767225600LL * 1000000 + static_cast<int64_t>(rng() % 100000000);
          if (rng() % 7 != 0) r.k = std::string(1, static_cast<char>('a' + rng() % 6));
          if (rng() % 7 != 0) r.v = static_cast<int64_t>(rng() % 12);
          rows.push_back(r);
        }
        feeds[name].push_back(EventBatch(rows));
      }
    }
    std::map<std::string, std::string> stores;
    // Both fast paths off, the index alone, both on, and Recompute.
    for (const auto& [way, mode, index, prefilter] :
         std::vector<std::tuple<std::string, std::string, bool, bool>>{
             {"plain", "incremental", false, false}, {"index", "incremental", true, false},
             {"both", "incremental", true, true}, {"recompute", "recompute", true, true}}) {
      std::string sql = kSql;
      for (size_t at; (at = sql.find("{mode}")) != std::string::npos;) sql.replace(at, 6, mode);
      RunOptions o;
      o.storage_root = stores[way] = Path("mem" + std::to_string(seed) + way);
      o.memory_streams = feeds;
      o.native.join_index = index;
      o.native.join_prefilter = prefilter;
      RunSummary s = Run(ParsePipeline(sql), o);
      ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    }
    for (const std::string flow : {"by_key", "by_value", "filtered"}) {
      SCOPED_TRACE(flow);
      const bool has = std::filesystem::exists(stores["recompute"] + "/" + flow + "/current");
      ASSERT_EQ(std::filesystem::exists(stores["index"] + "/" + flow + "/current"), has);
      if (!has) continue;
      ++with_rows;
      auto expected = Read(stores["recompute"], flow);
      EXPECT_TRUE(TablesEqualUnordered(*expected, *Read(stores["index"], flow), false));
      EXPECT_TRUE(TablesEqualUnordered(*expected, *Read(stores["plain"], flow), false));
      EXPECT_TRUE(TablesEqualUnordered(*expected, *Read(stores["both"], flow), false));
    }
  }
  EXPECT_GT(with_rows, 0);
}

TEST_F(StreamJoinTest, TimeBoundsAndStateTtlBoundTheKeptRows) {
  ASSERT_EQ(RunAt("incremental", Path("bounded")).status, RunPhase::kCompleted);
  // The interval join keeps a few seconds of each side; the unbounded join
  // keeps every row (4,500 at the end, less what the last trigger cleared).
  const int64_t interval = MaxStateRows(events_, "interval_join"), equi = MaxStateRows(events_, "equi_join");
  ASSERT_GT(interval, 0);
  EXPECT_LT(interval, 1500);
  EXPECT_GT(equi, 3500);
  // With a TTL of 2 s of event time, rows older than W - 2 s leave.
  std::string sql = std::string(kJoins);
  sql = sql.substr(0, sql.find("CREATE STREAMING TABLE window_join"));
  sql += "CREATE STREAMING TABLE ttl_join WITH (mode = 'incremental', watermark = 'event_time', "
         "allowed_lateness = '3 seconds', state_ttl = '2 seconds') AS SELECT a.seq AS lseq, "
         "b.seq AS rseq FROM STREAM(l) AS a JOIN STREAM(r) AS b ON a.key = b.key AND "
         "a.value = b.value;";
  events_.clear();
  RunOptions o;
  o.storage_root = Path("ttl");
  RunSummary s = Run(ParsePipeline(sql), o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  const int64_t ttl = MaxStateRows(events_, "ttl_join");
  ASSERT_GT(ttl, 0);
  EXPECT_LT(ttl, 2000);
  // What it joined is a subset of the full join: pairs within the TTL.
  auto missing = Oracle("SELECT count(*) AS n FROM (SELECT * FROM " +
                        StoredRows(Path("ttl"), "ttl_join") +
                        " EXCEPT ALL SELECT * FROM " + StoredRows(Path("bounded"), "equi_join") + ")");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->column(0)->GetScalar(0).ValueOrDie()->ToString(), "0");
}

// Rows at the given seconds after 2026-01-01 with key `k` and values v0,
// v0 + 1, ...
std::shared_ptr<arrow::RecordBatch> At(const std::vector<int64_t>& seconds, const std::string& k,
                                       int64_t v0 = 0) {
  std::vector<EventRow> rows;
  for (size_t i = 0; i < seconds.size(); ++i) {
    EventRow r;
    r.ts = (1767225600LL + seconds[i]) * 1000000;
    r.k = k;
    r.v = v0 + static_cast<int64_t>(i);
    rows.push_back(r);
  }
  return EventBatch(rows);
}

TEST_F(StreamJoinTest, AnIdleSideHoldsTheStateAndLateRowsOnEitherSideAreDropped) {
  const char* sql = R"sql(
CREATE STREAMING TABLE a AS SELECT * FROM STREAM read_memory('a');
CREATE STREAMING TABLE b AS SELECT * FROM STREAM read_memory('b');
CREATE STREAMING TABLE out WITH (mode = 'incremental', watermark = 'ts',
  allowed_lateness = '1 second', trigger = 'processing_time(1ms)') AS
SELECT epoch_us(x.ts) AS ta, epoch_us(y.ts) AS tb, x.v AS va, y.v AS vb
FROM STREAM(a) AS x JOIN STREAM(b) AS y
  ON x.k = y.k AND y.ts BETWEEN x.ts - INTERVAL '2' SECONDS AND x.ts;
)sql";
  RunOptions o;
  // b says nothing for three triggers: W stays at b's 2 s - 1 s, so a's rows
  // wait for it. a's row at 0 s in the last trigger, and b's at 1 s there,
  // are behind W (by then 3 s) and dropped.
  o.memory_streams["a"] = {At({1, 2, 3}, "k"), At({4, 5, 6}, "k"), At({7, 8, 9}, "k"),
                           At({10, 11}, "k"), At({0, 12}, "k", 100)};
  o.memory_streams["b"] = {At({1, 2}, "k"), At({}, "k"), At({}, "k"), At({3, 4, 9, 10}, "k"),
                           At({1, 11}, "k", 100)};
  RunSummary s = Run(ParsePipeline(sql), o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  int64_t late = 0;
  for (const auto& e : events_) {
    ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
    if (e.kind == RunEvent::Kind::kLateRows) late += e.count;
  }
  EXPECT_EQ(late, 2);
  // The batch join over the rows that were not late.
  const std::string base = "1767225600000000";
  auto rows = [&](const std::string& name) {
    return "(SELECT * FROM read_parquet(" + QuoteString(root() + "/" + name +
           "/current/*.parquet") + ") WHERE NOT (v = 100 AND epoch_us(ts) < " + base +
           " + 3000000))";
  };
  EXPECT_DATASET_MATCHES(
      "out", "SELECT epoch_us(x.ts) AS ta, epoch_us(y.ts) AS tb, x.v AS va, y.v AS vb FROM " +
                 rows("a") + " AS x JOIN " + rows("b") + " AS y ON x.k = y.k AND "
                 "epoch_us(y.ts) BETWEEN epoch_us(x.ts) - 2000000 AND epoch_us(x.ts)");
}

TEST_F(StreamJoinTest, TheJoinsExampleEqualsRecomputeAndTheBatchQuery) {
  std::ifstream in(std::string(THUND_SOURCE_DIR) + "/examples/streaming/joins.sql");
  std::stringstream text;
  text << in.rdbuf();
  std::map<std::string, std::string> roots;
  for (const std::string mode : {"incremental", "recompute"}) {
    std::string sql = text.str();
    const std::string from = "mode = 'incremental'", to = "mode = '" + mode + "'";
    for (size_t at = 0; (at = sql.find(from, at)) != std::string::npos; at += to.size()) {
      sql.replace(at, from.size(), to);
    }
    RunOptions o;
    roots[mode] = o.storage_root = Path(mode);
    events_.clear();
    RunSummary s = Run(ParsePipeline(sql), o);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    for (const auto& e : events_) ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
  }
  for (const std::string flow : {"new_sellers", "early_bids"}) {
    SCOPED_TRACE(flow);
    auto x = Read(roots["incremental"], flow), y = Read(roots["recompute"], flow);
    ASSERT_TRUE(x && y);
    EXPECT_GT(x->num_rows(), 0);
    EXPECT_TRUE(TablesEqualUnordered(*y, *x, false));
  }
  auto first = Oracle("SELECT bidder, auction, price, date_time FROM (SELECT *, row_number() "
                      "OVER (PARTITION BY bidder ORDER BY date_time) AS rn FROM " +
                      StoredRows(roots["incremental"], "bids") + ") WHERE rn = 1");
  EXPECT_TRUE(TablesEqualUnordered(*first, *Read(roots["incremental"], "first_bids"), false));
}

TEST_F(StreamJoinTest, ExplainNamesEachOperatorAndItsState) {
  std::string sql = kJoins;
  for (size_t at; (at = sql.find("{mode}")) != std::string::npos;) {
    sql.replace(at, 6, "incremental");
  }
  Pipeline p = ParsePipeline(sql);
  const std::map<std::string, std::string> expected = {
      {"window_join", "window join: joins each closed window's rows of both sides"},
      {"interval_join", "stream interval join"},
      {"equi_join", "grows with the stream unless the flow sets state_ttl"},
      {"top_per_window", "per stream input, the rows of windows still open"},
      {"distinct_values", "deduplication: each trigger emits its distinct rows"},
      {"first_per_key", "first row per key"}};
  for (const auto& [flow, text] : expected) {
    SCOPED_TRACE(flow);
    const std::string out = ExplainIncremental(p, flow);
    EXPECT_NE(out.find(text), std::string::npos) << out;
  }
}

TEST_F(StreamJoinTest, ShapesOutsideTheOperatorsFallBackWithTheirReason) {
  const std::string base = std::string(kJoins).substr(
      0, std::string(kJoins).find("CREATE STREAMING TABLE window_join"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"SELECT a.seq, b.seq AS s2 FROM STREAM(l) AS a LEFT JOIN STREAM(r) AS b ON a.key = b.key",
       "left join of two streams"},
      {"SELECT a.seq, b.seq AS s2 FROM STREAM(l) AS a JOIN STREAM(l) AS b ON a.key = b.key",
       "self-join"},
      {"SELECT a.window_start, count(*) AS n FROM TUMBLE(TABLE l, DESCRIPTOR(event_time), "
       "INTERVAL '5' SECONDS) AS a JOIN TUMBLE(TABLE r, DESCRIPTOR(event_time), INTERVAL '6' "
       "SECONDS) AS b ON a.window_start = b.window_start GROUP BY a.window_start",
       "windowed differently"},
  };
  for (const auto& [query, reason] : cases) {
    SCOPED_TRACE(query);
    const std::string sql = base + "CREATE STREAMING TABLE out WITH (mode = 'incremental', "
                                   "watermark = 'event_time', allowed_lateness = '1 second') AS " +
                            query + ";";
    events_.clear();
    RunOptions o;
    o.storage_root = Path("fallback");
    std::filesystem::remove_all(o.storage_root);
    RunSummary s = Run(ParsePipeline(sql), o);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    bool fell_back = false;
    for (const auto& e : events_) {
      if (e.kind != RunEvent::Kind::kFallback) continue;
      fell_back = true;
      EXPECT_NE(e.message.find(reason), std::string::npos) << e.message;
    }
    EXPECT_TRUE(fell_back);
  }
  // A TTL needs event time to measure it by.
  const std::string sql = base + "CREATE STREAMING TABLE out WITH (mode = 'incremental', "
                                 "state_ttl = '5 seconds') AS SELECT a.seq, b.seq AS s2 FROM "
                                 "STREAM(l) AS a JOIN STREAM(r) AS b ON a.key = b.key;";
  RunOptions o;
  o.storage_root = Path("ttl_without_watermark");
  RunSummary s = Run(ParsePipeline(sql), o);
  EXPECT_EQ(s.status, RunPhase::kFailed) << s.ToString();
  EXPECT_NE(s.ToString().find("state_ttl measures event time"), std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace thund::native::testing
