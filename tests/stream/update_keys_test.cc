// UpdateKeyColumns and FindWindowEnd (engine/stream/output_mode.h): which
// output columns key an Update-mode flow, and where a windowed Append finds
// the window end.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/stream/output_mode.h"
#include "engine/table_compare.h"
#include "thund/sql_dialect.h"

namespace thund::engine::stream {
namespace {

using Keys = std::vector<std::string>;

void ExpectKeys(const std::string& sql, const Keys& want) {
  auto keys = UpdateKeyColumns(sql);
  ASSERT_TRUE(keys.ok()) << sql << "\n" << keys.status().ToString();
  EXPECT_EQ(*keys, want) << sql;
}

void ExpectInvalid(const std::string& sql, const std::string& needle) {
  auto keys = UpdateKeyColumns(sql);
  ASSERT_FALSE(keys.ok()) << sql;
  EXPECT_TRUE(keys.status().IsInvalid()) << keys.status().ToString();
  EXPECT_NE(keys.status().message().find(needle), std::string::npos) << keys.status().ToString();
}

TEST(UpdateKeyColumnsTest, GroupByOutputsAreTheKey) {
  ExpectKeys("SELECT k, count(*) AS c FROM t GROUP BY k", {"k"});
  ExpectKeys("SELECT t.k, max(v) FROM t GROUP BY t.k", {"k"});
  ExpectKeys("SELECT k AS key, v % 2 AS parity, sum(v) FROM t GROUP BY 1, 2", {"key", "parity"});
  ExpectKeys("SELECT sum(v) AS s, k FROM t GROUP BY k", {"k"});
  ExpectKeys("SELECT k, count(*) FILTER (WHERE v > 1) AS c FROM t GROUP BY k", {"k"});
  ExpectKeys("SELECT k, sum(v) + 1 AS s1, rank() OVER (ORDER BY sum(v)) AS r FROM t GROUP BY k",
             {"k"});
  ExpectKeys("SELECT k, v, count(*) AS c FROM t GROUP BY ALL", {"k", "v"});
  ExpectKeys("SELECT k, count(*) AS c FROM t GROUP BY k HAVING count(*) > 1", {"k"});
}

TEST(UpdateKeyColumnsTest, NoAggregationOrGlobalAggregateHasNoKey) {
  ExpectKeys("SELECT k, v FROM t", {});
  ExpectKeys("SELECT k FROM t WHERE v IN (SELECT max(v) FROM t)", {});
  ExpectKeys("SELECT k, row_number() OVER (PARTITION BY k) AS n FROM t", {});
  ExpectKeys("SELECT count(*) AS c, sum(v) AS s FROM t", {});
}

TEST(UpdateKeyColumnsTest, LooksThroughOneSubqueryOrCte) {
  ExpectKeys("SELECT k, c * 2 AS c2 FROM (SELECT k, count(*) AS c FROM t GROUP BY k)", {"k"});
  ExpectKeys("SELECT * FROM (SELECT k, count(*) AS c FROM t GROUP BY k) s", {"k"});
  ExpectKeys("SELECT s.* FROM (SELECT k, count(*) AS c FROM t GROUP BY k) s", {"k"});
  ExpectKeys("WITH a AS (SELECT k, j, count(*) AS c FROM t GROUP BY k, j) SELECT j, c FROM a",
             {"j"});
  ExpectKeys("WITH a AS (SELECT k, count(*) AS c FROM t GROUP BY k) SELECT * FROM a WHERE c > 1",
             {"k"});
  ExpectKeys(
      "SELECT k, count(*) AS c FROM t GROUP BY k UNION ALL "
      "SELECT k, count(*) AS c FROM u GROUP BY k",
      {"k"});
}

TEST(UpdateKeyColumnsTest, SparkWindowsKeyOnTheWindowStruct) {
  auto sql =
      SparkToDuckDb("SELECT window, k, count(*) AS c FROM t GROUP BY window(ts, '1 minute'), k");
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  ExpectKeys(*sql, {"window", "k"});
  sql = SparkToDuckDb(
      "SELECT session_window, k, count(*) AS c FROM t GROUP BY session_window(ts, '5 minutes'), k");
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  ExpectKeys(*sql, {"session_window", "k"});
  sql = SparkToDuckDb(
      "SELECT window_start, window_end, count(*) AS c FROM TUMBLE(TABLE t, DESCRIPTOR(ts), "
      "INTERVAL '1' MINUTE) GROUP BY window_start, window_end");
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  ExpectKeys(*sql, {"window_start", "window_end"});
}

TEST(UpdateKeyColumnsTest, UnknowableKeysAreErrorsThatSayWhatToDo) {
  ExpectInvalid("SELECT k + 1, count(*) FROM t GROUP BY k + 1", "give it an alias (AS name)");
  ExpectInvalid(
      "SELECT u.k, a.c FROM u JOIN (SELECT k, count(*) AS c FROM t GROUP BY k) a ON u.k = a.k",
      "or use Complete mode");
  ExpectInvalid("SELECT k, v FROM u UNION ALL SELECT k, count(*) FROM t GROUP BY k",
                "first branch");
  ExpectInvalid("SELECT * EXCLUDE (c) FROM (SELECT k, count(*) AS c FROM t GROUP BY k)",
                "SELECT * with EXCLUDE");
  ExpectInvalid("SELEC k FROM t", "");
  ExpectInvalid("SELECT 1; SELECT 2", "");
}

TEST(FindWindowEndTest, StructWindowsAndWindowEndColumns) {
  auto window_type =
      arrow::struct_({arrow::field("start", arrow::timestamp(arrow::TimeUnit::MICRO)),
                      arrow::field("end", arrow::timestamp(arrow::TimeUnit::MICRO))});
  auto ts = arrow::timestamp(arrow::TimeUnit::MICRO);
  auto k = arrow::field("k", arrow::int64());
  EXPECT_EQ(FindWindowEnd(*arrow::schema({k, arrow::field("window", window_type)})),
            "struct_extract(\"window\", 'end')");
  EXPECT_EQ(FindWindowEnd(*arrow::schema({arrow::field("Session_Window", window_type), k})),
            "struct_extract(\"Session_Window\", 'end')");
  EXPECT_EQ(FindWindowEnd(*arrow::schema({k, arrow::field("WINDOW_END", ts)})), "\"WINDOW_END\"");
  // A struct `window` wins over a window_end column.
  EXPECT_EQ(FindWindowEnd(*arrow::schema(
                {arrow::field("window_end", ts), arrow::field("window", window_type)})),
            "struct_extract(\"window\", 'end')");
  EXPECT_FALSE(FindWindowEnd(*arrow::schema({k})));
  EXPECT_FALSE(FindWindowEnd(*arrow::schema({arrow::field("window", ts)})));  // not a struct
  EXPECT_FALSE(FindWindowEnd(
      *arrow::schema({arrow::field("window", arrow::struct_({arrow::field("start", ts)}))})));
}

}  // namespace
}  // namespace thund::engine::stream
