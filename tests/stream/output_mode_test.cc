// Output modes (engine/stream/output_mode.h) simulated over many triggers:
// random event data cut into triggers in several ways, the flow's query re-run
// over the rows seen so far, the mode's SQL producing delta and state. The
// oracle is DuckDB running the same query as a batch over the whole data (or
// over the prefix seen), compared as multisets of rows.
#include "engine/stream/output_mode.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/duckdb/duckdb_session.h"
#include "engine/table_compare.h"
#include "thund/sql_dialect.h"

namespace thund::engine::stream {
namespace {

using testing::RowStrings;
using testing::TablesEqualUnordered;
using TablePtr = std::shared_ptr<arrow::Table>;

constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kDisorder = 2 * kSecond;  // an event is at most this far behind the clock
constexpr int64_t kDelay = kDisorder;       // watermark = max event time - kDelay

// events(ts, k, v) in arrival order: ts follows a clock advancing by up to
// 1.5 s per row, minus up to kDisorder of disorder; k has NULLs; about 5% of
// rows repeat the previous row exactly.
TablePtr RandomEvents(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO),
                             arrow::default_memory_pool());
  arrow::Int64Builder k, v;
  int64_t clock = 1'700'000'000 * kSecond;
  int64_t last_ts = 0, last_k = 0, last_v = 0;
  bool last_null = false;
  for (int i = 0; i < n; ++i) {
    if (i > 0 && rng() % 100 < 5) {
      // exact duplicate of the previous row
    } else {
      clock += static_cast<int64_t>(rng() % (3 * kSecond / 2));
      last_ts = clock - static_cast<int64_t>(rng() % kDisorder);
      last_null = rng() % 100 < 5;
      last_k = static_cast<int64_t>(rng() % 6);
      last_v = static_cast<int64_t>(rng() % 100);
    }
    EXPECT_TRUE(ts.Append(last_ts).ok());
    EXPECT_TRUE((last_null ? k.AppendNull() : k.Append(last_k)).ok());
    EXPECT_TRUE(v.Append(last_v).ok());
  }
  auto schema =
      arrow::schema({arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
                     arrow::field("k", arrow::int64()), arrow::field("v", arrow::int64())});
  return arrow::Table::Make(schema, {*ts.Finish(), *k.Finish(), *v.Finish()});
}

// Ways to cut n rows into triggers: cumulative row counts, the last being n.
// Includes one trigger, one row per trigger (small n) and random cuts with
// empty triggers.
std::vector<std::vector<int64_t>> Splittings(uint32_t seed, int64_t n) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int64_t>> out = {{n}};
  if (n <= 150) {
    std::vector<int64_t> each;
    for (int64_t i = 1; i <= n; ++i) each.push_back(i);
    out.push_back(each);
  }
  for (int s = 0; s < 3; ++s) {
    std::vector<int64_t> cuts;
    const int triggers = 3 + static_cast<int>(rng() % 25);
    for (int t = 0; t < triggers; ++t) cuts.push_back(static_cast<int64_t>(rng() % (n + 1)));
    cuts.push_back(cuts.empty() ? n : cuts.back());  // an empty trigger
    cuts.push_back(n);
    std::sort(cuts.begin(), cuts.end());
    out.push_back(cuts);
  }
  return out;
}

// Rows of `t` as a sorted multiset of strings.
std::vector<std::string> Sorted(const arrow::Table& t) {
  auto rows = RowStrings(t);
  std::sort(rows.begin(), rows.end());
  return rows;
}

class OutputModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = DuckDbSession::Open();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(s).ValueUnsafe();
  }

  TablePtr Run(const std::string& sql) {
    auto t = session_->Query(sql);
    EXPECT_TRUE(t.ok()) << t.status().ToString() << "\n" << sql;
    return t.ok() ? *t : nullptr;
  }
  void Register(const std::string& name, const TablePtr& t) {
    auto st = session_->RegisterArrow(name, t);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  // The flow's query over the first `rows` events.
  TablePtr ResultOver(const TablePtr& events, int64_t rows, const std::string& query) {
    Register("events", events->Slice(0, rows));
    return Run(query);
  }
  TablePtr Union(const TablePtr& a, const TablePtr& b) {
    Register("__a", a);
    Register("__b", b);
    return Run("SELECT * FROM __a UNION ALL SELECT * FROM __b");
  }

  std::unique_ptr<DuckDbSession> session_;
};

// ----------------------------------------------------------- Complete -----

TEST_F(OutputModeTest, CompleteStateIsTheBatchResult) {
  const std::string query = "SELECT k, count(*) AS c, sum(v) AS s FROM events GROUP BY k";
  const TablePtr events = RandomEvents(7, 400);
  const TablePtr batch = ResultOver(events, events->num_rows(), query);
  for (const auto& cuts : Splittings(7, events->num_rows())) {
    TablePtr state;
    for (int64_t cut : cuts) state = ResultOver(events, cut, query);  // delta = state = result
    EXPECT_TRUE(TablesEqualUnordered(*batch, *state));
  }
}

// ---------------------------------------------------- Append (no agg) -----

TEST_F(OutputModeTest, AppendEmitsEachNewRowOnceAndAccumulatesTheBatchResult) {
  const std::vector<std::string> queries = {
      "SELECT k, v, ts FROM events WHERE v % 3 <> 0",
      "SELECT k, v % 4 AS b FROM events",  // many equal rows: a multiset difference
      "SELECT * FROM events",
  };
  for (uint32_t seed : {1u, 2u, 3u}) {
    const TablePtr events = RandomEvents(seed, seed == 1 ? 70 : 800);
    for (const auto& query : queries) {
      const TablePtr batch = ResultOver(events, events->num_rows(), query);
      for (const auto& cuts : Splittings(seed, events->num_rows())) {
        TablePtr previous = *arrow::Table::MakeEmpty(batch->schema());
        TablePtr state = previous;
        for (int64_t cut : cuts) {
          const TablePtr result = ResultOver(events, cut, query);
          Register("result", result);
          Register("previous", previous);
          const TablePtr delta = Run(AppendDeltaSql("result", "previous"));
          ASSERT_TRUE(delta);
          // A monotone query: the delta is exactly the result's growth.
          EXPECT_EQ(delta->num_rows(), result->num_rows() - previous->num_rows());
          state = Union(state, delta);
          EXPECT_TRUE(TablesEqualUnordered(*result, *state)) << query << " cut " << cut;
          previous = result;
        }
        EXPECT_TRUE(TablesEqualUnordered(*batch, *state)) << query;
      }
    }
  }
}

// ------------------------------------------------------------- Update -----

struct UpdateCase {
  std::string query;
  std::vector<std::string> keys;  // what UpdateKeyColumns must find
};

TEST_F(OutputModeTest, UpdateDeltaIsTheChangedRowsAndStateTracksTheBatchResult) {
  const std::vector<UpdateCase> cases = {
      {"SELECT k, count(*) AS c, sum(v) AS s, max(ts) AS latest FROM events GROUP BY k", {"k"}},
      {"SELECT k, v % 2 AS parity, count(*) AS c FROM events GROUP BY k, v % 2", {"k", "parity"}},
      {"SELECT count(*) AS c, sum(v) AS s FROM events", {}},  // global aggregate
      {"SELECT k, c * 2 AS c2 FROM (SELECT k, count(*) AS c FROM events GROUP BY k)", {"k"}},
      {"SELECT {'start': time_bucket(INTERVAL 10 SECOND, ts), 'end': time_bucket(INTERVAL 10 "
       "SECOND, ts) + INTERVAL 10 SECOND} AS \"window\", k, max(v) AS m FROM events GROUP BY ALL",
       {"window", "k"}},
  };
  for (uint32_t seed : {11u, 12u}) {
    const TablePtr events = RandomEvents(seed, seed == 11 ? 70 : 800);
    for (const auto& c : cases) {
      THUND_ASSERT_OK_AND_ASSIGN(auto keys, UpdateKeyColumns(c.query));
      ASSERT_EQ(keys, c.keys) << c.query;
      const TablePtr batch = ResultOver(events, events->num_rows(), c.query);
      for (const auto& cuts : Splittings(seed, events->num_rows())) {
        TablePtr previous = *arrow::Table::MakeEmpty(batch->schema());
        int64_t last_cut = -1;
        for (int64_t cut : cuts) {
          const TablePtr result = ResultOver(events, cut, c.query);
          Register("result", result);
          Register("previous", previous);
          const TablePtr delta = Run(UpdateDeltaSql("result", "previous"));
          ASSERT_TRUE(delta);
          // Oracle for the delta: distinct result rows not among the previous rows.
          const auto before = RowStrings(*previous);
          const std::set<std::string> old(before.begin(), before.end());
          std::set<std::string> want;
          for (const auto& r : RowStrings(*result)) {
            if (!old.count(r)) want.insert(r);
          }
          const auto got = Sorted(*delta);
          EXPECT_EQ(std::vector<std::string>(want.begin(), want.end()), got) << c.query;
          if (cut == last_cut) {
            EXPECT_EQ(delta->num_rows(), 0);
          }
          Register("delta", delta);
          previous = Run(UpsertStateSql("previous", "delta", keys));
          ASSERT_TRUE(previous);
          // Groups never vanish here, so the upserted state is the result now.
          EXPECT_TRUE(TablesEqualUnordered(*result, *previous)) << c.query << " cut " << cut;
          last_cut = cut;
        }
        EXPECT_TRUE(TablesEqualUnordered(*batch, *previous)) << c.query;
      }
    }
  }
}

// ---------------------------------------------------- windowed Append -----

// Window end (microseconds, -1 for NULL) of each row of `t`, in row order.
std::vector<int64_t> WindowEnds(const arrow::Table& t) {
  std::vector<int64_t> out;
  const int s = t.schema()->GetFieldIndex("window");
  const int ss = t.schema()->GetFieldIndex("session_window");
  const int idx = s >= 0 ? s : ss >= 0 ? ss : t.schema()->GetFieldIndex("window_end");
  for (const auto& chunk : t.column(idx)->chunks()) {
    std::shared_ptr<arrow::Array> ends = chunk;
    if (chunk->type_id() == arrow::Type::STRUCT) {
      ends = std::static_pointer_cast<arrow::StructArray>(chunk)->GetFieldByName("end");
    }
    auto ts = std::static_pointer_cast<arrow::TimestampArray>(ends);
    for (int64_t i = 0; i < ts->length(); ++i) {
      out.push_back(chunk->IsNull(i) || ts->IsNull(i) ? -1 : ts->Value(i));
    }
  }
  return out;
}

// Watermark after the first `rows` events: max ts - kDelay.
int64_t WatermarkAfter(const arrow::Table& events, int64_t rows) {
  if (rows == 0) return kNoWatermark;
  auto ts = std::static_pointer_cast<arrow::TimestampArray>(
      events.Slice(0, rows)->column(0)->chunk(0));  // RandomEvents: one chunk
  int64_t max = ts->Value(0);
  for (int64_t i = 0; i < rows; ++i) max = std::max(max, ts->Value(i));
  return max - kDelay;
}

TEST_F(OutputModeTest, WindowedAppendEmitsClosedWindowsWithFinalValues) {
  const std::vector<std::string> spark_queries = {
      "SELECT window, k, count(*) AS c, sum(v) AS s FROM events GROUP BY window(ts, '10 "
      "seconds'), k",
      "SELECT window, count(*) AS c FROM events GROUP BY window(ts, '10 seconds', '4 seconds')",
      "SELECT session_window, k, count(*) AS c, max(v) AS m FROM events "
      "GROUP BY session_window(ts, '3 seconds'), k",
      "SELECT window_start, window_end, k, count(*) AS c FROM TUMBLE(TABLE events, "
      "DESCRIPTOR(ts), INTERVAL '10' SECONDS) GROUP BY window_start, window_end, k",
      "SELECT k, window_end, count(*) AS c FROM SESSION(TABLE events PARTITION BY k, "
      "DESCRIPTOR(ts), INTERVAL '3' SECONDS) GROUP BY k, window_start, window_end",
      "SELECT time_bucket(INTERVAL 5 SECOND, ts) + INTERVAL 5 SECOND AS window_end, k, "
      "sum(v) AS s FROM events GROUP BY ALL",
  };
  const TablePtr events = RandomEvents(21, 1000);
  ASSERT_EQ(events->column(0)->num_chunks(), 1);
  for (const auto& spark : spark_queries) {
    THUND_ASSERT_OK_AND_ASSIGN(std::string query, SparkToDuckDb(spark));
    const TablePtr batch = ResultOver(events, events->num_rows(), query);
    ASSERT_TRUE(batch);
    const auto end = FindWindowEnd(*batch->schema());
    ASSERT_TRUE(end) << batch->schema()->ToString();
    const auto batch_rows = RowStrings(*batch);
    const auto batch_ends = WindowEnds(*batch);
    for (const auto& cuts : Splittings(21, events->num_rows())) {
      TablePtr state = *arrow::Table::MakeEmpty(batch->schema());
      int64_t w_prev = kNoWatermark;
      for (size_t i = 0; i <= cuts.size(); ++i) {
        // After the last cut: the input is exhausted, the watermark +infinity.
        const int64_t cut = i < cuts.size() ? cuts[i] : events->num_rows();
        const int64_t w_now = i < cuts.size() ? WatermarkAfter(*events, cut) : kEndOfInput;
        const TablePtr result = ResultOver(events, cut, query);
        Register("result", result);
        Register("previous", state);
        // No late rows in this data: nothing behind the watermark changes.
        const TablePtr changed = Run(ChangedClosedWindowsSql("result", "previous", *end, w_prev));
        ASSERT_TRUE(changed);
        EXPECT_EQ(changed->num_rows(), 0) << spark;
        const TablePtr delta = Run(WindowedAppendDeltaSql("result", *end, w_prev, w_now));
        ASSERT_TRUE(delta);
        state = Union(state, delta);
        w_prev = std::max(w_prev, w_now);
        // Oracle: the batch rows of every window closed by now, with final values.
        std::vector<std::string> want;
        for (size_t r = 0; r < batch_rows.size(); ++r) {
          if (w_prev == kEndOfInput || (batch_ends[r] >= 0 && batch_ends[r] <= w_prev)) {
            want.push_back(batch_rows[r]);
          }
        }
        std::sort(want.begin(), want.end());
        EXPECT_EQ(want, Sorted(*state)) << spark << " cut " << cut;
      }
      EXPECT_TRUE(TablesEqualUnordered(*batch, *state)) << spark;
    }
  }
}

TEST_F(OutputModeTest, LateRowsInClosedWindowsAreCountedNotEmitted) {
  const std::string query =
      "SELECT time_bucket(INTERVAL 10 SECOND, ts) + INTERVAL 10 SECOND AS window_end, "
      "count(*) AS c FROM events GROUP BY ALL";
  const TablePtr events = RandomEvents(5, 300);
  const int64_t w = WatermarkAfter(*events, 200);
  const TablePtr before = ResultOver(events, 200, query);
  Register("result", before);
  Register("previous", *arrow::Table::MakeEmpty(before->schema()));
  const TablePtr emitted = Run(WindowedAppendDeltaSql("result", "window_end", kNoWatermark, w));
  ASSERT_TRUE(emitted);
  ASSERT_GT(emitted->num_rows(), 0);
  // One late row per closed window: each of their counts changes.
  const TablePtr late =
      Run("SELECT * FROM events UNION ALL SELECT window_end - INTERVAL 1 SECOND, 0, 0 FROM "
          "result WHERE epoch_us(window_end) <= " +
          std::to_string(w));
  Register("events", late);
  const TablePtr after = Run(query);
  Register("result", after);
  Register("previous", emitted);
  const TablePtr changed = Run(ChangedClosedWindowsSql("result", "previous", "window_end", w));
  ASSERT_TRUE(changed);
  EXPECT_EQ(changed->num_rows(), emitted->num_rows());
  // Closed windows are not emitted again.
  const TablePtr again = Run(WindowedAppendDeltaSql("result", "window_end", w, w + 1));
  ASSERT_TRUE(again);
  for (int64_t end : WindowEnds(*again)) EXPECT_GT(end, w);
}

TEST_F(OutputModeTest, WindowedAppendBoundsAreExclusiveThenInclusive) {
  // Window ends at 10 s, 20 s, 30 s and NULL (microseconds since the epoch).
  Register("result", Run("SELECT make_timestamp(e * 1000000) AS window_end, e AS id FROM "
                         "(VALUES (10), (20), (30), (NULL)) v(e)"));
  auto ids = [&](int64_t w_prev, int64_t w_now) {
    const TablePtr t =
        Run("SELECT id FROM (" + WindowedAppendDeltaSql("result", "window_end", w_prev, w_now) +
            ") ORDER BY id NULLS LAST");
    std::vector<std::string> out;
    for (const auto& r : RowStrings(*t)) out.push_back(r);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(ids(kNoWatermark, 20 * kSecond), (V{"10", "20"}));
  EXPECT_EQ(ids(kNoWatermark, 20 * kSecond - 1), (V{"10"}));
  EXPECT_EQ(ids(10 * kSecond, 30 * kSecond), (V{"20", "30"}));
  EXPECT_EQ(ids(10 * kSecond, kEndOfInput), (V{"20", "30", "∅"}));
  EXPECT_EQ(ids(kNoWatermark, kEndOfInput), (V{"10", "20", "30", "∅"}));
  EXPECT_EQ(ids(30 * kSecond, kEndOfInput), (V{"∅"}));
  EXPECT_EQ(ids(kEndOfInput, kEndOfInput), V{});
  EXPECT_EQ(ids(20 * kSecond, 10 * kSecond), V{});
}

TEST_F(OutputModeTest, WindowedAppendWithoutAdvanceIsEmpty) {
  Register("result", RandomEvents(3, 10));
  const TablePtr t = Run(WindowedAppendDeltaSql("result", "ts", 5, 5));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->num_rows(), 0);
}

}  // namespace
}  // namespace thund::engine::stream
