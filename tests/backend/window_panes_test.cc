// Window panes (NativeRunOptions::window_panes, `thund run --no-window-panes`)
// against their plain twin, the window-local operator over raw rows, and
// against Recompute mode (the batch query over all rows): window-local
// queries whose derived tables aggregate windows of a stream (Nexmark q5 and
// its relatives: tumbling and hopping windows, slides that do not divide the
// size, count / sum / min / max, NULL keys, values and times) store the same
// rows every way, resumed runs included.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "backend/batch_fixture.h"
#include "backend/event_rows.h"
#include "engine/duckdb/sql_quote.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;
using engine::testing::TablesEqualUnordered;

// A bounded bid stream (no row later than the allowed lateness, so every
// mode sees the same rows) and window-local flows over derived tables.
constexpr const char* kGenerated = R"sql(
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 9, rows_per_batch => 800, total_rows => 7000, events_per_second => 400,
  out_of_orderness => '1s');

CREATE STREAMING TABLE hot WITH (mode = '{mode}', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT AuctionBids.auction, AuctionBids.num
FROM (
  SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
  FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '10' SECONDS)
  GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
  SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
  FROM (
    SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
    FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '10' SECONDS)
    GROUP BY auction, window_start, window_end
  ) AS CountBids
  GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime
   AND AuctionBids.num >= MaxBids.maxn;

CREATE STREAMING TABLE per_channel WITH (mode = '{mode}', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT a.channel, a.window_start, a.n, a.total, a.lo, a.hi, b.bidders
FROM (SELECT channel, window_start, window_end, count(*) AS n, sum(price) AS total,
             min(price) AS lo, max(price) AS hi
      FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '3' SECONDS)
      GROUP BY channel, window_start, window_end) AS a
JOIN (SELECT window_start, window_end, count(bidder) AS bidders
      FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '3' SECONDS)
      GROUP BY window_start, window_end) AS b
ON a.window_start = b.window_start AND a.window_end = b.window_end
WHERE a.n > 1;

CREATE STREAMING TABLE odd_hop WITH (mode = '{mode}', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT x.auction, x.we, x.n, y.top
FROM (SELECT auction, window_end AS we, count(*) AS n
      FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '5' SECONDS)
      GROUP BY auction, window_start, window_end) AS x
JOIN (SELECT window_end AS we, max(price) AS top
      FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '5' SECONDS)
      GROUP BY window_start, window_end) AS y
ON x.we = y.we;

CREATE STREAMING TABLE pairs WITH (mode = '{mode}', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT P.bidder, P.ws
FROM (SELECT bidder, window_start AS ws, window_end AS we
      FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '5' SECONDS)
      GROUP BY bidder, window_start, window_end) P
JOIN (SELECT auction, window_start AS ws, window_end AS we
      FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '5' SECONDS)
      GROUP BY auction, window_start, window_end) A
ON P.bidder % 50 = A.auction % 50 AND P.ws = A.ws AND P.we = A.we;

CREATE STREAMING TABLE with_avg WITH (mode = '{mode}', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT x.auction, x.ws, x.mean, y.n
FROM (SELECT auction, window_start AS ws, avg(price) AS mean
      FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '4' SECONDS)
      GROUP BY auction, window_start, window_end) AS x
JOIN (SELECT window_start AS ws, count(DISTINCT bidder) AS n
      FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '4' SECONDS)
      GROUP BY window_start, window_end) AS y
ON x.ws = y.ws;
)sql";

const std::vector<std::string> kFlows = {"hot", "per_channel", "odd_hop", "pairs", "with_avg"};
// avg and count(DISTINCT) are outside the panes: that flow keeps raw rows.
bool Paned(const std::string& flow) { return flow != "with_avg"; }

class WindowPanesTest : public BatchFixture {
 protected:
  Pipeline Generated(const std::string& mode) {
    std::string sql = kGenerated;
    for (size_t at; (at = sql.find("{mode}")) != std::string::npos;) sql.replace(at, 6, mode);
    return ParsePipeline(sql);
  }
  // `direct`: the panes' partials folded (and tumbling windows closed) in
  // C++ (pane_partial.h), or by the queries, their plain twin.
  RunSummary RunAt(const std::string& mode, const std::string& storage, bool panes,
                   int64_t max_triggers = 0, bool direct = true) {
    RunOptions o;
    o.storage_root = storage;
    o.max_triggers = max_triggers;
    o.native.window_panes = panes;
    o.native.direct_partial = direct;
    return Run(Generated(mode), o);
  }
  std::shared_ptr<arrow::Table> Read(const std::string& storage, const std::string& dataset) {
    return Oracle("SELECT * FROM read_parquet(" +
                  QuoteString(storage + "/" + dataset + "/current/*.parquet") + ")");
  }
  // The flows' finished events say which operator ran.
  bool RanWithPanes(const std::string& flow) {
    for (const auto& e : events_) {
      if (e.kind == RunEvent::Kind::kFlowFinished && e.flow == flow) {
        return e.message.find("(window panes)") != std::string::npos;
      }
    }
    return false;
  }
};

TEST_F(WindowPanesTest, PanesGiveTheRowsOfRawRowsAndOfRecompute) {
  const std::string panes = Path("panes"), raw = Path("raw"), recompute = Path("recompute"),
                    queried = Path("queried");
  RunSummary p = RunAt("incremental", panes, true);
  ASSERT_EQ(p.status, RunPhase::kCompleted) << p.ToString();
  for (const auto& flow : kFlows) EXPECT_EQ(RanWithPanes(flow), Paned(flow)) << flow;
  events_.clear();
  RunSummary q = RunAt("incremental", queried, true, 0, /*direct=*/false);
  ASSERT_EQ(q.status, RunPhase::kCompleted) << q.ToString();
  for (const auto& flow : kFlows) EXPECT_EQ(RanWithPanes(flow), Paned(flow)) << flow;
  events_.clear();
  RunSummary r = RunAt("incremental", raw, false);
  ASSERT_EQ(r.status, RunPhase::kCompleted) << r.ToString();
  for (const auto& flow : kFlows) EXPECT_FALSE(RanWithPanes(flow)) << flow;
  RunSummary c = RunAt("recompute", recompute, true);
  ASSERT_EQ(c.status, RunPhase::kCompleted) << c.ToString();
  for (const auto& flow : kFlows) {
    SCOPED_TRACE(flow);
    auto a = Read(panes, flow), b = Read(raw, flow), o = Read(recompute, flow),
         d = Read(queried, flow);
    ASSERT_TRUE(a && b && o && d);
    EXPECT_GT(a->num_rows(), 0);
    EXPECT_TRUE(TablesEqualUnordered(*b, *a, /*check_types=*/true));
    EXPECT_TRUE(TablesEqualUnordered(*d, *a, /*check_types=*/true));
    EXPECT_TRUE(TablesEqualUnordered(*o, *a, /*check_types=*/false));
  }
}

TEST_F(WindowPanesTest, AResumedRunKeepsItsPanesAndASwitchedRunIsRefused) {
  const std::string whole = Path("whole"), pieces = Path("pieces");
  RunSummary w = RunAt("incremental", whole, true);
  ASSERT_EQ(w.status, RunPhase::kCompleted) << w.ToString();
  for (int64_t cap : {3, 2, 0}) {
    RunSummary r = RunAt("incremental", pieces, true, cap);
    ASSERT_EQ(r.status, RunPhase::kCompleted) << r.ToString();
  }
  // Resumed runs that switch between the C++ fold and the queries: state the
  // queries appended (several rows per pane) is folded by the next C++ step.
  const std::string mixed = Path("mixed");
  for (const auto& [cap, direct] : std::vector<std::pair<int64_t, bool>>{
           {2, false}, {2, true}, {3, false}, {0, true}}) {
    RunSummary r = RunAt("incremental", mixed, true, cap, direct);
    ASSERT_EQ(r.status, RunPhase::kCompleted) << r.ToString();
  }
  for (const auto& flow : kFlows) {
    SCOPED_TRACE(flow);
    EXPECT_TRUE(TablesEqualUnordered(*Read(whole, flow), *Read(pieces, flow), true));
    EXPECT_TRUE(TablesEqualUnordered(*Read(whole, flow), *Read(mixed, flow), true));
  }
  // State committed with panes does not fit the raw rows: refused, saying why.
  const std::string switched = Path("switched");
  ASSERT_EQ(RunAt("incremental", switched, true, 2).status, RunPhase::kCompleted);
  RunSummary s = RunAt("incremental", switched, false);
  ASSERT_EQ(s.status, RunPhase::kFailed) << s.ToString();
  EXPECT_NE(s.ToString().find("window panes"), std::string::npos) << s.ToString();
}

// Random rows with NULL keys, values and times, out of order, some late: the
// raw rows and the panes drop and keep the same ones.
TEST_F(WindowPanesTest, NullsAndLateRowsGiveTheSameRowsAsRawRows) {
  constexpr const char* kSql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_memory('ev');
CREATE STREAMING TABLE joined WITH (mode = 'incremental', watermark = 'ts',
  allowed_lateness = '2 seconds') AS
SELECT a.k, a.window_start, a.n, a.nv, a.s, a.lo, b.top
FROM (SELECT k, window_start, window_end, count(*) AS n, count(v) AS nv, sum(v) AS s,
             min(v) AS lo
      FROM HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECONDS, INTERVAL '6' SECONDS)
      GROUP BY k, window_start, window_end) AS a
LEFT JOIN (SELECT window_start, max(v) AS top
      FROM HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECONDS, INTERVAL '6' SECONDS)
      GROUP BY window_start) AS b
ON a.window_start = b.window_start;
CREATE STREAMING TABLE tumbled WITH (mode = 'incremental', watermark = 'ts',
  allowed_lateness = '2 seconds') AS
SELECT a.k, a.window_start, a.window_end, a.n, a.nv, a.s, a.lo, b.top
FROM (SELECT k, window_start, window_end, count(*) AS n, count(v) AS nv, sum(v) AS s,
             min(v) AS lo
      FROM TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '3' SECONDS)
      GROUP BY k, window_start, window_end) AS a
LEFT JOIN (SELECT window_end, max(v) AS top
      FROM TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '3' SECONDS)
      GROUP BY window_start, window_end) AS b
ON a.window_end = b.window_end;
)sql";
  int with_rows = 0;
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::vector<std::shared_ptr<arrow::RecordBatch>> feed;
    int64_t clock_s = 0;
    for (int b = 0; b < 6; ++b) {
      std::vector<EventRow> rows;
      for (int i = static_cast<int>(rng() % 60); i > 0; --i) {
        EventRow r;
        // Mostly moving forward, some rows seconds behind (late past 2 s).
        const int64_t at = clock_s * 1000000 - static_cast<int64_t>(rng() % 5000000);
        if (rng() % 15 != 0) r.ts = 1767225600LL * 1000000 + std::max<int64_t>(at, 0);
        if (rng() % 6 != 0) r.k = std::string(1, static_cast<char>('a' + rng() % 3));
        if (rng() % 5 != 0) r.v = static_cast<int64_t>(rng() % 1000) - 300;
        rows.push_back(r);
        clock_s += static_cast<int64_t>(rng() % 2);
      }
      feed.push_back(EventBatch(rows));
    }
    // Three ways: raw rows, panes by the queries, panes folded in C++.
    enum Way { kRaw, kQueried, kDirect };
    std::map<Way, std::string> stores;
    for (const Way way : {kRaw, kQueried, kDirect}) {
      const std::string store = Path("mem" + std::to_string(seed) + "_" + std::to_string(way));
      RunOptions o;
      o.storage_root = store;
      o.memory_streams["ev"] = feed;
      o.native.window_panes = way != kRaw;
      o.native.direct_partial = way == kDirect;
      events_.clear();
      RunSummary s = Run(ParsePipeline(kSql), o);
      ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
      EXPECT_EQ(RanWithPanes("joined"), way != kRaw);
      EXPECT_EQ(RanWithPanes("tumbled"), way != kRaw);
      stores[way] = store;
    }
    for (const std::string flow : {"joined", "tumbled"}) {
      SCOPED_TRACE(flow);
      const bool has_raw = std::filesystem::exists(stores[kRaw] + "/" + flow + "/current");
      for (const Way way : {kQueried, kDirect}) {
        ASSERT_EQ(std::filesystem::exists(stores[way] + "/" + flow + "/current"), has_raw);
      }
      if (!has_raw) continue;
      ++with_rows;
      for (const Way way : {kQueried, kDirect}) {
        EXPECT_TRUE(TablesEqualUnordered(*Read(stores[kRaw], flow), *Read(stores[way], flow),
                                         /*check_types=*/true))
            << "way " << way;
      }
    }
  }
  EXPECT_GT(with_rows, 0);
}

}  // namespace
}  // namespace thund::native::testing
