// AUTO CDC query (engine/stream/cdc_apply.h) against an independent oracle:
// plain C++ that applies the changes one by one, per key, in (sequence,
// arrival) order to a live row (SCD1) or a version list (SCD2).
#include "engine/stream/cdc_apply.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "engine/duckdb/duckdb_session.h"
#include "engine/table_compare.h"

namespace thund::engine::stream {
namespace {

using testing::TablesEqualUnordered;

using Cell = std::variant<std::monostate, int64_t, std::string>;
using Row = std::vector<Cell>;

bool IsNull(const Cell& c) { return std::holds_alternative<std::monostate>(c); }

// A change feed: columns k1 k2 seq v1 v2 op arrival (arrival last, rows in
// arrival order).
const std::vector<std::string> kNames = {"k1", "k2", "seq", "v1", "v2", "op", "arrival"};
const std::vector<bool> kIsInt = {true, false, true, true, false, false, true};
constexpr size_t kSeq = 2, kOp = 5, kArrival = 6;
const char* kDeletePredicate = "op = 'DELETE'";

bool IsDelete(const Row& r) {
  return std::holds_alternative<std::string>(r[kOp]) && std::get<std::string>(r[kOp]) == "DELETE";
}

std::shared_ptr<arrow::Table> MakeTable(const std::vector<std::string>& names,
                                        const std::vector<bool>& is_int,
                                        const std::vector<Row>& rows) {
  arrow::FieldVector fields;
  arrow::ArrayVector arrays;
  for (size_t c = 0; c < names.size(); ++c) {
    std::shared_ptr<arrow::Array> array;
    if (is_int[c]) {
      arrow::Int64Builder b;
      for (const auto& r : rows) {
        EXPECT_TRUE((IsNull(r[c]) ? b.AppendNull() : b.Append(std::get<int64_t>(r[c]))).ok());
      }
      EXPECT_TRUE(b.Finish(&array).ok());
    } else {
      arrow::StringBuilder b;
      for (const auto& r : rows) {
        EXPECT_TRUE((IsNull(r[c]) ? b.AppendNull() : b.Append(std::get<std::string>(r[c]))).ok());
      }
      EXPECT_TRUE(b.Finish(&array).ok());
    }
    fields.push_back(arrow::field(names[c], is_int[c] ? arrow::int64() : arrow::utf8()));
    arrays.push_back(array);
  }
  return arrow::Table::Make(arrow::schema(fields), arrays, static_cast<int64_t>(rows.size()));
}

// ------------------------------------------------------------- oracle -----

struct Expected {
  std::vector<std::string> names;
  std::vector<bool> is_int;
  std::vector<Row> rows;
  int64_t ignored = 0;
};

Expected Oracle(const Cdc& cdc, const std::vector<Row>& feed) {
  auto index = [](const std::string& n) {
    return static_cast<size_t>(std::find(kNames.begin(), kNames.end(), n) - kNames.begin());
  };
  std::vector<size_t> keys, out, tracked;
  for (const auto& k : cdc.keys) keys.push_back(index(k));
  std::set<size_t> except;
  for (const auto& e : cdc.except_columns) except.insert(index(e));
  if (!cdc.columns.empty()) {  // a column list: everything else is left out
    std::set<size_t> listed;
    for (const auto& c : cdc.columns) listed.insert(index(c));
    for (size_t c = 0; c < kNames.size(); ++c) {
      if (!listed.count(c)) except.insert(c);
    }
  }
  std::set<size_t> track, untracked;
  for (const auto& c : cdc.track_history) track.insert(index(c));
  for (const auto& c : cdc.track_history_except) untracked.insert(index(c));
  Expected e;
  for (size_t c = 0; c < kNames.size(); ++c) {
    if (c == kArrival || except.count(c)) continue;
    out.push_back(c);
    e.names.push_back(kNames[c]);
    e.is_int.push_back(kIsInt[c]);
    const bool chosen = track.empty() ? !untracked.count(c) : track.count(c) > 0;
    if (c != kSeq && std::find(keys.begin(), keys.end(), c) == keys.end() && chosen) {
      tracked.push_back(c);
    }
  }
  auto project = [](const Row& r, const std::vector<size_t>& cols) {
    Row p;
    for (size_t c : cols) p.push_back(r[c]);
    return p;
  };
  std::map<Row, std::vector<Row>> by_key;  // changes per key, arrival order
  for (const auto& r : feed) {
    bool bad = IsNull(r[kSeq]);
    for (size_t k : keys) bad = bad || IsNull(r[k]);
    if (bad) {
      ++e.ignored;
      continue;
    }
    by_key[project(r, keys)].push_back(r);
  }
  for (auto& [key, changes] : by_key) {
    std::stable_sort(changes.begin(), changes.end(), [](const Row& a, const Row& b) {
      return std::get<int64_t>(a[kSeq]) < std::get<int64_t>(b[kSeq]);
    });
    if (cdc.scd_type == 1) {
      std::optional<Row> live;
      for (const auto& c : changes) {
        if (IsDelete(c)) {
          live.reset();
        } else {
          live = c;
        }
      }
      if (live) e.rows.push_back(project(*live, out));
      continue;
    }
    struct Version {
      Row row;
      Cell start, end;
    };
    std::vector<Version> versions;
    constexpr size_t kNone = static_cast<size_t>(-1);
    size_t open = kNone;  // index of the open version
    for (size_t i = 0; i < changes.size(); ++i) {
      const Row& c = changes[i];
      // Equal sequence: only the last arrival takes effect.
      if (i + 1 < changes.size() && changes[i + 1][kSeq] == c[kSeq]) continue;
      if (IsDelete(c)) {
        if (open != kNone) versions[open].end = c[kSeq];
        open = kNone;
        continue;
      }
      if (open != kNone && project(versions[open].row, tracked) == project(c, tracked)) continue;
      if (open != kNone) versions[open].end = c[kSeq];
      versions.push_back({c, c[kSeq], Cell{}});
      open = versions.size() - 1;
    }
    for (const auto& v : versions) {
      Row r = project(v.row, out);
      r.push_back(v.start);
      r.push_back(v.end);
      e.rows.push_back(std::move(r));
    }
  }
  if (cdc.scd_type == 2) {
    e.names.insert(e.names.end(), {"__START_AT", "__END_AT"});
    e.is_int.insert(e.is_int.end(), {true, true});
  }
  return e;
}

// -------------------------------------------------------------- feeds -----

// Random changes over a small key space: out-of-order and tied sequences,
// exact duplicates, deletes (also of unknown keys), re-inserts, NULL keys and
// sequences, NULL values and NULL ops.
std::vector<Row> RandomFeed(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  auto pct = [&](int p) { return static_cast<int>(rng() % 100) < p; };
  auto pick = [&](int m) { return static_cast<int64_t>(rng() % m); };
  const std::vector<std::string> k2s = {"a", "b", "c"};
  const std::vector<std::string> v2s = {"x", "y"};
  std::vector<Row> feed;
  for (int i = 0; i < n; ++i) {
    Row r(kNames.size());
    if (!feed.empty() && pct(5)) {
      r = feed[rng() % feed.size()];  // exact duplicate (new arrival)
    } else {
      r[0] = pct(3) ? Cell{} : Cell{pick(12)};
      r[1] = pct(3) ? Cell{} : Cell{k2s[rng() % k2s.size()]};
      r[kSeq] = pct(3) ? Cell{} : Cell{pick(n / 8 + 1)};
      r[3] = pct(10) ? Cell{} : Cell{pick(3)};
      r[4] = pct(10) ? Cell{} : Cell{v2s[rng() % v2s.size()]};
      r[kOp] = pct(3) ? Cell{} : Cell{std::string(pct(20) ? "DELETE" : "UPSERT")};
    }
    r[kArrival] = Cell{static_cast<int64_t>(i)};
    feed.push_back(std::move(r));
  }
  return feed;
}

class CdcApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = DuckDbSession::Open();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(s).ValueUnsafe();
  }

  // Registers `feed` (physically shuffled: the query must not rely on row
  // order) and checks the CDC query and ignored count against the oracle.
  void Check(const Cdc& cdc, std::vector<Row> feed, uint32_t shuffle_seed = 1) {
    const Expected expected = Oracle(cdc, feed);
    std::shuffle(feed.begin(), feed.end(), std::mt19937(shuffle_seed));
    THUND_ASSERT_OK(session_->RegisterArrow("changes", MakeTable(kNames, kIsInt, feed)));
    THUND_ASSERT_OK_AND_ASSIGN(CdcQuery q, MakeCdcQuery(cdc, "changes", kNames, "arrival"));
    THUND_ASSERT_OK_AND_ASSIGN(auto actual, session_->Query(q.sql));
    EXPECT_TRUE(
        TablesEqualUnordered(*MakeTable(expected.names, expected.is_int, expected.rows), *actual))
        << cdc.ToString() << "\n"
        << q.sql;
    THUND_ASSERT_OK_AND_ASSIGN(auto ignored, session_->Query(q.ignored_count_sql));
    ASSERT_EQ(ignored->num_rows(), 1);
    THUND_ASSERT_OK_AND_ASSIGN(auto count, ignored->column(0)->GetScalar(0));
    EXPECT_EQ(count->ToString(), std::to_string(expected.ignored));
  }

  std::unique_ptr<DuckDbSession> session_;
};

Cdc MakeCdc(std::vector<std::string> keys, int scd, std::vector<std::string> except = {"op"}) {
  Cdc c;
  c.keys = std::move(keys);
  c.sequence_by = "seq";
  c.apply_as_deletes = kDeletePredicate;
  c.except_columns = std::move(except);
  c.scd_type = scd;
  return c;
}

Cdc WithColumns(Cdc c, std::vector<std::string> columns) {
  c.columns = std::move(columns);
  return c;
}

Cdc Tracking(Cdc c, std::vector<std::string> track, std::vector<std::string> untracked) {
  c.track_history = std::move(track);
  c.track_history_except = std::move(untracked);
  return c;
}

TEST_F(CdcApplyTest, RandomFeedsMatchOracle) {
  const std::vector<Cdc> configs = {
      MakeCdc({"k1"}, 1),
      MakeCdc({"k1", "k2"}, 1),
      MakeCdc({"k1"}, 1, {"op", "v2", "seq"}),
      MakeCdc({"k1"}, 2),
      MakeCdc({"k1", "k2"}, 2),
      MakeCdc({"k2", "k1"}, 2, {"op", "v2"}),
      MakeCdc({"k1"}, 2, {"op", "seq"}),
      MakeCdc({"k1", "k2"}, 2, {"op", "v1", "v2"}),  // nothing tracked
      MakeCdc({"k1"}, 1, {}),
      MakeCdc({"k1", "k2"}, 2, {}),
      // Column lists (COLUMNS (a, b) / column_list) and history tracked on
      // chosen columns (TRACK HISTORY ON).
      WithColumns(MakeCdc({"k1"}, 1, {}), {"k1", "v1", "seq"}),
      WithColumns(MakeCdc({"k1", "k2"}, 2, {}), {"k2", "v2", "k1"}),
      Tracking(MakeCdc({"k1"}, 2), {"v1"}, {}),
      Tracking(MakeCdc({"k1", "k2"}, 2), {}, {"v1"}),
      Tracking(WithColumns(MakeCdc({"k1"}, 2, {}), {"k1", "seq", "v1", "v2"}), {"v2"}, {}),
  };
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    const std::vector<Row> feed = RandomFeed(seed, 3000);
    for (const auto& cdc : configs) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      Check(cdc, feed, seed);
    }
  }
}

TEST_F(CdcApplyTest, TimestampSequenceGivesTimestampVersionBounds) {
  const std::vector<Row> feed = RandomFeed(8, 800);
  THUND_ASSERT_OK(session_->RegisterArrow("raw", MakeTable(kNames, kIsInt, feed)));
  THUND_ASSERT_OK(
      session_->Execute("CREATE OR REPLACE TEMP VIEW changes_ts AS "
                        "SELECT * REPLACE (make_timestamp(seq) AS seq) FROM raw"));
  for (int scd : {1, 2}) {
    const Cdc cdc = MakeCdc({"k1", "k2"}, scd);
    const Expected expected = Oracle(cdc, feed);
    THUND_ASSERT_OK_AND_ASSIGN(CdcQuery q, MakeCdcQuery(cdc, "changes_ts", kNames, "arrival"));
    THUND_ASSERT_OK_AND_ASSIGN(auto typed, session_->Query(q.sql));
    const std::string back = scd == 1 ? "epoch_us(seq) AS seq"
                                      : "epoch_us(seq) AS seq, epoch_us(__START_AT) AS __START_AT, "
                                        "epoch_us(__END_AT) AS __END_AT";
    THUND_ASSERT_OK_AND_ASSIGN(
        auto actual, session_->Query("SELECT * REPLACE (" + back + ") FROM (" + q.sql + ")"));
    EXPECT_TRUE(
        TablesEqualUnordered(*MakeTable(expected.names, expected.is_int, expected.rows), *actual));
    if (scd == 2) {
      const auto ts = arrow::timestamp(arrow::TimeUnit::MICRO);
      EXPECT_TRUE(typed->schema()->GetFieldByName("__START_AT")->type()->Equals(ts));
      EXPECT_TRUE(typed->schema()->GetFieldByName("__END_AT")->type()->Equals(ts));
    }
  }
}

TEST_F(CdcApplyTest, NoDeletePredicate) {
  Cdc cdc = MakeCdc({"k1"}, 2);
  cdc.apply_as_deletes.clear();
  std::vector<Row> feed = RandomFeed(9, 500);
  for (auto& r : feed) r[kOp] = Cell{std::string("UPSERT")};  // the oracle's view of "none"
  Check(cdc, feed);
}

Row Change(int64_t key, int64_t seq, int64_t v, const char* op, int64_t arrival) {
  return Row{Cell{key},    Cell{std::string("a")}, Cell{seq},
             Cell{v},      Cell{std::string("x")}, Cell{std::string(op)},
             Cell{arrival}};
}

TEST_F(CdcApplyTest, Scd2SameValuesDoNotOpenAVersion) {
  const std::vector<Row> feed = {Change(1, 10, 5, "UPSERT", 0), Change(1, 20, 5, "UPSERT", 1),
                                 Change(1, 30, 6, "UPSERT", 2)};
  THUND_ASSERT_OK(session_->RegisterArrow("changes", MakeTable(kNames, kIsInt, feed)));
  THUND_ASSERT_OK_AND_ASSIGN(CdcQuery q,
                             MakeCdcQuery(MakeCdc({"k1"}, 2), "changes", kNames, "arrival"));
  THUND_ASSERT_OK_AND_ASSIGN(auto actual, session_->Query(q.sql));
  // Hand-written: the seq-20 change repeats v1=5, so the first version spans 10..30.
  const std::vector<Row> want = {
      {Cell{int64_t{1}}, Cell{std::string("a")}, Cell{int64_t{10}}, Cell{int64_t{5}},
       Cell{std::string("x")}, Cell{int64_t{10}}, Cell{int64_t{30}}},
      {Cell{int64_t{1}}, Cell{std::string("a")}, Cell{int64_t{30}}, Cell{int64_t{6}},
       Cell{std::string("x")}, Cell{int64_t{30}}, Cell{}}};
  EXPECT_TRUE(
      TablesEqualUnordered(*MakeTable({"k1", "k2", "seq", "v1", "v2", "__START_AT", "__END_AT"},
                                      {true, false, true, true, false, true, true}, want),
                           *actual));
  Check(MakeCdc({"k1"}, 2), feed);
}

TEST_F(CdcApplyTest, DeleteOfUnknownKeyIsANoOp) {
  const std::vector<Row> feed = {Change(1, 10, 5, "UPSERT", 0), Change(2, 11, 7, "DELETE", 1),
                                 Change(3, 5, 1, "DELETE", 2), Change(3, 6, 1, "DELETE", 3)};
  for (int scd : {1, 2}) {
    THUND_ASSERT_OK(session_->RegisterArrow("changes", MakeTable(kNames, kIsInt, feed)));
    THUND_ASSERT_OK_AND_ASSIGN(CdcQuery q,
                               MakeCdcQuery(MakeCdc({"k1"}, scd), "changes", kNames, "arrival"));
    THUND_ASSERT_OK_AND_ASSIGN(auto actual, session_->Query(q.sql));
    EXPECT_EQ(actual->num_rows(), 1) << "scd " << scd;  // only key 1
    Check(MakeCdc({"k1"}, scd), feed);
  }
}

TEST_F(CdcApplyTest, ReinsertAfterDeleteOpensANewVersion) {
  const std::vector<Row> feed = {Change(1, 1, 5, "UPSERT", 0), Change(1, 2, 5, "DELETE", 1),
                                 Change(1, 3, 5, "UPSERT", 2), Change(1, 3, 9, "UPSERT", 3),
                                 Change(1, 3, 5, "UPSERT", 4)};
  for (int scd : {1, 2}) Check(MakeCdc({"k1"}, scd), feed);
  THUND_ASSERT_OK_AND_ASSIGN(CdcQuery q,
                             MakeCdcQuery(MakeCdc({"k1"}, 2), "changes", kNames, "arrival"));
  THUND_ASSERT_OK_AND_ASSIGN(auto actual, session_->Query(q.sql));
  EXPECT_EQ(actual->num_rows(), 2);  // [1,2) and [3, open)
}

TEST_F(CdcApplyTest, UnknownColumnsAreErrors) {
  auto expect_invalid = [&](const Cdc& cdc, const std::string& needle) {
    auto q = MakeCdcQuery(cdc, "changes", kNames, "arrival");
    ASSERT_FALSE(q.ok()) << cdc.ToString();
    EXPECT_TRUE(q.status().IsInvalid());
    EXPECT_NE(q.status().message().find(needle), std::string::npos) << q.status().ToString();
  };
  Cdc c = MakeCdc({"k3"}, 1);
  expect_invalid(c, "key column 'k3'");
  c = MakeCdc({"k1"}, 1);
  c.sequence_by = "sequ";
  expect_invalid(
      c, "sequence_by column 'sequ' is not a column of the change feed (did you mean 'seq'?)");
  expect_invalid(MakeCdc({"k1"}, 2, {"opp"}), "except_columns entry 'opp'");
  expect_invalid(MakeCdc({"k1"}, 2, {"k1"}), "drops key column 'k1'");
  expect_invalid(MakeCdc({}, 1), "no keys");
  expect_invalid(WithColumns(MakeCdc({"k1"}, 1, {}), {"v1", "seq"}), "leave out key column 'k1'");
  expect_invalid(WithColumns(MakeCdc({"k1"}, 1), {"k1", "v1"}), "both columns and except");
  expect_invalid(WithColumns(MakeCdc({"k1"}, 1, {}), {"k1", "v9"}), "columns entry 'v9'");
  expect_invalid(Tracking(MakeCdc({"k1"}, 1), {"v1"}, {}), "needs SCD type 2");
  expect_invalid(Tracking(MakeCdc({"k1"}, 2), {"v1"}, {"v2"}), "both track_history");
  expect_invalid(Tracking(MakeCdc({"k1"}, 2), {"vv"}, {}), "track_history entry 'vv'");
  expect_invalid(MakeCdc({"k1"}, 3), "scd_type must be 1 or 2");
  auto q = MakeCdcQuery(MakeCdc({"k1"}, 1), "changes", kNames, "arrived");
  EXPECT_FALSE(q.ok());
  // Case-insensitive, like DuckDB identifiers; output keeps the feed's spelling.
  EXPECT_TRUE(MakeCdcQuery(MakeCdc({"K1"}, 2, {"OP"}), "changes", kNames, "ARRIVAL").ok());
}

TEST_F(CdcApplyTest, CaseInsensitiveNamesGiveTheSameResult) {
  const std::vector<Row> feed = RandomFeed(5, 400);
  Cdc upper = MakeCdc({"K1", "K2"}, 2, {"OP"});
  upper.sequence_by = "SEQ";
  const Expected expected = Oracle(MakeCdc({"k1", "k2"}, 2, {"op"}), feed);
  THUND_ASSERT_OK(session_->RegisterArrow("changes", MakeTable(kNames, kIsInt, feed)));
  THUND_ASSERT_OK_AND_ASSIGN(CdcQuery q, MakeCdcQuery(upper, "changes", kNames, "arrival"));
  THUND_ASSERT_OK_AND_ASSIGN(auto actual, session_->Query(q.sql));
  EXPECT_TRUE(
      TablesEqualUnordered(*MakeTable(expected.names, expected.is_int, expected.rows), *actual));
}

}  // namespace
}  // namespace thund::engine::stream
