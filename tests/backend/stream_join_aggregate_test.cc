// Aggregations over a join of two streams, and outer queries over an
// aggregation (Nexmark q4: the average of each category's auctions' highest
// bids), in the incremental mode: results equal Recompute mode and the batch
// query; a rerun in pieces equals one run (kept rows and partials are state);
// a time bound between a bid and its auction's start and expiry evicts rows;
// `thund explain` names the operators; the shapes outside them fall back with
// their reason. Random streams with NULL keys and values run with the join's
// fast paths on and off against Recompute.
#include <gtest/gtest.h>

#include <filesystem>
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

// Nexmark auctions and bids, disordered by up to 1 s; the watermark allows
// 2 s, so no row is late and Recompute sees the same rows. 12,000 events of
// 240 s of event time in 24 triggers; auctions live 10 to 120 s.
const char* kNexmark = R"sql(
CREATE STREAMING TABLE auctions AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_auction', seed => 11, rows_per_batch => 500, total_rows => 12000,
  events_per_second => 50, out_of_orderness => '1s');
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 11, rows_per_batch => 500, total_rows => 12000, events_per_second => 50,
  out_of_orderness => '1s');

CREATE STREAMING TABLE q4 WITH (mode = '{mode}', output_mode = 'complete',
  watermark = 'date_time', allowed_lateness = '2 seconds') AS
SELECT Q.category, avg(Q.final) AS avg
FROM (
  SELECT max(B.price) AS final, A.category
  FROM STREAM(auctions) A, STREAM(bids) B
  WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
  GROUP BY A.id, A.category
) Q
GROUP BY Q.category;

CREATE STREAMING TABLE q4_cte WITH (mode = '{mode}', output_mode = 'complete',
  watermark = 'date_time', allowed_lateness = '2 seconds') AS
WITH closing AS (
  SELECT A.id, A.category, max(B.price) AS final
  FROM STREAM(auctions) AS A JOIN STREAM(bids) AS B ON A.id = B.auction
  WHERE B.date_time BETWEEN A.date_time AND A.expires
  GROUP BY A.id, A.category)
SELECT category, avg(final) AS avg FROM closing GROUP BY category;

CREATE STREAMING TABLE in_time WITH (mode = '{mode}', output_mode = 'complete',
  watermark = 'date_time', allowed_lateness = '2 seconds') AS
SELECT A.category, count(*) AS bids, sum(B.price) AS total
FROM STREAM(auctions) A, STREAM(bids) B
WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
GROUP BY A.category;

CREATE STREAMING TABLE per_category WITH (mode = '{mode}', output_mode = 'complete') AS
SELECT A.category, count(*) AS bids, max(B.price) AS top, sum(B.price) AS total
FROM STREAM(auctions) AS A JOIN STREAM(bids) AS B ON A.id = B.auction
WHERE B.price > 1000
GROUP BY A.category;

CREATE STREAMING TABLE busy_sellers WITH (mode = '{mode}', output_mode = 'complete') AS
SELECT count(*) AS sellers, max(n) AS most, sum(n) AS auctions
FROM (SELECT seller, count(*) AS n FROM STREAM(auctions) GROUP BY seller) AS s
WHERE n > 1;
)sql";

const std::vector<std::string> kFlows = {"q4", "q4_cte", "in_time", "per_category",
                                         "busy_sellers"};

class StreamJoinAggregateTest : public BatchFixture {
 protected:
  RunSummary RunAt(const std::string& mode, const std::string& storage, int64_t triggers = 0,
                   bool index = true, bool prefilter = true) {
    RunOptions o;
    o.storage_root = storage;
    o.max_triggers = triggers;
    o.native.join_index = index;
    o.native.join_prefilter = prefilter;
    return Run(ParsePipeline(With(kNexmark, mode)), o);
  }
  static std::string With(std::string sql, const std::string& mode) {
    for (size_t at; (at = sql.find("{mode}")) != std::string::npos;) sql.replace(at, 6, mode);
    return sql;
  }
  std::shared_ptr<arrow::Table> Read(const std::string& storage, const std::string& dataset) {
    return Oracle("SELECT * FROM " + StoredRows(storage, dataset));
  }
};

TEST_F(StreamJoinAggregateTest, EqualsRecomputeAndTheBatchQuery) {
  const std::string inc = Path("inc"), rec = Path("rec");
  RunSummary a = RunAt("incremental", inc);
  ASSERT_EQ(a.status, RunPhase::kCompleted) << a.ToString();
  for (const auto& e : events_) {
    ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
    EXPECT_NE(e.kind, RunEvent::Kind::kLateRows) << e.message;
  }
  events_.clear();
  RunSummary b = RunAt("recompute", rec);
  ASSERT_EQ(b.status, RunPhase::kCompleted) << b.ToString();
  for (const auto& flow : kFlows) {
    SCOPED_TRACE(flow);
    auto x = Read(inc, flow), y = Read(rec, flow);
    ASSERT_TRUE(x && y);
    EXPECT_GT(x->num_rows(), 0);
    EXPECT_TRUE(TablesEqualUnordered(*y, *x, /*check_types=*/false));
  }
  // The batch queries over every stored input row, by an independent DuckDB.
  const std::string au = StoredRows(inc, "auctions"), bi = StoredRows(inc, "bids");
  auto q4 = Oracle("SELECT category, avg(final) AS avg FROM (SELECT max(B.price) AS final, "
                   "A.category FROM " + au + " A, " + bi + " B WHERE A.id = B.auction AND "
                   "B.date_time BETWEEN A.date_time AND A.expires GROUP BY A.id, A.category) "
                   "GROUP BY category");
  ASSERT_TRUE(q4);
  EXPECT_GT(q4->num_rows(), 1);
  EXPECT_TRUE(TablesEqualUnordered(*q4, *Read(inc, "q4"), false));
  EXPECT_TRUE(TablesEqualUnordered(*q4, *Read(inc, "q4_cte"), false));
  auto in_time = Oracle("SELECT A.category, count(*) AS bids, sum(B.price) AS total FROM " + au +
                        " A, " + bi + " B WHERE A.id = B.auction AND B.date_time BETWEEN "
                        "A.date_time AND A.expires GROUP BY A.category");
  EXPECT_TRUE(TablesEqualUnordered(*in_time, *Read(inc, "in_time"), false));
  auto per = Oracle("SELECT A.category, count(*) AS bids, max(B.price) AS top, sum(B.price) AS "
                    "total FROM " + au + " A JOIN " + bi + " B ON A.id = B.auction WHERE "
                    "B.price > 1000 GROUP BY A.category");
  EXPECT_TRUE(TablesEqualUnordered(*per, *Read(inc, "per_category"), false));
  auto busy = Oracle("SELECT count(*) AS sellers, max(n) AS most, sum(n) AS auctions FROM "
                     "(SELECT seller, count(*) AS n FROM " + au + " GROUP BY seller) WHERE n > 1");
  EXPECT_TRUE(TablesEqualUnordered(*busy, *Read(inc, "busy_sellers"), false));
}

TEST_F(StreamJoinAggregateTest, ARerunInPiecesEqualsOneRunWithTheFastPathsOnOrOff) {
  const std::string once = Path("once");
  ASSERT_EQ(RunAt("incremental", once).status, RunPhase::kCompleted);
  // In pieces, the join's index and prefilter switched between pieces (the
  // state fits either way), and both off in one run.
  const std::string pieces = Path("pieces"), plain = Path("plain");
  int piece = 0;
  for (int64_t triggers : {3, 4, 0}) {
    RunSummary s = RunAt("incremental", pieces, triggers, piece % 2 == 0, piece % 2 == 1);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    ++piece;
  }
  ASSERT_EQ(RunAt("incremental", plain, 0, false, false).status, RunPhase::kCompleted);
  for (const auto& flow : kFlows) {
    SCOPED_TRACE(flow);
    auto x = Read(once, flow);
    ASSERT_TRUE(x);
    EXPECT_TRUE(TablesEqualUnordered(*x, *Read(pieces, flow), false));
    EXPECT_TRUE(TablesEqualUnordered(*x, *Read(plain, flow), false));
  }
}

TEST_F(StreamJoinAggregateTest, TheTimeBoundEvictsEndedAuctionsAndOldBids) {
  ASSERT_EQ(RunAt("incremental", Path("bounded")).status, RunPhase::kCompleted);
  // q4 keeps the auctions not yet expired and the bids a later auction can
  // still start before; per_category (no time bound) keeps every row of both
  // sides but its prefilter's (price > 1000), and the partials.
  const int64_t q4 = MaxStateRows(events_, "q4"), per = MaxStateRows(events_, "per_category");
  ASSERT_GT(q4, 0);
  ASSERT_GT(per, 0);
  auto kept = Oracle("SELECT (SELECT count(*) FROM " + StoredRows(Path("bounded"), "auctions") +
                     ") + (SELECT count(*) FROM " + StoredRows(Path("bounded"), "bids") +
                     " WHERE price > 1000) AS n");
  ASSERT_TRUE(kept);
  const int64_t all = std::stoll(kept->column(0)->GetScalar(0).ValueOrDie()->ToString());
  EXPECT_GT(per, all / 2);
  EXPECT_LT(q4, per / 2);
  // The plan says how long each side's rows are kept, and what runs where.
  const Pipeline p = ParsePipeline(With(kNexmark, "incremental"));
  const std::string q4_plan = ExplainIncremental(p, "q4");
  EXPECT_NE(q4_plan.find("outer query"), std::string::npos) << q4_plan;
  EXPECT_NE(q4_plan.find("bids: rows while date_time + 0 ms >= W"), std::string::npos)
      << q4_plan;
  EXPECT_NE(q4_plan.find("auctions: rows while expires + 0 ms >= W"), std::string::npos)
      << q4_plan;
  EXPECT_NE(q4_plan.find("pre-aggregates each trigger's new joined rows"), std::string::npos)
      << q4_plan;
  // FROM a, b WHERE a.id = b.auction: the WHERE's equality keys the sides
  // as an ON would (used when they are kept without a bound).
  {
    const Flow* f = p.FindFlow("q4");
    auto root = sql::PlanQuery(f->sql);
    ASSERT_TRUE(root.ok());
    auto planned = engine::stream::PlanFlowIncremental(p, *f, **root, "__s");
    ASSERT_TRUE(planned.ok());
    ASSERT_EQ(planned->plan.reach.size(), 2u);
    for (const auto& r : planned->plan.reach) {
      EXPECT_EQ(r.join_key, r.input == "auctions" ? "id" : "auction") << r.input;
    }
  }
  const std::string per_plan = ExplainIncremental(p, "per_category");
  EXPECT_NE(per_plan.find("hashed by"), std::string::npos) << per_plan;
  EXPECT_EQ(per_plan.find("outer query"), std::string::npos) << per_plan;
}

TEST_F(StreamJoinAggregateTest, ShapesOutsideTheOperatorsSayWhy) {
  const std::string sql = R"sql(
CREATE STREAMING TABLE a AS SELECT * FROM STREAM read_memory('a');
CREATE STREAMING TABLE b AS SELECT * FROM STREAM read_memory('b');
CREATE STREAMING TABLE upd WITH (mode = 'incremental', output_mode = 'update') AS
SELECT count(*) AS n FROM (SELECT k, sum(v) AS s FROM STREAM(a) GROUP BY k) t;
CREATE STREAMING TABLE med WITH (mode = 'incremental', output_mode = 'complete') AS
SELECT avg(m) AS am FROM (SELECT k, median(v) AS m FROM STREAM(a) GROUP BY k) t;
CREATE STREAMING TABLE distinct_join WITH (mode = 'incremental', output_mode = 'complete') AS
SELECT x.k, count(DISTINCT y.v) AS n FROM STREAM(a) x JOIN STREAM(b) y ON x.k = y.k
GROUP BY x.k;
)sql";
  const Pipeline p = ParsePipeline(sql);
  // Planned, but the update mode is refused at run time (below).
  EXPECT_NE(ExplainIncremental(p, "upd").find("outer query"), std::string::npos);
  const std::string med = ExplainIncremental(p, "med");
  EXPECT_NE(med.find("falls back to Recompute"), std::string::npos) << med;
  EXPECT_NE(med.find("median"), std::string::npos) << med;
  const std::string dj = ExplainIncremental(p, "distinct_join");
  EXPECT_NE(dj.find("falls back to Recompute"), std::string::npos) << dj;
  EXPECT_NE(dj.find("keeps rows"), std::string::npos) << dj;

  std::map<std::string, std::vector<std::shared_ptr<arrow::RecordBatch>>> feeds;
  feeds["a"] = {EventBatch({{1767225600000000LL, std::string("x"), 1}})};
  feeds["b"] = {EventBatch({{1767225600000000LL, std::string("x"), 2}})};
  RunOptions o;
  o.storage_root = Path("why");
  o.memory_streams = feeds;
  RunSummary s = Run(p, o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  bool upd_falls_back = false;
  for (const auto& e : events_) {
    if (e.kind == RunEvent::Kind::kFallback && e.flow == "upd") {
      upd_falls_back = e.message.find("update mode") != std::string::npos;
    }
  }
  EXPECT_TRUE(upd_falls_back);
  // Recompute gives every flow its result all the same.
  auto upd = Read(Path("why"), "upd");
  ASSERT_TRUE(upd);
  EXPECT_EQ(upd->num_rows(), 1);
}

// Random rows with NULL keys, values and times, in five triggers per stream,
// through aggregations over a join (Complete and Update), an outer query over
// a join aggregation with a time bound, and outer queries over an aggregation
// of one stream; the join's fast paths on and off, against Recompute.
TEST_F(StreamJoinAggregateTest, RandomStreamsEqualRecompute) {
  constexpr const char* kSql = R"sql(
CREATE STREAMING TABLE a AS SELECT * FROM STREAM read_memory('a');
CREATE STREAMING TABLE b AS SELECT * FROM STREAM read_memory('b');
CREATE STREAMING TABLE joined WITH (mode = '{mode}', output_mode = 'complete') AS
SELECT x.k, count(*) AS n, sum(y.v) AS s, max(x.v) AS mx, avg(y.v) AS av,
       count(y.v) FILTER (WHERE y.v > 5) AS big
FROM STREAM(a) AS x JOIN STREAM(b) AS y ON x.k = y.k
GROUP BY x.k;
CREATE STREAMING TABLE joined_update WITH (mode = '{mode}', output_mode = 'update') AS
SELECT x.v AS xv, count(*) AS n, min(y.k) AS first_key
FROM STREAM(a) AS x JOIN STREAM(b) AS y ON x.v = y.v AND x.k <> y.k
WHERE y.v % 4 <> 1
GROUP BY x.v;
CREATE STREAMING TABLE nested WITH (mode = '{mode}', output_mode = 'complete',
  watermark = 'ts', allowed_lateness = '20 seconds') AS
SELECT Q.k, count(*) AS groups, sum(Q.n) AS total, max(Q.top) AS best
FROM (SELECT x.k, x.v, count(*) AS n, max(y.v) AS top
      FROM STREAM(a) AS x JOIN STREAM(b) AS y
        ON x.k = y.k AND y.ts BETWEEN x.ts - INTERVAL 5 SECONDS AND x.ts + INTERVAL 30 SECONDS
      GROUP BY x.k, x.v) AS Q
GROUP BY Q.k;
CREATE STREAMING TABLE over_one WITH (mode = '{mode}', output_mode = 'complete') AS
SELECT count(*) AS keys, sum(n) AS total, max(n) AS most
FROM (SELECT k, count(*) AS n FROM STREAM(a) GROUP BY k) AS t;
CREATE STREAMING TABLE filtered WITH (mode = '{mode}', output_mode = 'complete') AS
SELECT * FROM (SELECT k, sum(v) AS s, count(*) AS c FROM STREAM(b) GROUP BY k) AS t
WHERE s > 20 OR s IS NULL;
)sql";
  const std::vector<std::string> flows = {"joined", "joined_update", "nested", "over_one",
                                          "filtered"};
  {
    const Pipeline p = ParsePipeline(With(kSql, "incremental"));
    for (const auto& flow : flows) {
      EXPECT_EQ(ExplainIncremental(p, flow).find("falls back"), std::string::npos) << ExplainIncremental(p, flow);
    }
  }
  int compared = 0;
  for (uint32_t seed : {21u, 22u, 23u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::map<std::string, std::vector<std::shared_ptr<arrow::RecordBatch>>> feeds;
    for (const char* name : {"a", "b"}) {
      for (int t = 0; t < 5; ++t) {
        // Trigger t's times lie in [20t - 19, 20t + 20) s: the watermark
        // (20 s behind) moves on, so the time bound evicts, and the next
        // trigger's rows come from just above it, so a row evicted too early
        // would miss a partner.
        std::vector<EventRow> rows;
        for (int i = 40 + static_cast<int>(rng() % 60); i > 0; --i) {
          EventRow r;
          if (rng() % 11 != 0) {
            r.ts = 1767225600LL * 1000000 + (20LL * t - 19) * 1000000 +
                   static_cast<int64_t>(rng() % 39000000);
          }
          if (rng() % 7 != 0) r.k = std::string(1, static_cast<char>('a' + rng() % 5));
          if (rng() % 7 != 0) r.v = static_cast<int64_t>(rng() % 12);
          rows.push_back(r);
        }
        feeds[name].push_back(EventBatch(rows));
      }
    }
    std::map<std::string, std::string> stores;
    for (const auto& [way, mode, index, prefilter] :
         std::vector<std::tuple<std::string, std::string, bool, bool>>{
             {"plain", "incremental", false, false}, {"both", "incremental", true, true},
             {"recompute", "recompute", true, true}}) {
      RunOptions o;
      o.storage_root = stores[way] = Path("mem" + std::to_string(seed) + way);
      o.memory_streams = feeds;
      o.native.join_index = index;
      o.native.join_prefilter = prefilter;
      events_.clear();
      RunSummary s = Run(ParsePipeline(With(kSql, mode)), o);
      ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
      for (const auto& e : events_) {
        ASSERT_NE(e.kind, RunEvent::Kind::kLateRows) << e.message;
        if (mode == "incremental") {
          ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
        }
      }
    }
    for (const auto& flow : flows) {
      SCOPED_TRACE(flow);
      const bool has = std::filesystem::exists(stores["recompute"] + "/" + flow + "/current");
      ASSERT_EQ(std::filesystem::exists(stores["both"] + "/" + flow + "/current"), has);
      if (!has) continue;
      ++compared;
      auto expected = Read(stores["recompute"], flow);
      EXPECT_TRUE(TablesEqualUnordered(*expected, *Read(stores["both"], flow), false));
      EXPECT_TRUE(TablesEqualUnordered(*expected, *Read(stores["plain"], flow), false));
    }
  }
  EXPECT_GE(compared, 12);
}

}  // namespace
}  // namespace thund::native::testing
