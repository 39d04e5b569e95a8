// SparkToDuckDb: the translation is idempotent, leaves DuckDB SQL alone, and
// the translated queries compute what Spark computes. Window bucketing is
// checked against an oracle computed here in C++ (and against DuckDB's own
// time_bucket, a separate code path), not against the code under test.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sql/duckdb_runner.h"
#include "thund/sql_dialect.h"

namespace thund {
namespace {

using testing::DuckDbRunner;

std::string Tr(const std::string& sql) {
  auto r = SparkToDuckDb(sql);
  EXPECT_TRUE(r.ok()) << r.status().ToString() << "\nquery: " << sql;
  return r.ok() ? *r : std::string();
}

// One value of a one-row, one-column Spark query, run through the translation.
std::string Value(DuckDbRunner& db, const std::string& spark) {
  auto rows = db.Rows(Tr(spark));
  if (rows.size() != 1 || rows[0].size() != 1) {
    ADD_FAILURE() << "expected one value from: " << spark;
    return "";
  }
  return rows[0][0];
}

TEST(SparkToDuckDb, LeavesDuckDbSqlUnchanged) {
  const char* kQueries[] = {
      "SELECT a, b FROM t WHERE x > 1",
      "SELECT * FROM read_parquet('data/*.parquet')",
      "SELECT \"col name\", \"select\" FROM t",
      "SELECT list_filter([1, 2], x -> x > 1)",
      "WITH c AS (SELECT 1 AS a) SELECT a FROM c",
      "SELECT time_bucket(INTERVAL '10 seconds', ts) AS b, count(*) FROM t GROUP BY ALL",
      "SELECT 'it''s'",
      "SELECT x::INTEGER[] FROM t",
      "SELECT * FROM range(3) AS r(i)",
      "SELECT date_add(d, INTERVAL 1 DAY) FROM t",
      "SELECT strftime(ts, '%Y-%m-%d') FROM t",
      "SELECT count(*) FILTER (WHERE a > 1) FROM t",
      "SELECT sum(x) OVER w FROM t WINDOW w AS (PARTITION BY a ORDER BY b)",
      "SELECT a FROM t1 JOIN t2 USING (a) WHERE EXISTS (SELECT 1 FROM t3)",
      "SELECT CAST(x AS DECIMAL(10, 2)), INTERVAL 10 SECONDS, INTERVAL '5' MINUTE FROM t",
      "SELECT * EXCLUDE (a) FROM t",
      "SELECT x FROM t WHERE x = ANY (SELECT y FROM u)",
      "-- a comment\nSELECT /* inline */ 1",
  };
  for (const char* q : kQueries) EXPECT_EQ(Tr(q), q);
}

TEST(SparkToDuckDb, IsIdempotent) {
  const char* kQueries[] = {
      "SELECT * FROM STREAM(events)",
      "SELECT a FROM STREAM events e WHERE x = \"abc\"",
      "SELECT window.start, window.end, count(*) FROM STREAM events WATERMARK ts DELAY OF "
      "INTERVAL 10 SECONDS GROUP BY window(ts, '10 seconds')",
      "SELECT window.start FROM events GROUP BY window(ts, '10 seconds', '5 seconds')",
      "SELECT k, session_window.start, count(*) FROM events GROUP BY k, session_window(ts, '1 "
      "minute')",
      "SELECT window_start, count(*) FROM TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' "
      "MINUTE) "
      "GROUP BY window_start",
      "SELECT * FROM HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTES)",
      "SELECT * FROM SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' MINUTES)",
      "SELECT id FROM range(10)",
      "SELECT nvl(a, 1), size(arr), collect_list(x), date_format(ts, 'yyyy-MM-dd') FROM t GROUP BY "
      "1, 2",
      "SELECT `weird col`, 10L, 'it\\'s', INTERVAL 1 HOUR 30 MINUTES FROM t",
      "SELECT * FROM t LATERAL VIEW explode(arr) e AS x",
      "SELECT named_struct('a', 1), map('k', 2), struct(a, b AS c) FROM t",
      "SELECT * FROM events WATERMARK to_timestamp(s) AS ts DELAY OF INTERVAL 5 SECONDS",
  };
  for (const char* q : kQueries) {
    std::string once = Tr(q);
    EXPECT_NE(once, q) << "nothing was translated in: " << q;
    EXPECT_EQ(Tr(once), once) << "not idempotent for: " << q;
  }
}

TEST(SparkToDuckDb, StreamReadsBecomePlainReads) {
  EXPECT_EQ(Tr("SELECT * FROM STREAM(events)"), "SELECT * FROM events");
  EXPECT_EQ(Tr("SELECT * FROM stream events AS e"), "SELECT * FROM events AS e");
  EXPECT_EQ(Tr("SELECT * FROM a JOIN STREAM(db.b) ON a.k = b.k"),
            "SELECT * FROM a JOIN db.b ON a.k = b.k");
  EXPECT_EQ(Tr("SELECT * FROM STREAM events WITH ('maxFilesPerTrigger' = 10) e"),
            "SELECT * FROM events e");
  // `stream` as a column or alias is not a STREAM read.
  EXPECT_EQ(Tr("SELECT stream FROM t"), "SELECT stream FROM t");
  EXPECT_EQ(Tr("SELECT * FROM stream"), "SELECT * FROM stream");
}

TEST(SparkToDuckDb, ReportsBadWindowArguments) {
  EXPECT_FALSE(SparkToDuckDb("SELECT count(*) FROM t GROUP BY window(ts, 'ten seconds')").ok());
  EXPECT_FALSE(
      SparkToDuckDb("SELECT count(*) FROM t GROUP BY window(ts, '5 seconds', '10 seconds')").ok());
  EXPECT_FALSE(SparkToDuckDb("SELECT count(*) FROM t GROUP BY window(ts, '1 month')").ok());
  EXPECT_FALSE(SparkToDuckDb("SELECT 'open").ok());
  auto r = SparkToDuckDb("SELECT 1 FROM t WATERMARK upper(x) DELAY OF INTERVAL 1 SECOND");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("needs a name"), std::string::npos) << r.status().message();
}

// ------------------------------------------------------------ windows

struct Event {
  int64_t ms;  // epoch milliseconds
  int k;
};

class WindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(20240310);
    const int64_t base = 1710028800000;  // 2024-03-10 00:00:00 UTC
    for (int i = 0; i < 400; ++i) {
      events_.push_back(
          {base + static_cast<int64_t>(rng() % 3600000), static_cast<int>(rng() % 3)});
    }
    std::string values;
    for (const auto& e : events_) {
      values += (values.empty() ? "" : ", ") + std::string("(") + std::to_string(e.ms) + ", " +
                std::to_string(e.k) + ")";
    }
    ASSERT_TRUE(
        db_.Exec("CREATE TABLE events AS SELECT epoch_ms(col0::BIGINT) AS ts, col0::BIGINT AS ms, "
                 "col1 AS k FROM (VALUES " +
                 values + ")"));
  }

  // (start, end) -> count: tumbling/hopping windows of `size` sliding by
  // `slide`, aligned to the epoch, as Spark defines them.
  std::map<std::pair<int64_t, int64_t>, int64_t> Hopping(int64_t size, int64_t slide) const {
    std::map<std::pair<int64_t, int64_t>, int64_t> out;
    for (const auto& e : events_) {
      const int64_t last = e.ms - e.ms % slide;
      for (int64_t s = last; s > e.ms - size; s -= slide) ++out[{s, s + size}];
    }
    return out;
  }

  // (k, start, end) -> count for sessions with `gap`.
  std::map<std::tuple<int, int64_t, int64_t>, int64_t> Sessions(int64_t gap) const {
    std::map<int, std::vector<int64_t>> by_key;
    for (const auto& e : events_) by_key[e.k].push_back(e.ms);
    std::map<std::tuple<int, int64_t, int64_t>, int64_t> out;
    for (auto& [k, ts] : by_key) {
      std::sort(ts.begin(), ts.end());
      size_t i = 0;
      while (i < ts.size()) {
        size_t j = i;
        while (j + 1 < ts.size() && ts[j + 1] - ts[j] <= gap) ++j;
        out[{k, ts[i], ts[j] + gap}] = static_cast<int64_t>(j - i + 1);
        i = j + 1;
      }
    }
    return out;
  }

  std::map<std::pair<int64_t, int64_t>, int64_t> RunWindows(const std::string& spark) {
    std::map<std::pair<int64_t, int64_t>, int64_t> out;
    for (const auto& row : db_.Rows(Tr(spark))) {
      out[{std::stoll(row[0]), std::stoll(row[1])}] = std::stoll(row[2]);
    }
    return out;
  }

  std::vector<Event> events_;
  DuckDbRunner db_;
};

TEST_F(WindowTest, TumblingWindowMatchesEpochBuckets) {
  auto got = RunWindows(
      "SELECT epoch_ms(window.start), epoch_ms(window.end), count(*) FROM STREAM events "
      "GROUP BY window(ts, '7 seconds')");
  EXPECT_EQ(got, Hopping(7000, 7000));
  EXPECT_GT(got.size(), 100u);
}

TEST_F(WindowTest, TumblingWindowMatchesDuckDbTimeBucket) {
  auto got = RunWindows(
      "SELECT epoch_ms(window.start), epoch_ms(window.end), count(*) FROM events "
      "GROUP BY window(ts, '1 minute')");
  std::map<std::pair<int64_t, int64_t>, int64_t> bucketed;
  for (const auto& row :
       db_.Rows("SELECT epoch_ms(time_bucket(INTERVAL '1 minute', ts)) AS s, count(*) "
                "FROM events GROUP BY s")) {
    int64_t s = std::stoll(row[0]);
    bucketed[{s, s + 60000}] = std::stoll(row[1]);
  }
  EXPECT_EQ(got, bucketed);
}

TEST_F(WindowTest, HoppingWindowPutsEachEventInEveryWindowItFallsIn) {
  auto got = RunWindows(
      "SELECT epoch_ms(window.start) AS s, epoch_ms(window.end), count(*) FROM events "
      "GROUP BY window(ts, '10 seconds', '3 seconds')");
  EXPECT_EQ(got, Hopping(10000, 3000));
  int64_t total = 0;
  for (const auto& [w, n] : got) total += n;
  EXPECT_GT(total, static_cast<int64_t>(3 * events_.size()));  // 10s/3s: 3 or 4 windows each
}

TEST_F(WindowTest, WindowStructColumnHasStartAndEnd) {
  auto cols = db_.ColumnNames(
      Tr("SELECT window, count(*) AS n FROM events GROUP BY window(ts, '1 minute')"));
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[0], "window");
  auto names = db_.ColumnNames(
      Tr("SELECT window.start, window.end FROM events GROUP BY window(ts, '1 minute')"));
  EXPECT_EQ(names, (std::vector<std::string>{"start", "end"}));
}

TEST_F(WindowTest, SessionWindowMatchesGapOracle) {
  std::map<std::tuple<int, int64_t, int64_t>, int64_t> got;
  for (const auto& row :
       db_.Rows(Tr("SELECT k, epoch_ms(session_window.start), epoch_ms(session_window.end), "
                   "count(*) FROM STREAM events e GROUP BY k, session_window(ts, '20 seconds')"))) {
    got[{std::stoi(row[0]), std::stoll(row[1]), std::stoll(row[2])}] = std::stoll(row[3]);
  }
  auto want = Sessions(20000);
  EXPECT_EQ(got, want);
  EXPECT_LT(want.size(), events_.size());  // some sessions hold several events
}

TEST_F(WindowTest, SessionWindowAppliesWhereBeforeSessionizing) {
  std::map<std::tuple<int, int64_t, int64_t>, int64_t> got;
  for (const auto& row : db_.Rows(
           Tr("SELECT k, epoch_ms(session_window.start), epoch_ms(session_window.end), "
              "count(*) FROM events WHERE k = 1 GROUP BY k, session_window(ts, '20 seconds')"))) {
    got[{std::stoi(row[0]), std::stoll(row[1]), std::stoll(row[2])}] = std::stoll(row[3]);
  }
  auto all = Sessions(20000);
  std::map<std::tuple<int, int64_t, int64_t>, int64_t> want;
  for (const auto& [key, n] : all) {
    if (std::get<0>(key) == 1) want[key] = n;
  }
  EXPECT_EQ(got, want);
}

TEST_F(WindowTest, TumbleAndHopTableFunctions) {
  EXPECT_EQ(
      RunWindows("SELECT epoch_ms(window_start), epoch_ms(window_end), count(*) "
                 "FROM TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '7' SECOND) GROUP BY ALL"),
      Hopping(7000, 7000));
  EXPECT_EQ(RunWindows(
                "SELECT epoch_ms(window_start), epoch_ms(window_end), count(*) "
                "FROM HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '3' SECOND, INTERVAL '10' SECOND) "
                "GROUP BY ALL"),
            Hopping(10000, 3000));
  EXPECT_EQ(RunWindows("SELECT epoch_ms(window_start), epoch_ms(window_end), count(*) "
                       "FROM TUMBLE(DATA => TABLE events, TIMECOL => DESCRIPTOR(ts), SIZE => "
                       "INTERVAL '7' SECONDS) "
                       "GROUP BY ALL"),
            Hopping(7000, 7000));
}

TEST_F(WindowTest, SessionTableFunction) {
  std::map<std::tuple<int, int64_t, int64_t>, int64_t> got;
  for (const auto& row :
       db_.Rows(Tr("SELECT k, epoch_ms(window_start), epoch_ms(window_end), count(*) "
                   "FROM SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), "
                   "INTERVAL '20' SECONDS) GROUP BY ALL"))) {
    got[{std::stoi(row[0]), std::stoll(row[1]), std::stoll(row[2])}] = std::stoll(row[3]);
  }
  EXPECT_EQ(got, Sessions(20000));
}

TEST_F(WindowTest, WindowsOverAJoinAndRowsWithoutEventTime) {
  ASSERT_TRUE(
      db_.Exec("CREATE TABLE keys AS SELECT * FROM (VALUES (0, 'zero'), (1, 'one'), (2, 'two')) "
               "t(k, name)"));
  ASSERT_TRUE(
      db_.Exec("INSERT INTO events VALUES (NULL, NULL, 1)"));  // no event time: in no window
  auto tumbling = RunWindows(
      "SELECT epoch_ms(window.start), epoch_ms(window.end), count(*) FROM events e "
      "JOIN keys ON e.k = keys.k GROUP BY window(e.ts, '7 seconds') ORDER BY window.start");
  EXPECT_EQ(tumbling, Hopping(7000, 7000));
  auto hopping = RunWindows(
      "SELECT epoch_ms(window.start), epoch_ms(window.end), count(*) FROM events e "
      "JOIN keys ON e.k = keys.k GROUP BY window(e.ts, '10 seconds', '3 seconds')");
  EXPECT_EQ(hopping, Hopping(10000, 3000));
  // The window is usable in WHERE, HAVING and ORDER BY of its block.
  auto rows = db_.Rows(
      Tr("SELECT epoch_ms(window.start) AS s, count(*) AS n FROM events "
         "GROUP BY window(ts, '1 minute') HAVING count(*) > 0 ORDER BY window.start DESC LIMIT 1"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(std::stoll(rows[0][0]), Hopping(60000, 60000).rbegin()->first.first);
}

TEST_F(WindowTest, WatermarkClauseDoesNotChangeResults) {
  auto plain = db_.Rows("SELECT k, count(*) FROM events GROUP BY k ORDER BY k");
  EXPECT_EQ(
      db_.Rows(Tr("SELECT k, count(*) FROM STREAM events WATERMARK ts DELAY OF INTERVAL 10 SECONDS "
                  "GROUP BY k ORDER BY k")),
      plain);
  // A watermark on a derived column adds that column.
  EXPECT_EQ(db_.Rows(Tr(
                "SELECT k, count(*) FROM events WATERMARK epoch_ms(ms) AS ts2 DELAY OF INTERVAL 5 "
                "SECONDS e WHERE e.ts2 = e.ts GROUP BY k ORDER BY k")),
            plain);
}

// --------------------------------------------------- Spark semantics

TEST(SparkToDuckDb, FunctionsComputeWhatSparkComputes) {
  DuckDbRunner db;
  // Expected values are Spark's documented results for these inputs.
  EXPECT_EQ(Value(db, "SELECT nvl(NULL, 3)"), "3");
  EXPECT_EQ(Value(db, "SELECT nvl2(NULL, 1, 2)"), "2");
  EXPECT_EQ(Value(db, "SELECT dayofweek(DATE '2024-01-07')"), "1");  // a Sunday
  EXPECT_EQ(Value(db, "SELECT weekday(DATE '2024-01-07')"), "6");
  EXPECT_EQ(Value(db, "SELECT date_format(TIMESTAMP '2024-03-05 07:08:09', 'yyyy-MM-dd HH:mm:ss')"),
            "2024-03-05 07:08:09");
  EXPECT_EQ(Value(db, "SELECT to_date('2024-03-05')"), "2024-03-05");
  EXPECT_EQ(Value(db, "SELECT to_date('05/03/2024', 'dd/MM/yyyy')"), "2024-03-05");
  EXPECT_EQ(Value(db, "SELECT to_timestamp('2024-03-05 10:00:00')"), "2024-03-05 10:00:00");
  EXPECT_EQ(Value(db, "SELECT datediff('2024-03-10', '2024-03-01')"), "9");
  EXPECT_EQ(Value(db, "SELECT date_add('2024-03-01', 5)"), "2024-03-06");
  EXPECT_EQ(Value(db, "SELECT date_sub('2024-03-01', 5)"), "2024-02-25");
  EXPECT_EQ(Value(db, "SELECT add_months(DATE '2024-01-31', 1)"), "2024-02-29");
  EXPECT_EQ(Value(db, "SELECT from_unixtime(0)"), "1970-01-01 00:00:00");
  EXPECT_EQ(Value(db, "SELECT unix_timestamp(TIMESTAMP '1970-01-02 00:00:00')"), "86400");
  EXPECT_EQ(Value(db, "SELECT timestamp_seconds(86400)"), "1970-01-02 00:00:00");
  EXPECT_EQ(Value(db, "SELECT trunc(DATE '2024-03-05', 'MM')"), "2024-03-01");
  EXPECT_EQ(Value(db, "SELECT concat('a', NULL)"), "NULL");
  EXPECT_EQ(Value(db, "SELECT concat('a', 'b', 'c')"), "abc");
  EXPECT_EQ(Value(db, "SELECT regexp_extract('foo123bar', '([a-z]+)([0-9]+)')"), "foo");
  EXPECT_EQ(Value(db, "SELECT regexp_replace('a1b2', '[0-9]', 'X')"), "aXbX");
  EXPECT_EQ(Value(db, "SELECT regexp_replace('ab', '(a)(b)', '$2$1')"), "ba");
  EXPECT_EQ(Value(db, "SELECT split('a1b22c', '[0-9]+')"), "[a, b, c]");
  EXPECT_EQ(Value(db, "SELECT size(array(1, 2, 3))"), "3");
  EXPECT_EQ(Value(db, "SELECT sort_array(array(3, 1, 2), false)"), "[3, 2, 1]");
  EXPECT_EQ(Value(db, "SELECT array_join(array('a', NULL, 'b'), '-', '?')"), "a-?-b");
  EXPECT_EQ(Value(db, "SELECT pmod(-7, 3)"), "2");
  EXPECT_EQ(Value(db, "SELECT round(log(exp(2)), 6)"), "2.0");
  EXPECT_EQ(Value(db, "SELECT named_struct('a', 1, 'b', 'x')"), "{'a': 1, 'b': x}");
  EXPECT_EQ(Value(db, "SELECT map('k', 1)"), "{k=1}");
  EXPECT_EQ(Value(db, "SELECT 'abc' RLIKE '^a.c$'"), "true");
  EXPECT_EQ(Value(db, "SELECT 'abc' NOT RLIKE 'z'"), "true");
  EXPECT_EQ(Value(db, "SELECT 7 DIV 2"), "3");
  EXPECT_EQ(Value(db, "SELECT NULL <=> NULL"), "true");
  EXPECT_EQ(Value(db, "SELECT !false"), "true");
  EXPECT_EQ(Value(db, "SELECT typeof(10L)"), "BIGINT");
  EXPECT_EQ(Value(db, "SELECT typeof(CAST(NULL AS array<int>))"), "INTEGER[]");
  EXPECT_EQ(Value(db, "SELECT typeof(CAST(NULL AS map<string, bigint>))"), "MAP(VARCHAR, BIGINT)");
  EXPECT_EQ(Value(db, "SELECT 'it\\'s'"), "it's");
  EXPECT_EQ(Value(db, "SELECT 'a\\\\b'"), "a\\b");
  EXPECT_EQ(Value(db, "SELECT INTERVAL 1 HOUR 30 MINUTES"), "01:30:00");
  EXPECT_EQ(Value(db, "SELECT current_timestamp() IS NOT NULL"), "true");
  EXPECT_EQ(Value(db, "SELECT `weird col` FROM (SELECT 1 AS \"weird col\")"), "1");
  EXPECT_EQ(Value(db, "SELECT count(*) FROM (SELECT 'bob' AS name) WHERE name = \"bob\""), "1");
  EXPECT_EQ(Value(db, "SELECT count(*) FROM (SELECT 'b' AS x) WHERE x IN (\"a\", \"b\")"), "1");
}

TEST(SparkToDuckDb, AggregatesSkipNullsLikeSpark) {
  DuckDbRunner db;
  ASSERT_TRUE(db.Exec(
      "CREATE TABLE v AS SELECT * FROM (VALUES (1, 1), (1, NULL), (1, 2), (1, 2)) t(g, x)"));
  EXPECT_EQ(db.Rows(Tr("SELECT list_sort(collect_list(x)) FROM v GROUP BY g")),
            (std::vector<std::vector<std::string>>{{"[1, 2, 2]"}}));
  EXPECT_EQ(db.Rows(Tr("SELECT list_sort(collect_set(x)) FROM v GROUP BY g")),
            (std::vector<std::vector<std::string>>{{"[1, 2]"}}));
  EXPECT_EQ(db.Rows(Tr("SELECT collect_list(x) FROM v WHERE x IS NULL")),
            (std::vector<std::vector<std::string>>{{"[]"}}));
}

TEST(SparkToDuckDb, RangeYieldsIdAsInSpark) {
  DuckDbRunner db;
  for (int n : {1, 7, 100}) {
    auto rows = db.Rows(Tr("SELECT count(*), sum(id) FROM range(" + std::to_string(n) + ")"));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0][0], std::to_string(n));
    EXPECT_EQ(rows[0][1], std::to_string(static_cast<int64_t>(n) * (n - 1) / 2));
  }
  EXPECT_EQ(db.Rows(Tr("SELECT id FROM range(2, 10, 3) r ORDER BY id")),
            (std::vector<std::vector<std::string>>{{"2"}, {"5"}, {"8"}}));
}

TEST(SparkToDuckDb, LateralViewAndStarExcept) {
  DuckDbRunner db;
  ASSERT_TRUE(db.Exec("CREATE TABLE t AS SELECT 1 AS id, [10, 20] AS arr, 'x' AS extra"));
  EXPECT_EQ(db.Rows(Tr("SELECT id, v FROM t LATERAL VIEW explode(arr) e AS v ORDER BY v")),
            (std::vector<std::vector<std::string>>{{"1", "10"}, {"1", "20"}}));
  EXPECT_EQ(db.Rows(Tr("SELECT p, v FROM t LATERAL VIEW posexplode(arr) e AS p, v ORDER BY p")),
            (std::vector<std::vector<std::string>>{{"0", "10"}, {"1", "20"}}));
  EXPECT_EQ(db.ColumnNames(Tr("SELECT * EXCEPT (extra) FROM t")),
            (std::vector<std::string>{"id", "arr"}));
  EXPECT_EQ(Value(db, "SELECT struct(id, extra AS e) FROM t"), "{'id': 1, 'e': x}");
}

TEST(SparkToDuckDb, BatchReadFilesBecomesDuckDbReader) {
  EXPECT_EQ(Tr("SELECT * FROM read_files('d/*.csv', format => 'csv', header => 'true')"),
            "SELECT * FROM read_csv('d/*.csv', header = 'true')");
  EXPECT_EQ(Tr("SELECT * FROM read_files('d/x.parquet')"),
            "SELECT * FROM read_parquet('d/x.parquet')");
}

TEST(SparkToDuckDb, FunctionTableNamesEachRewriteOnce) {
  auto table = SparkFunctionTable();
  ASSERT_GT(table.size(), 60u);
  std::vector<std::string> names;
  for (const auto& m : table) {
    EXPECT_FALSE(m.duckdb.empty()) << m.spark;
    names.push_back(m.spark);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

TEST(UnknownSqlFunctions, NamesFunctionsDuckDbLacks) {
  auto r = UnknownSqlFunctions(
      "SELECT nvl(a, 1), initcap(b), xyz_magic(c), sum(d) FROM t GROUP BY 1, 2, 3");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<std::string>{"initcap", "xyz_magic"}));
  auto none =
      UnknownSqlFunctions("SELECT count(*), collect_list(x), date_format(ts, 'yyyy') FROM t");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace thund

namespace thund {
namespace {

// Property: on any text, the translation either fails cleanly or is
// idempotent. Inputs are random sequences of SQL fragments, Spark forms
// included, so the passes meet each other in odd combinations.
TEST(SparkToDuckDb, IdempotentOnRandomFragmentSoup) {
  const std::vector<std::string> kFragments = {
      "SELECT",
      "*",
      "FROM",
      "STREAM",
      "(",
      ")",
      "events",
      "e",
      ",",
      "WHERE",
      "x",
      "=",
      "\"abc\"",
      "GROUP BY",
      "window",
      "(ts, '10 seconds')",
      "(ts, '10 seconds', '5 seconds')",
      "session_window",
      "(ts, '1 minute')",
      "window.start",
      "WATERMARK ts DELAY OF INTERVAL 5 SECONDS",
      "AS",
      "w",
      "TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE)",
      "range(10)",
      "nvl(a, b)",
      "collect_list(x)",
      "OVER (PARTITION BY k)",
      "concat(a, b)",
      "`odd name`",
      "'it\\'s'",
      "10L",
      "INTERVAL 1 HOUR 30 MINUTES",
      "JOIN",
      "ON",
      "a.k = b.k",
      "LATERAL VIEW explode(arr) t AS v",
      "date_format(ts, 'yyyy')",
      "CAST(x AS array<int>)",
      "RLIKE",
      "'^a'",
      "<=>",
      "!",
      "DIV",
      "2",
      "* EXCEPT (a)",
      "UNION ALL",
      "WITH c AS (SELECT 1)",
      "read_files('x.csv')",
      "csv.`d/x.csv`",
      "WITH ('header' = 'true', 'inferSchema' = 'true')",
      "parquet.`p/`",
      "json.`j.json` WITH (multiLine = true)",
      ";",
      "--c\n",
      "'",
      "HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '2' SECOND)",
      "current_timestamp()",
      "struct(a, b AS c)",
      "map('k', 1)",
      "size(a)",
      "log(x)",
      "ORDER BY",
      "LIMIT 5",
      "1"};
  std::mt19937_64 rng(7);
  int translated = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string q;
    const int n = 1 + static_cast<int>(rng() % 14);
    for (int k = 0; k < n; ++k) q += kFragments[rng() % kFragments.size()] + " ";
    auto once = SparkToDuckDb(q);
    if (!once.ok()) continue;
    ++translated;
    auto twice = SparkToDuckDb(*once);
    ASSERT_TRUE(twice.ok()) << "query: " << q << "\nonce: " << *once << "\n"
                            << twice.status().ToString();
    ASSERT_EQ(*twice, *once) << "query: " << q;
  }
  EXPECT_GT(translated, 1000);
}

TEST(ReadsStream, FindsStreamReadsOnlyWhereARelationStarts) {
  EXPECT_TRUE(ReadsStream("SELECT * FROM STREAM(events)"));
  EXPECT_TRUE(ReadsStream("SELECT * FROM STREAM events e WHERE e.v > 1"));
  EXPECT_TRUE(ReadsStream("SELECT a.* FROM t JOIN STREAM(live.clicks) a USING (id)"));
  EXPECT_TRUE(ReadsStream("SELECT * FROM STREAM read_files('in/', format => 'csv')"));
  EXPECT_FALSE(ReadsStream("SELECT * FROM events"));
  EXPECT_FALSE(ReadsStream("SELECT stream, count(*) FROM t GROUP BY stream"));
  EXPECT_FALSE(ReadsStream("SELECT 'FROM STREAM(x)' AS s FROM t"));
  EXPECT_FALSE(ReadsStream("SELECT * FROM t -- FROM STREAM(x)"));
}

}  // namespace
}  // namespace thund
