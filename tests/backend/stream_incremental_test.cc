// The incremental streaming mode end to end (NativeBackend::Run): results
// equal Recompute mode and the batch query, bounded inputs flush their open
// windows, reruns resume from the committed state, late rows are dropped and
// counted, the watermark is the minimum over inputs and idle inputs stop
// holding it back, and shapes the operators cannot run fall back with their
// reason.
#include <gtest/gtest.h>

#include <filesystem>

#include <random>
#include <thread>


#include <arrow/api.h>

#include "batch_fixture.h"
#include "event_rows.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/stream/incremental_plan.h"
#include "sql/sql_analysis.h"
#include "thund/sql_pipeline.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;
using engine::testing::TablesEqualUnordered;

constexpr int64_t kBase = 1767225600LL * 1000000;  // 2026-01-01T00:00:00Z

// Rows at the given event times (seconds after kBase; nullopt = NULL), keys
// cycling through `ks` ("x" when empty), values 0, 1, 2, ...
std::shared_ptr<arrow::RecordBatch> Batch(const std::vector<std::optional<int64_t>>& ts_s,
                                          const std::vector<std::string>& ks) {
  std::vector<EventRow> rows;
  for (size_t i = 0; i < ts_s.size(); ++i) {
    EventRow r;
    if (ts_s[i]) r.ts = kBase + *ts_s[i] * 1000000;
    r.k = ks.empty() ? "x" : ks[i % ks.size()];
    r.v = static_cast<int64_t>(i);
    rows.push_back(r);
  }
  return EventBatch(rows);
}

// A bounded Nexmark bid stream (no row later than the allowed lateness) and
// flows of every operator shape; {mode} is the streaming mode.
const char* kGenerated = R"sql(
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 5, rows_per_batch => 700, total_rows => 6000, events_per_second => 500,
  out_of_orderness => '1s');

CREATE STREAMING TABLE cheap WITH (mode = '{mode}') AS
SELECT auction, price, date_time FROM STREAM(bids) WHERE price < 1000;

CREATE STREAMING TABLE per_window WITH (mode = '{mode}') AS
SELECT auction, window.end AS we, count(*) AS n, sum(price) AS total, avg(price) AS mean
FROM STREAM(bids) WATERMARK date_time DELAY OF INTERVAL 2 SECONDS
GROUP BY auction, window(date_time, '2 seconds');

CREATE STREAMING TABLE hopping WITH (mode = '{mode}') AS
SELECT window_start, window_end, max(price) AS top
FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '1' SECONDS, INTERVAL '4' SECONDS)
WATERMARK date_time DELAY OF INTERVAL 2 SECONDS GROUP BY window_start, window_end;

CREATE STREAMING TABLE no_window_column WITH (mode = '{mode}') AS
SELECT channel, count(*) AS n FROM STREAM(bids)
WATERMARK date_time DELAY OF INTERVAL 2 SECONDS GROUP BY window(date_time, '3 seconds'), channel;

CREATE STREAMING TABLE sessions WITH (mode = '{mode}') AS
SELECT bidder, session_window.start AS ss, count(*) AS n, median(price) AS med
FROM STREAM(bids) WATERMARK date_time DELAY OF INTERVAL 2 SECONDS
GROUP BY session_window(date_time, '1 second'), bidder;

CREATE STREAMING TABLE window_where WITH (mode = '{mode}') AS
SELECT auction, window.end AS we, count(*) AS n, max(price) AS hi
FROM STREAM(bids) WATERMARK date_time DELAY OF INTERVAL 2 SECONDS
WHERE price > 300 GROUP BY auction, window(date_time, '2 seconds');

CREATE STREAMING TABLE session_sums WITH (mode = '{mode}') AS
SELECT bidder, session_window.start AS ss, session_window.end AS se, count(*) AS n,
       sum(price) AS total, min(auction) AS lo, max(date_time) AS last
FROM STREAM(bids) WATERMARK date_time DELAY OF INTERVAL 2 SECONDS
GROUP BY session_window(date_time, '1 second'), bidder;

CREATE STREAMING TABLE session_where WITH (mode = '{mode}') AS
SELECT bidder, session_window.end AS se, count(*) AS n, max(price) AS hi
FROM STREAM(bids) WATERMARK date_time DELAY OF INTERVAL 2 SECONDS
WHERE price > 300 GROUP BY session_window(date_time, '2 seconds'), bidder;

CREATE STREAMING TABLE totals WITH (mode = '{mode}', output_mode = 'update') AS
SELECT channel, count(*) AS n, min(price) AS lo, count(DISTINCT auction) AS auctions
FROM STREAM(bids) GROUP BY channel;

CREATE STREAMING TABLE whole WITH (mode = '{mode}', output_mode = 'complete') AS
SELECT channel, window_start, sum(price) FILTER (WHERE price > 500) AS big
FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '5' SECONDS)
WATERMARK date_time DELAY OF INTERVAL 2 SECONDS GROUP BY channel, window_start;
)sql";

const std::vector<std::string> kFlows = {
    "cheap",    "per_window",   "hopping",       "no_window_column", "window_where",
    "sessions", "session_sums", "session_where", "totals",           "whole"};

class StreamIncrementalTest : public BatchFixture {
 protected:
  Pipeline Generated(const std::string& mode) {
    std::string sql = kGenerated;
    for (size_t at; (at = sql.find("{mode}")) != std::string::npos;) sql.replace(at, 6, mode);
    return ParsePipeline(sql);
  }
  RunSummary RunAt(const std::string& mode, const std::string& storage, int64_t max_triggers = 0,
                   bool reuse_views = true, bool fast_aggregate = true) {
    RunOptions o;
    o.storage_root = storage;
    o.max_triggers = max_triggers;
    o.native.reuse_arrow_views = reuse_views;
    o.native.hash_merge = fast_aggregate;
    o.native.hop_panes = fast_aggregate;
    o.native.direct_partial = fast_aggregate;
    return Run(Generated(mode), o);
  }
  std::shared_ptr<arrow::Table> Read(const std::string& storage, const std::string& dataset) {
    return Oracle("SELECT * FROM read_parquet(" +
                  QuoteString(storage + "/" + dataset + "/current/*.parquet") + ")");
  }
  bool HasRows(const std::string& storage, const std::string& dataset) {
    const std::filesystem::path dir = storage + "/" + dataset + "/current";
    if (!std::filesystem::exists(dir)) return false;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".parquet") return true;
    }
    return false;
  }
  // Every flow of kFlows holds the same rows in both stores. With
  // `may_be_empty`, a flow may hold none in both (no window closed yet).
  void ExpectSameRows(const std::string& a, const std::string& b, bool check_types,
                      bool may_be_empty = false) {
    for (const auto& flow : kFlows) {
      SCOPED_TRACE(flow);
      if (may_be_empty) {
        ASSERT_EQ(HasRows(a, flow), HasRows(b, flow));
        if (!HasRows(a, flow)) continue;
      }
      auto x = Read(a, flow), y = Read(b, flow);
      ASSERT_TRUE(x && y);
      EXPECT_TRUE(TablesEqualUnordered(*x, *y, check_types));
    }
  }
  int64_t Count(RunEvent::Kind kind, const std::string& flow) {
    int64_t n = 0;
    for (const auto& e : events_) {
      if (e.kind == kind && e.flow == flow) n += std::max<int64_t>(e.count, 1);
    }
    return n;
  }
};

// The aggregate's fast paths (the C++ merge of partials, hopping panes)
// against their plain twins (a DuckDB merge, every row in each window),
// trigger by trigger: the same rows committed at every version.
TEST_F(StreamIncrementalTest, AggregateFastPathsEqualTheirPlainTwinsAtEveryTrigger) {
  for (int64_t triggers : {2, 5, 0}) {
    SCOPED_TRACE("triggers " + std::to_string(triggers));
    const std::string fast = Path("fast" + std::to_string(triggers)),
                      plain = Path("plain" + std::to_string(triggers));
    RunSummary a = RunAt("incremental", fast, triggers);
    ASSERT_EQ(a.status, RunPhase::kCompleted) << a.ToString();
    RunSummary b = RunAt("incremental", plain, triggers, true, /*fast_aggregate=*/false);
    ASSERT_EQ(b.status, RunPhase::kCompleted) << b.ToString();
    ExpectSameRows(plain, fast, /*check_types=*/false, /*may_be_empty=*/true);
  }
}

// The C++ partials are taken only when nothing but what the dialect adds lies
// between the window and the stream (window()'s time filter, the session
// expansion): a WHERE (window_where's; session_where's, folded into the
// expansion) keeps the partial query. The test above holds both to their
// twins, the one below to Recompute and the batch query.
TEST_F(StreamIncrementalTest, SessionPartialsInCppOnlyWithoutAFilterInTheExpansion) {
  const Pipeline p = Generated("incremental");
  for (const auto& [flow, direct] : std::vector<std::pair<std::string, bool>>{
           {"session_sums", true}, {"session_where", false}, {"sessions", false},
           {"hopping", true}, {"no_window_column", true}, {"per_window", true},
           {"window_where", false}}) {
    SCOPED_TRACE(flow);
    const Flow* f = p.FindFlow(flow);
    ASSERT_NE(f, nullptr);
    auto root = sql::PlanQuery(f->sql);
    ASSERT_TRUE(root.ok()) << root.status().ToString();
    auto planned = engine::stream::PlanFlowIncremental(p, *f, **root, "__s");
    ASSERT_TRUE(planned.ok()) << planned.status().ToString();
    ASSERT_TRUE(planned->plan.runnable) << planned->plan.fallback;
    EXPECT_EQ(planned->agg.direct.usable, direct);
    const std::string text = engine::stream::DescribeIncremental(planned->plan);
    EXPECT_EQ(text.find("in C++ (no query)") != std::string::npos, direct) << text;
  }
}

TEST_F(StreamIncrementalTest, EveryShapeEqualsRecomputeAndTheBatchQueryOverABoundedStream) {
  const std::string inc = Path("inc"), rec = Path("rec");
  RunSummary a = RunAt("incremental", inc);
  ASSERT_EQ(a.status, RunPhase::kCompleted) << a.ToString();
  EXPECT_EQ(a.mode, "streaming (incremental)");
  for (const auto& e : events_) ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
  RunSummary b = RunAt("recompute", rec);
  ASSERT_EQ(b.status, RunPhase::kCompleted) << b.ToString();
  for (const auto& flow : kFlows) {
    SCOPED_TRACE(flow);
    auto x = Read(inc, flow), y = Read(rec, flow);
    ASSERT_TRUE(x && y);
    EXPECT_GT(x->num_rows(), 0);
    EXPECT_TRUE(TablesEqualUnordered(*y, *x, /*check_types=*/false));
  }
  // The batch query over every row (none is late: disorder 1 s < lateness 2 s).
  const std::string bids = "read_parquet(" + QuoteString(inc + "/bids/current/*.parquet") + ")";
  auto expected = Oracle(
      "SELECT auction, (epoch_us(date_time) // 2000000) * 2000000 + 2000000 AS we, count(*) AS n, "
      "sum(price) AS total, avg(price) AS mean FROM " + bids + " GROUP BY ALL");
  auto actual = Oracle("SELECT auction, epoch_us(we) AS we, n, total, mean FROM read_parquet(" +
                       QuoteString(inc + "/per_window/current/*.parquet") + ")");
  ASSERT_TRUE(expected && actual);
  EXPECT_TRUE(TablesEqualUnordered(*expected, *actual, /*check_types=*/false));
}

// Decimal, double and integer values; string, integer and date group keys.
std::shared_ptr<arrow::RecordBatch> Typed(int64_t from, int64_t n) {
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MILLI),
                             arrow::default_memory_pool());
  arrow::Decimal128Builder amount(arrow::decimal128(10, 2));
  arrow::DoubleBuilder ratio;
  arrow::Int32Builder units;
  arrow::Date32Builder day;
  for (int64_t i = from; i < from + n; ++i) {
    EXPECT_TRUE(ts.Append(kBase / 1000 + i * 700 - (i % 7) * 900).ok());
    EXPECT_TRUE(amount.Append(arrow::Decimal128(i * 37 % 10007 - 2000)).ok());
    EXPECT_TRUE((i % 11 == 0 ? ratio.AppendNull() : ratio.Append(0.1 * static_cast<double>(i % 13)))
                    .ok());
    EXPECT_TRUE(units.Append(static_cast<int32_t>(i % 5)).ok());
    EXPECT_TRUE(day.Append(static_cast<int32_t>(20454 + i % 3)).ok());
  }
  auto schema = arrow::schema({arrow::field("ts", ts.type()), arrow::field("amount", amount.type()),
                               arrow::field("ratio", arrow::float64()),
                               arrow::field("units", arrow::int32()),
                               arrow::field("day", arrow::date32())});
  std::shared_ptr<arrow::Array> a, b, c, d, e;
  EXPECT_TRUE(ts.Finish(&a).ok());
  EXPECT_TRUE(amount.Finish(&b).ok());
  EXPECT_TRUE(ratio.Finish(&c).ok());
  EXPECT_TRUE(units.Finish(&d).ok());
  EXPECT_TRUE(day.Finish(&e).ok());
  return arrow::RecordBatch::Make(schema, n, {a, b, c, d, e});
}

TEST_F(StreamIncrementalTest, DecimalsFloatsAndIntegersOfAnyKeyTypeEqualTheBatchQuery) {
  const char* sql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_memory('ev');
CREATE STREAMING TABLE by_key WITH (mode = 'incremental', output_mode = 'update') AS
SELECT day, units, count(*) AS n, sum(amount) AS total, min(amount) AS lo, max(ratio) AS hi,
       round(avg(amount), 6) AS mean, round(sum(ratio), 6) AS r, sum(units) AS u
FROM STREAM(ev) GROUP BY day, units;
CREATE STREAMING TABLE by_window WITH (mode = 'incremental', output_mode = 'complete') AS
SELECT window.start AS ws, day, count(*) AS n, sum(amount) AS total, round(avg(ratio), 6) AS r
FROM STREAM(ev) WATERMARK ts DELAY OF INTERVAL 10 SECONDS
GROUP BY window(ts, '5 seconds'), day;
)sql";
  RunOptions o;
  o.memory_streams["ev"] = {Typed(0, 40), Typed(40, 7), Typed(47, 90), Typed(137, 3)};
  RunSummary s = Run(ParsePipeline(sql), o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  for (const auto& e : events_) ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
  EXPECT_EQ(Count(RunEvent::Kind::kLateRows, "by_window"), 0);  // disorder < lateness
  const std::string all = "read_parquet(" + QuoteString(root() + "/ev/current/*.parquet") + ")";
  EXPECT_DATASET_MATCHES(
      "by_key", "SELECT day, units, count(*) AS n, sum(amount) AS total, min(amount) AS lo, "
                "max(ratio) AS hi, round(avg(amount), 6) AS mean, round(sum(ratio), 6) AS r, "
                "sum(units) AS u FROM " + all + " GROUP BY day, units");
  EXPECT_DATASET_MATCHES(
      "by_window", "SELECT make_timestamp((epoch_us(ts) // 5000000) * 5000000) AS ws, day, "
                   "count(*) AS n, sum(amount) AS total, round(avg(ratio), 6) AS r FROM " + all +
                   " GROUP BY ALL");
}

// A fault at a random write of an incremental run (a part, a state table,
// the stream state, a manifest, the commit point) leaves the last committed
// trigger; the rerun ends exactly as one clean run: nothing lost, nothing twice.
TEST_F(StreamIncrementalTest, AFaultAtAnyWriteLosesNothingAndCountsNothingTwice) {
  const Pipeline p = Generated("incremental");
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  std::map<std::string, std::shared_ptr<arrow::Table>> clean;
  for (const auto& flow : kFlows) clean[flow] = Read(root(), flow);
  const int failed_runs = RunWithRandomFaults(p, 8, 16, [&] {
    for (const auto& flow : kFlows) {
      SCOPED_TRACE(flow);
      auto now = Read(root(), flow);
      ASSERT_TRUE(now);
      EXPECT_TRUE(TablesEqualUnordered(*clean[flow], *now, /*check_types=*/true));
    }
  });
  EXPECT_GT(failed_runs, 4);  // most faults hit a trigger's writes, not the run history
}

// The reused-view fast path of the session against its plain twin.
TEST_F(StreamIncrementalTest, ReusedArrowViewsGiveTheSameResultsAsRecreatedOnes) {
  const std::string fast = Path("fast"), plain = Path("plain");
  RunSummary a = RunAt("incremental", fast);
  ASSERT_EQ(a.status, RunPhase::kCompleted) << a.ToString();
  RunSummary b = RunAt("incremental", plain, 0, /*reuse_views=*/false);
  ASSERT_EQ(b.status, RunPhase::kCompleted) << b.ToString();
  ExpectSameRows(plain, fast, /*check_types=*/true);
}

// A source whose fields are NOT NULL (keyed_events) meets state that DuckDB
// wrote back (nullable fields): the kept rows still take the new ones.
TEST_F(StreamIncrementalTest, NotNullSourceFieldsJoinStateDuckDbWroteBack) {
  const std::string sql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => 'keyed_events',
  seed => 3, rows_per_batch => 700, total_rows => 5000, events_per_second => 200,
  out_of_orderness => '2s', keys => '20');
CREATE STREAMING TABLE distinct_keys WITH (mode = '{mode}') AS
SELECT window.start AS ws, count(DISTINCT key) AS keys, median(value) AS mid FROM STREAM(ev)
WATERMARK event_time DELAY OF INTERVAL 3 SECONDS GROUP BY window(event_time, '10 seconds');
)sql";
  std::map<std::string, std::shared_ptr<arrow::Table>> out;
  for (const std::string mode : {"incremental", "recompute"}) {
    std::string text = sql;
    text.replace(text.find("{mode}"), 6, mode);
    RunOptions o;
    o.storage_root = Path(mode);
    RunSummary r = Run(ParsePipeline(text), o);
    ASSERT_EQ(r.status, RunPhase::kCompleted) << r.ToString();
    out[mode] = Read(Path(mode), "distinct_keys");
    ASSERT_TRUE(out[mode]);
  }
  EXPECT_GT(out["incremental"]->num_rows(), 1);
  EXPECT_TRUE(TablesEqualUnordered(*out["recompute"], *out["incremental"], /*check_types=*/false));
}

TEST_F(StreamIncrementalTest, ARerunResumesFromTheCommittedStateWithNothingLostOrTwice) {
  const std::string once = Path("once"), twice = Path("twice");
  RunSummary whole = RunAt("incremental", once);
  ASSERT_EQ(whole.status, RunPhase::kCompleted) << whole.ToString();
  RunSummary a = RunAt("incremental", twice, 3);
  ASSERT_EQ(a.status, RunPhase::kCompleted) << a.ToString();
  RunSummary b = RunAt("incremental", twice, 2);
  ASSERT_EQ(b.status, RunPhase::kCompleted) << b.ToString();
  RunSummary c = RunAt("incremental", twice);
  ASSERT_EQ(c.status, RunPhase::kCompleted) << c.ToString();
  ExpectSameRows(once, twice, /*check_types=*/false);
}

TEST_F(StreamIncrementalTest, GroupingByAliasPositionOrAllEqualsTheBatchQuery) {
  const char* sql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_memory('ev');
CREATE STREAMING TABLE by_alias WITH (mode = 'incremental', output_mode = 'update') AS
SELECT k || '!' AS bucket, count(*) AS n, max(v) AS top FROM STREAM(ev) GROUP BY bucket;
CREATE STREAMING TABLE by_position WITH (mode = 'incremental', output_mode = 'complete') AS
SELECT v % 2 AS parity, k, sum(v) AS total FROM STREAM(ev) GROUP BY 1, 2 HAVING count(*) > 1;
CREATE STREAMING TABLE by_all WITH (mode = 'incremental', output_mode = 'update') AS
SELECT upper(k) AS K, min(ts) AS first_seen FROM STREAM(ev) GROUP BY ALL;
)sql";
  RunOptions o;
  o.memory_streams["ev"] = {Batch({1, 2, 3, 4}, {"a", "b", "c"}), Batch({5, 6}, {"c", "d"}),
                            Batch({7, 8, 9}, {"a"})};
  RunSummary r = Run(ParsePipeline(sql), o);
  ASSERT_EQ(r.status, RunPhase::kCompleted) << r.ToString();
  for (const auto& e : events_) ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
  const std::string all = "read_parquet(" + QuoteString(root() + "/ev/current/*.parquet") + ")";
  EXPECT_DATASET_MATCHES("by_alias", "SELECT k || '!' AS bucket, count(*) AS n, max(v) AS top "
                                     "FROM " + all + " GROUP BY k || '!'");
  EXPECT_DATASET_MATCHES("by_position", "SELECT v % 2 AS parity, k, sum(v) AS total FROM " + all +
                                            " GROUP BY v % 2, k HAVING count(*) > 1");
  EXPECT_DATASET_MATCHES("by_all", "SELECT upper(k) AS K, min(ts) AS first_seen FROM " + all +
                                       " GROUP BY upper(k)");
}

// Every state file of every epoch directory of the store's checkpoints.
std::vector<std::string> StateFiles(const std::string& store, const std::string& only_epoch = "") {
  std::vector<std::string> out;
  const std::string root = store + "/_thund/checkpoints/s";
  for (const auto& dir : std::filesystem::directory_iterator(root)) {
    const std::string name = dir.path().filename().string();
    if (name.rfind("epoch=", 0) != 0 || (!only_epoch.empty() && name != only_epoch)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
      if (e.path().extension() == ".parquet") out.push_back(e.path().string());
    }
  }
  return out;
}

std::string NewestEpoch(const std::string& store) {
  std::string newest;
  for (const auto& dir :
       std::filesystem::directory_iterator(store + "/_thund/checkpoints/s")) {
    const std::string name = dir.path().filename().string();
    if (name.rfind("epoch=", 0) == 0 && name > newest) newest = name;
  }
  return newest;
}

TEST_F(StreamIncrementalTest, ATruncatedStateFileFallsBackToTheEpochBeforeIt) {
  const std::string store = Path("store");
  RunSummary first = RunAt("incremental", store, 3);
  ASSERT_EQ(first.status, RunPhase::kCompleted) << first.ToString();
  // A file only the newest epoch wrote, cut in half.
  auto files = StateFiles(store, NewestEpoch(store));
  ASSERT_FALSE(files.empty());
  std::filesystem::resize_file(files[0], std::filesystem::file_size(files[0]) / 2);
  std::vector<RunEvent> events;
  RunOptions o;
  o.storage_root = store;
  o.on_event = [&](const RunEvent& e) { events.push_back(e); };
  RunSummary resumed = Run(Generated("incremental"), o);
  ASSERT_EQ(resumed.status, RunPhase::kCompleted) << resumed.ToString();
  bool fell_back = false;
  for (const auto& e : events) {
    fell_back |= e.kind == RunEvent::Kind::kRecovery &&
                 e.message.find("is damaged") != std::string::npos &&
                 e.message.find("truncated") != std::string::npos;
  }
  EXPECT_TRUE(fell_back);
  RunSummary clean = RunAt("incremental", Path("clean"));
  ASSERT_EQ(clean.status, RunPhase::kCompleted);
  for (const auto& flow : kFlows) {
    SCOPED_TRACE(flow);
    EXPECT_TRUE(TablesEqualUnordered(*Read(Path("clean"), flow), *Read(store, flow),
                                     /*check_types=*/true));
  }
}

TEST_F(StreamIncrementalTest, WithNoReadableEpochTheRunStopsAndAFullRefreshRebuilds) {
  const std::string store = Path("store");
  RunSummary first = RunAt("incremental", store, 3);
  ASSERT_EQ(first.status, RunPhase::kCompleted) << first.ToString();
  for (const auto& f : StateFiles(store)) {
    std::filesystem::resize_file(f, std::filesystem::file_size(f) / 2);
  }
  const std::string before = CurrentVersion("per_window");
  RunSummary broken = RunAt("incremental", store);
  EXPECT_EQ(broken.status, RunPhase::kFailed) << broken.ToString();
  const std::string text = broken.ToString();
  EXPECT_NE(text.find("no committed checkpoint"), std::string::npos) << text;
  EXPECT_NE(text.find("--full-refresh"), std::string::npos) << text;
  EXPECT_EQ(CurrentVersion("per_window"), before);  // nothing committed over it
  RunOptions o;
  o.storage_root = store;
  o.full_refresh_all = true;
  RunSummary rebuilt = Run(Generated("incremental"), o);
  ASSERT_EQ(rebuilt.status, RunPhase::kCompleted) << rebuilt.ToString();
  RunSummary clean = RunAt("incremental", Path("clean"));
  ASSERT_EQ(clean.status, RunPhase::kCompleted);
  EXPECT_TRUE(TablesEqualUnordered(*Read(Path("clean"), "per_window"), *Read(store, "per_window"),
                                   /*check_types=*/true));
}

TEST_F(StreamIncrementalTest, SwitchingModesNeedsAFullRefresh) {
  const std::string store = Path("store");
  ASSERT_EQ(RunAt("recompute", store, 2).status, RunPhase::kCompleted);
  RunSummary to_incremental = RunAt("incremental", store);
  EXPECT_EQ(to_incremental.status, RunPhase::kFailed) << to_incremental.ToString();
  EXPECT_NE(to_incremental.ToString().find("built in Recompute mode"), std::string::npos)
      << to_incremental.ToString();
  EXPECT_NE(to_incremental.ToString().find("--full-refresh"), std::string::npos);
  RunOptions o;
  o.storage_root = store;
  o.full_refresh_all = true;
  ASSERT_EQ(Run(Generated("incremental"), o).status, RunPhase::kCompleted);
  RunSummary to_recompute = RunAt("recompute", store);
  EXPECT_EQ(to_recompute.status, RunPhase::kFailed) << to_recompute.ToString();
  EXPECT_NE(to_recompute.ToString().find("built in incremental mode"), std::string::npos)
      << to_recompute.ToString();
}

TEST_F(StreamIncrementalTest, StateOfAnotherQueryIsRefusedUntilAFullRefresh) {
  const std::string sql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_memory('ev');
CREATE STREAMING TABLE totals WITH (mode = 'incremental', output_mode = 'update') AS
SELECT k, {aggregate} AS a FROM STREAM(ev) GROUP BY k;
)sql";
  auto with = [&](const std::string& aggregate) {
    std::string text = sql;
    text.replace(text.find("{aggregate}"), 11, aggregate);
    return ParsePipeline(text);
  };
  RunOptions o;
  o.memory_streams["ev"] = {Batch({1, 2, 3}, {"a", "b"})};
  ASSERT_EQ(Run(with("count(*)"), o).status, RunPhase::kCompleted);
  // Same query: the state fits and the counts go on.
  ASSERT_EQ(Run(with("count(*)"), o).status, RunPhase::kCompleted);
  EXPECT_DATASET_MATCHES("totals", "SELECT * FROM (VALUES ('a', 4), ('b', 2)) AS t(k, a)");
  // Another aggregate: the committed partials do not fit; the run says what to do and
  // leaves the committed version alone.
  const std::string before = CurrentVersion("totals");
  RunSummary changed = Run(with("sum(v)"), o);
  EXPECT_EQ(changed.status, RunPhase::kFailed) << changed.ToString();
  EXPECT_NE(changed.ToString().find("--full-refresh totals"), std::string::npos)
      << changed.ToString();
  EXPECT_EQ(CurrentVersion("totals"), before);
  RunOptions fresh = o;
  fresh.full_refresh = {"totals"};
  ASSERT_EQ(Run(with("sum(v)"), fresh).status, RunPhase::kCompleted);
  EXPECT_DATASET_MATCHES("totals", "SELECT k, sum(v) AS a FROM read_parquet(" +
                                       QuoteString(root() + "/ev/current/*.parquet") +
                                       ") GROUP BY k");
}

TEST_F(StreamIncrementalTest, LateRowsAreDroppedAndCountedNullEventTimesAreNeverLate) {
  const char* sql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_memory('ev');
CREATE STREAMING TABLE per_window WITH (mode = 'incremental', output_mode = 'update') AS
SELECT window.start AS ws, count(*) AS n FROM STREAM(ev)
WATERMARK ts DELAY OF INTERVAL 1 SECONDS GROUP BY window(ts, '10 seconds');
CREATE STREAMING TABLE all_rows WITH (mode = 'incremental', output_mode = 'complete') AS
SELECT count(*) AS n, count(ts) AS with_time FROM STREAM(ev)
WATERMARK ts DELAY OF INTERVAL 1 SECONDS;
)sql";
  RunOptions o;
  // W after trigger 1: 25 - 1 = 24 s. Trigger 2: 3 s and 23 s are late,
  // 24 s is not (not below W), NULL never is.
  o.memory_streams["ev"] = {Batch({1, 12, 25}, {}), Batch({3, 23, 24, std::nullopt, 31}, {})};
  RunSummary s = Run(ParsePipeline(sql), o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_EQ(Count(RunEvent::Kind::kLateRows, "per_window"), 2);
  EXPECT_EQ(Count(RunEvent::Kind::kLateRows, "all_rows"), 2);
  EXPECT_DATASET_MATCHES("per_window",
                         "SELECT make_timestamp(" + std::to_string(kBase) +
                             ")::TIMESTAMPTZ + INTERVAL (s) SECONDS AS ws, n FROM (VALUES (0, 1), "
                             "(10, 1), (20, 2), (30, 1)) AS t(s, n)");
  EXPECT_DATASET_MATCHES("all_rows", "SELECT 6 AS n, 5 AS with_time");
}

TEST_F(StreamIncrementalTest, SessionsFromLaterTriggersMergeWithOpenOnes) {
  const char* sql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_memory('ev');
CREATE STREAMING TABLE s WITH (mode = 'incremental', output_mode = 'complete') AS
SELECT k, session_window.start AS ss, session_window.end AS se, count(*) AS n, sum(v) AS total
FROM STREAM(ev) GROUP BY session_window(ts, '5 seconds'), k;
CREATE STREAMING TABLE tvf WITH (mode = 'incremental', output_mode = 'complete') AS
SELECT k, window_start, window_end, count(*) AS n
FROM SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECONDS)
GROUP BY k, window_start, window_end;
)sql";
  RunOptions o;
  // Key a: [0, 6) and [10, 15) until 5 s arrives and bridges them (5 <= 6,
  // 10 <= 10): one session [0, 15). Key b: 12 s reaches the end of [3, 8)?
  // No: 12 > 8, a session of its own. 8 s then joins [3, 8) (a row at the end).
  o.memory_streams["ev"] = {Batch({0, 1, 10, 3}, {"a", "a", "a", "b"}),
                            Batch({5, 12}, {"a", "b"}), Batch({8}, {"b"})};
  RunSummary r = Run(ParsePipeline(sql), o);
  ASSERT_EQ(r.status, RunPhase::kCompleted) << r.ToString();
  for (const auto& e : events_) ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
  const std::string base = "make_timestamp(" + std::to_string(kBase) + ")::TIMESTAMPTZ";
  // v counts rows within each batch (0, 1, 2, ...).
  EXPECT_DATASET_MATCHES(
      "s", "SELECT k, " + base + " + INTERVAL (a) SECONDS AS ss, " + base +
               " + INTERVAL (b) SECONDS AS se, n, total FROM (VALUES ('a', 0, 15, 4, 3), "
               "('b', 3, 17, 3, 4)) AS t(k, a, b, n, total)");
  EXPECT_DATASET_MATCHES("tvf", "SELECT k, " + base + " + INTERVAL (a) SECONDS AS window_start, " +
                                    base + " + INTERVAL (b) SECONDS AS window_end, n FROM (VALUES "
                                    "('a', 0, 15, 4), ('b', 3, 17, 3)) AS t(k, a, b, n)");
}

TEST_F(StreamIncrementalTest, LateRowsCanBeKeptInAStreamingTableOfTheirOwn) {
  const char* sql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_memory('ev');
CREATE STREAMING TABLE late_ev;
CREATE STREAMING TABLE per_window WITH (mode = 'incremental', late_rows = 'late_ev') AS
SELECT window.end AS we, count(*) AS n FROM STREAM(ev)
WATERMARK ts DELAY OF INTERVAL 1 SECONDS GROUP BY window(ts, '10 seconds');
CREATE MATERIALIZED VIEW late_count AS SELECT count(*) AS n FROM late_ev;
)sql";
  RunOptions o;
  o.memory_streams["ev"] = {Batch({1, 12, 25}, {}), Batch({3, 23, 24, std::nullopt, 31}, {})};
  RunSummary s = Run(ParsePipeline(sql), o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  // W after trigger 1 is 24 s: the rows at 3 s and 23 s were late.
  EXPECT_DATASET_MATCHES(
      "late_ev", "SELECT make_timestamp(" + std::to_string(kBase) +
                     ")::TIMESTAMPTZ + INTERVAL (t) SECONDS AS ts, 'x' AS k, v, 'per_window' AS "
                     "__flow, make_timestamp(" + std::to_string(kBase + 24000000) +
                     ") AS __watermark FROM (VALUES (3, 0), (23, 1)) AS r(t, v)");
  EXPECT_DATASET_MATCHES("late_count", "SELECT 2 AS n");
}

TEST_F(StreamIncrementalTest, TheSlowestInputGatesTheWatermarkUntilItIsIdle) {
  const char* sql = R"sql(
CREATE STREAMING TABLE fast AS SELECT * FROM STREAM read_memory('fast');
CREATE STREAMING TABLE slow AS SELECT * FROM STREAM read_memory('slow');
CREATE STREAMING TABLE w WITH (mode = 'incremental', trigger = 'processing_time(60ms)') AS
SELECT window.end AS we, count(*) AS n
FROM (SELECT * FROM STREAM(fast) UNION ALL SELECT * FROM STREAM(slow))
WATERMARK ts DELAY OF INTERVAL 0 SECONDS {idle}
GROUP BY window(ts, '10 seconds');
)sql";
  for (bool idle : {false, true}) {
    SCOPED_TRACE(idle ? "idle_timeout 10 ms" : "no idle timeout");
    std::filesystem::remove_all(root());
    events_.clear();
    std::string text = sql;
    text.replace(text.find("{idle}"), 6, "");
    Pipeline p = ParsePipeline(text);
    for (auto& f : p.flows) {
      if (f.name == "w" && idle) f.streaming->watermark->idle_timeout_ms = 10;
    }
    RunOptions o;
    // fast reaches 55 s; slow stops at 12 s after the first trigger.
    o.memory_streams["fast"] = {Batch({1, 15}, {}), Batch({35}, {}), Batch({55}, {})};
    o.memory_streams["slow"] = {Batch({2, 12}, {}), Batch({}, {}), Batch({}, {})};
    RunSummary s = Run(p, o);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    // Without idleness W = min(55, 12) = 12 s: only [0, 10) closed. With it
    // the slow input stops holding W back: W = 55 s closes up to [40, 50).
    const std::string closed = idle ? "(10, 2), (20, 2), (40, 1)" : "(10, 2)";
    EXPECT_DATASET_MATCHES("w", "SELECT make_timestamp(" + std::to_string(kBase) +
                                    ")::TIMESTAMPTZ + INTERVAL (s) SECONDS AS we, n FROM (VALUES " +
                                    closed + ") AS t(s, n)");
  }
}

TEST_F(StreamIncrementalTest, AStreamJoinsStaticTablesRowByRow) {
  const char* sql = R"sql(
CREATE MATERIALIZED VIEW dim AS SELECT * FROM (VALUES ('a', 'alpha'), ('b', 'beta')) AS t(k, label);
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_memory('ev');
CREATE STREAMING TABLE labelled WITH (mode = 'incremental') AS
SELECT e.k, e.v, d.label FROM STREAM(ev) AS e LEFT JOIN dim AS d ON e.k = d.k;
CREATE STREAMING TABLE per_label WITH (mode = 'incremental', output_mode = 'update') AS
SELECT d.label, count(*) AS n FROM STREAM(ev) AS e JOIN dim AS d ON e.k = d.k GROUP BY d.label;
CREATE STREAMING TABLE known WITH (mode = 'incremental') AS
SELECT * FROM STREAM(ev) AS e SEMI JOIN dim AS d ON e.k = d.k;
)sql";
  RunOptions o;
  o.memory_streams["ev"] = {Batch({1, 2, 3}, {"a", "b", "c"}), Batch({4, 5}, {"b", "d"})};
  RunSummary r = Run(ParsePipeline(sql), o);
  ASSERT_EQ(r.status, RunPhase::kCompleted) << r.ToString();
  for (const auto& e : events_) ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
  const std::string all = "read_parquet(" + QuoteString(root() + "/ev/current/*.parquet") + ")";
  const std::string dim = "(VALUES ('a', 'alpha'), ('b', 'beta')) AS d(k, label)";
  EXPECT_DATASET_MATCHES("labelled", "SELECT e.k, e.v, d.label FROM " + all + " AS e LEFT JOIN " +
                                         dim + " ON e.k = d.k");
  EXPECT_DATASET_MATCHES("per_label", "SELECT d.label, count(*) AS n FROM " + all + " AS e JOIN " +
                                          dim + " ON e.k = d.k GROUP BY d.label");
  EXPECT_DATASET_MATCHES("known",
                         "SELECT * FROM " + all + " AS e SEMI JOIN " + dim + " ON e.k = d.k");
}

TEST_F(StreamIncrementalTest, ShapesTheOperatorsCannotRunFallBackNamingTheNode) {
  const char* sql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_memory('ev');
CREATE STREAMING TABLE d WITH (mode = 'incremental') AS
SELECT DISTINCT ON (k) k FROM STREAM(ev);
CREATE STREAMING TABLE j WITH (mode = 'incremental') AS
SELECT a.k, a.v FROM STREAM(ev) AS a JOIN STREAM(ev) AS b ON a.k = b.k;
CREATE STREAMING TABLE n WITH (mode = 'incremental', output_mode = 'complete') AS
SELECT k, max(c) AS m FROM (SELECT k, count(*) AS c FROM STREAM(ev) GROUP BY k) GROUP BY k;
CREATE MATERIALIZED VIEW dim AS SELECT * FROM (VALUES ('a'), ('z')) AS t(k);
CREATE STREAMING TABLE seen WITH (mode = 'incremental') AS
SELECT * FROM dim SEMI JOIN STREAM(ev) AS e ON dim.k = e.k;
)sql";
  RunOptions o;
  o.memory_streams["ev"] = {Batch({1, 2, 3}, {"a", "b"}), Batch({4}, {"a"})};
  RunSummary s = Run(ParsePipeline(sql), o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  std::map<std::string, std::string> why;
  for (const auto& e : events_) {
    if (e.kind == RunEvent::Kind::kFallback) why[e.flow] = e.message;
  }
  EXPECT_NE(why["d"].find("Distinct"), std::string::npos) << why["d"];
  EXPECT_NE(why["j"].find("Join inner"), std::string::npos) << why["j"];
  EXPECT_NE(why["j"].find("self-join"), std::string::npos) << why["j"];
  EXPECT_NE(why["n"].find("Aggregate"), std::string::npos) << why["n"];
  // The static side of a semi join keeps its rows by the whole stream.
  EXPECT_NE(why["seen"].find("semi join whose kept side is static"), std::string::npos)
      << why["seen"];
  EXPECT_DATASET_MATCHES("seen", "SELECT 'a' AS k");
  // They still run, in Recompute mode, with its results.
  EXPECT_DATASET_MATCHES("d", "SELECT * FROM (VALUES ('a'), ('b')) AS t(k)");
  EXPECT_DATASET_MATCHES("n", "SELECT * FROM (VALUES ('a', 3), ('b', 1)) AS t(k, m)");
}


// The same flows reading the bids through a stream view (a temporary view
// over the source, never stored) and without a mode of their own, which
// makes them incremental.
std::string StreamViewSql(const std::string& reader_mode = "") {
  std::string sql = kGenerated;
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at; (at = sql.find(from)) != std::string::npos;) sql.replace(at, from.size(), to);
  };
  replace_all("CREATE STREAMING TABLE bids AS", "CREATE TEMPORARY VIEW bids AS");
  replace_all("mode = '{mode}', ", "");
  replace_all(" WITH (mode = '{mode}')",
              reader_mode.empty() ? "" : " WITH (mode = '" + reader_mode + "')");
  return sql;
}

TEST_F(StreamIncrementalTest, AStreamViewFeedsItsReadersLikeAStoredStreamWithoutStoringIt) {
  const std::string stored = Path("stored"), view = Path("view"), pieces = Path("pieces");
  RunSummary s = RunAt("incremental", stored);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  RunOptions o;
  o.storage_root = view;
  RunSummary v = Run(ParsePipeline(StreamViewSql()), o);
  ASSERT_EQ(v.status, RunPhase::kCompleted) << v.ToString();
  EXPECT_EQ(v.mode, "streaming (incremental)");
  EXPECT_FALSE(HasRows(view, "bids"));
  EXPECT_FALSE(std::filesystem::exists(view + "/bids"));
  ExpectSameRows(stored, view, /*check_types=*/false);

  // Stopped and resumed twice: the source reads on from the committed epoch.
  for (int64_t cap : {3, 2, 0}) {
    RunOptions p;
    p.storage_root = pieces;
    p.max_triggers = cap;
    RunSummary r = Run(ParsePipeline(StreamViewSql()), p);
    ASSERT_EQ(r.status, RunPhase::kCompleted) << r.ToString();
  }
  ExpectSameRows(stored, pieces, /*check_types=*/false);
}

TEST_F(StreamIncrementalTest, ARecomputeReaderOfAStreamViewIsRefusedSayingWhy) {
  RunOptions o;
  o.storage_root = Path("recompute");
  RunSummary r = Run(ParsePipeline(StreamViewSql("recompute")), o);
  ASSERT_EQ(r.status, RunPhase::kFailed) << r.ToString();
  EXPECT_NE(r.ToString().find("a temporary view over a streaming source"), std::string::npos)
      << r.ToString();
  EXPECT_NE(r.ToString().find("incremental"), std::string::npos) << r.ToString();
}

}  // namespace
}  // namespace thund::native::testing
