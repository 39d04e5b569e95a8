// The logical plan (thund/plan.h) of a corpus of queries: the node structure
// against a golden file (tests/sql/data/plans.golden; regenerate with
// THUND_UPDATE_GOLDEN=1 and review the diff), and every node's output schema
// against DuckDB's own DESCRIBE of that node's SQL in an independent database
// where the inputs are real tables. The root's schema is also checked against
// DESCRIBE of the query as the user wrote it (after the dialect).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <arrow/type.h>
#include <gtest/gtest.h>

#include "sql/sql_analysis.h"
#include "sql/duckdb_runner.h"
#include "thund/sql_dialect.h"

namespace thund {
namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(THUND_SOURCE_DIR) / "tests" / "sql" / "data" / "plans.golden";

// Spark / DuckDB forms users write: every statement body form of the SDP
// corpus, CTEs, subqueries, each join kind, set operations, window functions,
// time windows (window(), session_window(), TUMBLE / HOP / SESSION), table
// functions, and constructs the walk does not model (opaque nodes).
const std::vector<std::string>& Corpus() {
  static const std::vector<std::string> kQueries = {
      "SELECT * FROM t",
      "SELECT id, v FROM t WHERE v > 10",
      "SELECT id AS key, v * 2 AS doubled FROM t",
      "SELECT k, count(*) AS n FROM t GROUP BY k",
      "SELECT k, sum(v) AS total, avg(v) AS mean FROM t GROUP BY k HAVING sum(v) > 5",
      "SELECT k, count(DISTINCT id) AS ids FROM t GROUP BY k",
      "SELECT k, sum(v) FILTER (WHERE v > 0) AS pos FROM t GROUP BY k",
      "SELECT k, max(v) AS m FROM t GROUP BY 1",
      "SELECT k, min(v) AS lo FROM t GROUP BY ALL",
      "SELECT count(*) AS n FROM t",
      "SELECT DISTINCT k FROM t",
      "SELECT DISTINCT ON (k) k, v FROM t ORDER BY k, v DESC",
      "SELECT * FROM t ORDER BY v DESC LIMIT 10",
      "SELECT * FROM t LIMIT 5 OFFSET 2",
      "SELECT t.id, u.name FROM t JOIN u ON t.id = u.id",
      "SELECT t.id, u.name FROM t LEFT JOIN u ON t.id = u.id",
      "SELECT t.id, u.name FROM t RIGHT JOIN u ON t.id = u.id",
      "SELECT t.id, u.name FROM t FULL OUTER JOIN u ON t.id = u.id",
      "SELECT t.id, u.name FROM t CROSS JOIN u",
      "SELECT * FROM t SEMI JOIN u ON t.id = u.id",
      "SELECT * FROM t ANTI JOIN u ON t.id = u.id",
      "SELECT * FROM t JOIN u USING (id)",
      "SELECT t.id FROM t JOIN u ON t.id = u.id AND t.v > 3",
      "SELECT t.id, u.name FROM t JOIN u ON u.id = t.id AND u.ts BETWEEN t.ts - INTERVAL 1 HOUR "
      "AND t.ts + INTERVAL 1 HOUR",
      "SELECT a.id FROM t a, u b WHERE a.id = b.id",
      "SELECT t.id, u.name FROM t JOIN u ON t.id = u.id AND u.ts >= t.ts - INTERVAL 10 MINUTES "
      "AND u.ts <= t.ts + INTERVAL 5 MINUTES",
      "SELECT id FROM t UNION SELECT id FROM u",
      "SELECT id FROM t UNION ALL SELECT id FROM u",
      "SELECT id FROM t EXCEPT SELECT id FROM u",
      "SELECT id FROM t INTERSECT SELECT id FROM u",
      "SELECT id FROM t UNION ALL SELECT id FROM u ORDER BY id LIMIT 3",
      "WITH big AS (SELECT * FROM t WHERE v > 100) SELECT k, count(*) AS n FROM big GROUP BY k",
      "WITH a AS (SELECT id FROM t), b AS (SELECT id FROM a) SELECT * FROM b",
      "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
      "SELECT * FROM (SELECT k, sum(v) AS s FROM t GROUP BY k) agg WHERE s > 1",
      "SELECT id FROM t WHERE id IN (SELECT id FROM u)",
      "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id)",
      "SELECT id, (SELECT max(v) FROM t) AS top FROM u",
      "SELECT id, row_number() OVER (PARTITION BY k ORDER BY ts) AS rn FROM t",
      "SELECT k, sum(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
      "AS running FROM t",
      "SELECT id FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY ts DESC) = 1",
      "SELECT k, sum(v) AS s, rank() OVER (ORDER BY sum(v) DESC) AS r FROM t GROUP BY k",
      "SELECT CASE WHEN v > 0 THEN 'pos' ELSE 'neg' END AS sign FROM t",
      "SELECT CAST(v AS DOUBLE) AS d, v::VARCHAR AS s FROM t",
      "SELECT coalesce(k, 'none') AS k2, v IS NULL AS missing FROM t",
      "SELECT * FROM range(10)",
      "SELECT * FROM range(3) r(i) JOIN t ON t.id = r.i",
      "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(n, s)",
      "SELECT 1 AS one, 'x' AS s",
      "SELECT * FROM read_parquet('/data/x.parquet')",
      "SELECT * FROM read_csv(['/a.csv', '/b.csv'])",
      "SELECT * FROM STREAM(events)",
      "SELECT user_id, amount FROM STREAM events WHERE amount > 0",
      "SELECT window(ts, '10 minutes') AS w, count(*) AS n FROM events GROUP BY window(ts, '10 "
      "minutes')",
      "SELECT window.start AS ws, count(*) AS n FROM events GROUP BY window(ts, '10 minutes')",
      "SELECT window.end AS we, user_id, sum(amount) AS total FROM STREAM(events) GROUP BY "
      "window(ts, '5 minutes'), user_id",
      "SELECT user_id, sum(amount) AS total FROM events GROUP BY window(ts, '1 hour'), user_id",
      "SELECT window, count(*) AS n FROM events GROUP BY window(ts, '10 minutes', '5 minutes')",
      "SELECT session_window, user_id, count(*) AS n FROM events GROUP BY session_window(ts, '5 "
      "minutes'), user_id",
      "SELECT window_start, window_end, count(*) AS n FROM TUMBLE(TABLE events, DESCRIPTOR(ts), "
      "INTERVAL '10' MINUTES) GROUP BY window_start, window_end",
      "SELECT window_start, sum(amount) AS s FROM HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' "
      "MINUTES, INTERVAL '10' MINUTES) GROUP BY window_start",
      "SELECT window_start, window_end, user_id, count(*) AS n FROM SESSION(TABLE events PARTITION "
      "BY user_id, DESCRIPTOR(ts), INTERVAL '5' MINUTES) GROUP BY window_start, window_end, user_id",
      "SELECT k, sum(v) AS s FROM t GROUP BY ROLLUP (k)",
      "SELECT * FROM t PIVOT (sum(v) FOR k IN ('a', 'b'))",
      "SELECT * FROM t UNPIVOT (val FOR col IN (id, v))",
      "SELECT k, collect_list(v) AS vs FROM t GROUP BY k",
      "SELECT date_format(ts, 'yyyy-MM-dd') AS day, count(*) AS n FROM t GROUP BY 1",
      "SELECT id FROM t WHERE k LIKE 'a%' AND v BETWEEN 1 AND 9 OR id IS NULL",
      "SELECT t.*, u.name FROM t JOIN u ON t.id = u.id ORDER BY t.ts",
      "SELECT x.k, x.n FROM (SELECT k, count(*) AS n FROM t GROUP BY k) x JOIN (SELECT k FROM t "
      "WHERE v > 0) y ON x.k = y.k",
  };
  return kQueries;
}

const std::vector<std::string>& Tables() {
  static const std::vector<std::string> kDdl = {
      "CREATE TABLE t (id BIGINT, k VARCHAR, v BIGINT, ts TIMESTAMP)",
      "CREATE TABLE u (id BIGINT, name VARCHAR, ts TIMESTAMP)",
      "CREATE TABLE events (user_id BIGINT, amount DOUBLE, ts TIMESTAMP, kind VARCHAR)",
  };
  return kDdl;
}

sql::InputSchemas InputSchemasForTests() {
  auto ts = arrow::timestamp(arrow::TimeUnit::MICRO);
  sql::InputSchemas in;
  in["t"] = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("k", arrow::utf8()),
                           arrow::field("v", arrow::int64()), arrow::field("ts", ts)});
  in["u"] = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                           arrow::field("ts", ts)});
  in["events"] = arrow::schema({arrow::field("user_id", arrow::int64()),
                                arrow::field("amount", arrow::float64()), arrow::field("ts", ts),
                                arrow::field("kind", arrow::utf8())});
  return in;
}

// DuckDB's name for an Arrow type as DESCRIBE prints it (the test's own
// mapping, for the types these queries produce).
std::string DescribeName(const arrow::DataType& t) {
  switch (t.id()) {
    case arrow::Type::BOOL: return "BOOLEAN";
    case arrow::Type::INT32: return "INTEGER";
    case arrow::Type::INT64: return "BIGINT";
    case arrow::Type::UINT64: return "UBIGINT";
    case arrow::Type::DOUBLE: return "DOUBLE";
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW: return "VARCHAR";
    case arrow::Type::TIMESTAMP: return "TIMESTAMP";
    case arrow::Type::DATE32: return "DATE";
    case arrow::Type::INTERVAL_MONTH_DAY_NANO: return "INTERVAL";
    case arrow::Type::DECIMAL128: {
      const auto& d = static_cast<const arrow::DecimalType&>(t);
      // DuckDB hands HUGEINT (sum of BIGINT) to Arrow as decimal128(38, 0).
      if (d.precision() == 38 && d.scale() == 0) return "HUGEINT";
      return "DECIMAL(" + std::to_string(d.precision()) + "," + std::to_string(d.scale()) + ")";
    }
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
      return DescribeName(*static_cast<const arrow::BaseListType&>(t).value_type()) + "[]";
    case arrow::Type::STRUCT: {
      std::string out = "STRUCT(";
      for (int i = 0; i < t.num_fields(); ++i) {
        out += (i ? ", " : "") + std::string("\"") + t.field(i)->name() + "\" " +
               DescribeName(*t.field(i)->type());
      }
      return out + ")";
    }
    default: return t.ToString();
  }
}

std::string Golden() {
  std::string out;
  for (const auto& q : Corpus()) {
    auto plan = sql::PlanQuery(q);
    out += "== " + q + "\n";
    out += plan.ok() ? plan::ToText(**plan, /*with_schemas=*/false)
                     : "error: " + plan.status().message() + "\n";
  }
  return out;
}

TEST(PlanTest, CorpusHasAtLeastSixtyQueries) { EXPECT_GE(Corpus().size(), 60u); }

TEST(PlanTest, NodeStructureMatchesTheGoldenFile) {
  const std::string got = Golden();
  // Regenerating writes the file, then compares as always (review the diff).
  if (std::getenv("THUND_UPDATE_GOLDEN")) std::ofstream(kGolden, std::ios::binary) << got;
  std::ifstream in(kGolden, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << kGolden << " (run with THUND_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << in.rdbuf();
  // Compare query by query, so a failure names the query.
  auto split = [](const std::string& text) {
    std::vector<std::string> parts;
    size_t at = 0;
    while ((at = text.find("== ", at)) != std::string::npos) {
      size_t next = text.find("\n== ", at);
      parts.push_back(text.substr(at, next == std::string::npos ? std::string::npos : next + 1 - at));
      if (next == std::string::npos) break;
      at = next + 1;
    }
    return parts;
  };
  auto a = split(got), b = split(want.str());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);
}

TEST(PlanTest, EveryNodeSchemaIsWhatDuckDbDescribes) {
  testing::DuckDbRunner duck;
  for (const auto& ddl : Tables()) ASSERT_TRUE(duck.Exec(ddl));
  const sql::InputSchemas inputs = InputSchemasForTests();
  int nodes_checked = 0;
  for (const auto& q : Corpus()) {
    SCOPED_TRACE(q);
    auto plan = sql::PlanQuery(q, &inputs);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    // The root against the query as written (after the dialect).
    auto duck_sql = SparkToDuckDb(q);
    ASSERT_TRUE(duck_sql.ok());
    for (const plan::PlanNode* n : plan::Nodes(**plan)) {
      if (n->kind == plan::NodeKind::kValues && n->rows.empty()) {
        // The one row of no columns a SELECT without FROM reads.
        ASSERT_NE(n->schema, nullptr);
        EXPECT_EQ(n->schema->num_fields(), 0);
        continue;
      }
      const std::string& node_sql = n == plan->get() ? *duck_sql : n->sql;
      std::string error;
      auto rows = duck.Rows("DESCRIBE " + node_sql, &error);
      if (!error.empty()) {
        // DuckDB cannot describe it alone (a correlated subquery, a reference
        // to a recursive CTE): the plan must not claim a schema either.
        EXPECT_EQ(n->schema, nullptr) << plan::Name(n->kind) << ": " << node_sql;
        continue;
      }
      ASSERT_NE(n->schema, nullptr) << plan::Name(n->kind) << " " << node_sql << ": "
                                    << n->bind_error;
      ASSERT_EQ(static_cast<size_t>(n->schema->num_fields()), rows.size()) << node_sql;
      // DuckDB's Arrow export makes repeated names unique: id, id_1, ...
      std::map<std::string, int> seen;
      for (size_t i = 0; i < rows.size(); ++i) {
        const int k = seen[rows[i][0]]++;
        const std::string want = k == 0 ? rows[i][0] : rows[i][0] + "_" + std::to_string(k);
        EXPECT_EQ(n->schema->field(static_cast<int>(i))->name(), want) << node_sql;
        EXPECT_EQ(DescribeName(*n->schema->field(static_cast<int>(i))->type()), rows[i][1])
            << node_sql;
      }
      ++nodes_checked;
    }
  }
  EXPECT_GT(nodes_checked, 150);
}

TEST(PlanTest, WhatTheWalkCannotSeeIntoIsAnOpaqueNodeThatSaysWhat) {
  struct Case {
    std::string sql, reason;
  };
  for (const auto& c : std::vector<Case>{
           {"SELECT * FROM t PIVOT (sum(v) FOR k IN ('a', 'b'))", "PIVOT"},
           {"SELECT * FROM t UNPIVOT (val FOR col IN (id, v))", "UNPIVOT"},
           {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
            "SELECT * FROM r",
            "a recursive CTE"}}) {
    SCOPED_TRACE(c.sql);
    auto plan = sql::PlanQuery(c.sql);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const plan::PlanNode* opaque = nullptr;
    for (const plan::PlanNode* n : plan::Nodes(**plan)) {
      if (n->kind == plan::NodeKind::kOpaque && !opaque) opaque = n;
    }
    ASSERT_NE(opaque, nullptr);
    EXPECT_EQ(opaque->opaque_reason, c.reason);
    EXPECT_FALSE(opaque->sql.empty());
  }
  // Inputs under an opaque node are still found.
  auto pivot = sql::PlanQuery("SELECT * FROM t PIVOT (sum(v) FOR k IN ('a', 'b'))");
  ASSERT_TRUE(pivot.ok());
  auto inputs = plan::PlanInputs(**pivot);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0]->Joined(), "t");
}

TEST(PlanTest, WindowsComeFromTheQueryWithTheirParameters) {
  struct Case {
    std::string sql;
    plan::WindowShape shape;
    int64_t size_us, slide_us, gap_us;
  };
  for (const auto& c : std::vector<Case>{
           {"SELECT window.start AS ws, count(*) AS n FROM events GROUP BY window(ts, '10 "
            "minutes')",
            plan::WindowShape::kTumbling, 600000000, 600000000, 0},
           {"SELECT count(*) AS n FROM events GROUP BY window(ts, '10 minutes', '5 minutes')",
            plan::WindowShape::kHopping, 600000000, 300000000, 0},
           {"SELECT user_id, count(*) AS n FROM events GROUP BY session_window(ts, '5 minutes'), "
            "user_id",
            plan::WindowShape::kSession, 0, 0, 300000000},
           {"SELECT window_start, count(*) AS n FROM TUMBLE(TABLE events, DESCRIPTOR(ts), "
            "INTERVAL '1' MINUTE) GROUP BY window_start",
            plan::WindowShape::kTumbling, 60000000, 60000000, 0}}) {
    SCOPED_TRACE(c.sql);
    auto plan = sql::PlanQuery(c.sql);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const plan::PlanNode* agg = plan::RowPathAggregate(**plan);
    ASSERT_NE(agg, nullptr);
    const plan::PlanNode* w = plan::AggregateWindow(*agg);
    ASSERT_NE(w, nullptr) << plan::ToText(**plan, false);
    EXPECT_EQ(w->window.shape, c.shape);
    EXPECT_EQ(w->window.size_us, c.size_us);
    EXPECT_EQ(w->window.slide_us, c.slide_us);
    EXPECT_EQ(w->window.gap_us, c.gap_us);
    EXPECT_EQ(w->window.time_column, "ts");
  }
}

TEST(PlanTest, ScansCarryWhereTheyAreWrittenAndWhetherTheyStream) {
  auto plan = sql::PlanQuery("SELECT a.id\nFROM STREAM(events) e\n  JOIN   u ON e.user_id = u.id");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  auto inputs = plan::PlanInputs(**plan);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0]->Joined(), "events");
  EXPECT_TRUE(inputs[0]->stream);
  EXPECT_EQ(inputs[1]->Joined(), "u");
  EXPECT_FALSE(inputs[1]->stream);
  for (const plan::PlanNode* n : plan::Nodes(**plan)) {
    if (n->kind == plan::NodeKind::kScan && n->scan.Joined() == "u") {
      EXPECT_EQ(n->pos.line, 3);
      EXPECT_EQ(n->pos.column, 10);
    }
  }
}

}  // namespace
}  // namespace thund

namespace thund {
namespace {

TEST(PlanJoinTest, JoinsCarryTheirKeysResidualAndTimeBounds) {
  for (const std::string& on :
       {std::string("u.ts BETWEEN t.ts - INTERVAL 1 HOUR AND t.ts + INTERVAL 1 HOUR"),
        std::string("u.ts >= t.ts - INTERVAL 1 HOUR AND u.ts <= t.ts + INTERVAL 1 HOUR"),
        std::string("t.ts + INTERVAL 1 HOUR >= u.ts AND t.ts - INTERVAL 1 HOUR <= u.ts")}) {
    SCOPED_TRACE(on);
    auto p = sql::PlanQuery("SELECT t.id FROM t JOIN u ON t.id = u.id AND " + on);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const plan::PlanNode* join = nullptr;
    for (const plan::PlanNode* n : plan::Nodes(**p)) {
      if (n->kind == plan::NodeKind::kJoin) join = n;
    }
    ASSERT_NE(join, nullptr);
    EXPECT_EQ(join->join.kind, plan::JoinKind::kInner);
    ASSERT_EQ(join->join.equi_keys.size(), 1u);
    EXPECT_EQ(join->join.equi_keys[0].first.sql, "t.id");
    EXPECT_EQ(join->join.equi_keys[0].second.sql, "u.id");
    ASSERT_TRUE(join->join.time_bound.has_value());
    EXPECT_EQ(join->join.time_bound->right_time.sql, "u.ts");
    EXPECT_EQ(join->join.time_bound->left_time.sql, "t.ts");
    EXPECT_NE(join->join.time_bound->lower_sql.find("t.ts -"), std::string::npos)
        << join->join.time_bound->lower_sql;
    EXPECT_NE(join->join.time_bound->upper_sql.find("t.ts +"), std::string::npos)
        << join->join.time_bound->upper_sql;
    ASSERT_TRUE(join->join.residual.has_value());
    EXPECT_FALSE(join->join.residual->sql.empty());
  }
  // An equality of two columns with nothing else: keys only.
  auto eq = sql::PlanQuery("SELECT * FROM t LEFT JOIN u ON t.id = u.id");
  ASSERT_TRUE(eq.ok());
  for (const plan::PlanNode* n : plan::Nodes(**eq)) {
    if (n->kind != plan::NodeKind::kJoin) continue;
    EXPECT_EQ(n->join.kind, plan::JoinKind::kLeft);
    EXPECT_FALSE(n->join.residual.has_value());
    EXPECT_FALSE(n->join.time_bound.has_value());
  }
}

}  // namespace
}  // namespace thund

namespace thund {
namespace {

// Two windows in one query: each aggregate gets the window written with it,
// whatever order the walk meets them in.
TEST(PlanWindowTest, EachAggregateGetsTheWindowWrittenWithIt) {
  auto p = sql::PlanQuery(
      "SELECT window.start AS ws, count(*) AS n,\n"
      "  (SELECT max(c) FROM (SELECT count(*) AS c FROM events\n"
      "     GROUP BY window(ts, '1 hour'))) AS top\n"
      "FROM events\n"
      "GROUP BY window(ts, '10 minutes')");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const plan::PlanNode* outer = plan::RowPathAggregate(**p);
  ASSERT_NE(outer, nullptr);
  const plan::PlanNode* w = plan::AggregateWindow(*outer);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->window.size_us, 600000000);
  EXPECT_EQ(w->pos.line, 5);
  int64_t inner_size = 0;
  for (const plan::PlanNode* n : plan::Nodes(**p)) {
    if (n->kind == plan::NodeKind::kWindowAssign && n != w) inner_size = n->window.size_us;
  }
  EXPECT_EQ(inner_size, 3600000000);
}

}  // namespace
}  // namespace thund

namespace thund {
namespace {

// ColumnNamesRead against DuckDB: every query over tables that keep only the
// columns it names gives the same rows as over the whole tables (a name it
// missed fails to bind or changes the rows). Where it gives no bound, the
// query needs one it cannot see (checked by the cases below).
TEST(PlanColumnsTest, AQueryOverOnlyTheColumnsItReadsGivesTheSameRows) {
  std::vector<std::string> queries = Corpus();
  for (const char* q : {
           // Nexmark shapes, struct fields, functions over several columns.
           "SELECT auction, bidder, 0.908 * price AS price, date_time FROM STREAM(bids)",
           "SELECT auction, price FROM bids WHERE auction % 123 = 0",
           "SELECT window_start, window_end, auction, count(*) AS n FROM HOP(TABLE bids, "
           "DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '10' SECONDS) GROUP BY ALL",
           "SELECT b.auction, b.price FROM bids b JOIN (SELECT max(price) AS m, window.end AS we "
           "FROM bids GROUP BY window(date_time, '10 seconds')) x ON b.price = x.m",
           "SELECT s.a + 1 AS a1, upper(k) AS k FROM (SELECT {'a': v, 'b': k} AS s, k FROM t)",
           "SELECT count(*) AS n FROM t",
           "SELECT concat_ws('-', k, CAST(id AS VARCHAR)) AS label FROM t ORDER BY label",
           "SELECT id, lag(v) OVER (PARTITION BY k ORDER BY ts) AS prev FROM t",
           // Stars whose columns only named references read further up.
           "SELECT k, v1 FROM (SELECT *, v + 1 AS v1 FROM t) WHERE id > 3",
           "SELECT k, count(*) AS n FROM (SELECT * EXCLUDE (ts) FROM t) GROUP BY k",
           "SELECT x.k, u.name FROM (SELECT t.* FROM t) x JOIN u ON x.id = u.id",
           "SELECT bidder, count(*) AS n, session_window.start AS s FROM bids "
           "GROUP BY bidder, session_window(date_time, '10 seconds')",
           "SELECT a.auction, a.n FROM (SELECT * FROM (SELECT auction, count(*) AS n FROM bids "
           "GROUP BY auction)) a ORDER BY a.n DESC LIMIT 3",
           // ... and stars whose every column counts: DISTINCT and set
           // operations compare whole rows.
           "SELECT k FROM (SELECT DISTINCT * FROM t)",
           "SELECT count(*) AS n FROM (SELECT * FROM t UNION SELECT * FROM t)",
           "SELECT k FROM (SELECT * FROM t EXCEPT SELECT * FROM t WHERE v > 5)",
           "SELECT k FROM (SELECT * REPLACE (v + id AS v) FROM t) WHERE v > 4",
       }) {
    queries.push_back(q);
  }
  const std::map<std::string, std::string> tables = {
      {"t", "SELECT i AS id, ['a', 'b', NULL][i % 3 + 1] AS k, i * 7 % 11 AS v, "
            "TIMESTAMP '2026-01-01' + INTERVAL (i) MINUTE AS ts FROM range(20) r(i)"},
      {"u", "SELECT i AS id, 'n' || i AS name, TIMESTAMP '2026-01-01' + INTERVAL (i * 2) "
            "MINUTE AS ts FROM range(0, 30, 3) r(i)"},
      {"events", "SELECT i % 4 AS user_id, i * 1.5 AS amount, TIMESTAMP '2026-01-01' + "
                 "INTERVAL (i * 3) MINUTE AS ts, ['x', 'y'][i % 2 + 1] AS kind FROM range(40) "
                 "r(i)"},
      {"bids", "SELECT i % 5 AS auction, i % 3 AS bidder, i * 10 AS price, 'c' || i AS "
               "channel, TIMESTAMP '2026-01-01' + INTERVAL (i) SECOND AS date_time FROM "
               "range(60) r(i)"}};
  testing::DuckDbRunner whole;
  for (const auto& [name, rows] : tables) {
    ASSERT_TRUE(whole.Exec("CREATE TABLE " + name + " AS " + rows));
  }
  int pruned = 0;
  for (const auto& q : queries) {
    SCOPED_TRACE(q);
    auto plan = sql::PlanQuery(q);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    auto names = plan::ColumnNamesRead(**plan);
    if (!names) continue;
    auto duck_sql = SparkToDuckDb(q);
    ASSERT_TRUE(duck_sql.ok());
    std::string error;
    auto expected = whole.Rows(*duck_sql, &error);
    if (!error.empty()) continue;  // a file that is not there
    testing::DuckDbRunner narrow;
    bool dropped = false;
    for (const auto& [name, rows] : tables) {
      // The table with only the named columns (a placeholder when none is,
      // so the row count stays).
      std::string keep;
      for (const auto& col : whole.ColumnNames("SELECT * FROM " + name)) {
        if (names->count(col) == 0) {
          dropped = true;
          continue;
        }
        keep += (keep.empty() ? "" : ", ") + col;
      }
      if (keep.empty()) keep = "0 AS __thund_pad";
      ASSERT_TRUE(narrow.Exec("CREATE TABLE " + name + " AS SELECT " + keep + " FROM (" + rows +
                              ")"));
    }
    auto actual = narrow.Rows(*duck_sql, &error);
    ASSERT_TRUE(error.empty()) << "reads a column it does not name: " << error;
    std::sort(expected.begin(), expected.end());
    std::sort(actual.begin(), actual.end());
    EXPECT_EQ(expected, actual);
    pruned += dropped;
  }
  EXPECT_GT(pruned, 40);
}

TEST(PlanColumnsTest, QueriesThatReadColumnsTheyDoNotNameHaveNoBound) {
  for (const char* q : {
           "SELECT * FROM t",
           "SELECT t.* FROM t",
           "SELECT * EXCLUDE (k) FROM t",
           "SELECT COLUMNS('^v') FROM t",
           "SELECT to_json(t) AS j FROM t",
           "SELECT x FROM t AS x",
           "SELECT a, b FROM t AS x(a, b)",
           "SELECT id FROM t NATURAL JOIN u",
           "SELECT list_transform([1, 2], x -> x + v) AS l FROM t",
           "SELECT * FROM t PIVOT (sum(v) FOR k IN ('a', 'b'))",
           "SELECT k FROM (SELECT DISTINCT * FROM t)",
           "SELECT k FROM (SELECT * FROM t UNION SELECT * FROM u)",
           "SELECT v FROM (SELECT * REPLACE (v + id AS v) FROM t)",
       }) {
    SCOPED_TRACE(q);
    auto plan = sql::PlanQuery(q);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    auto names = plan::ColumnNamesRead(**plan);
    EXPECT_FALSE(names.has_value()) << "bound: " << names->size() << " names";
  }
  auto plan = sql::PlanQuery("SELECT auction, 0.908 * price AS p FROM STREAM(bids) WHERE p > 1");
  ASSERT_TRUE(plan.ok());
  auto names = plan::ColumnNamesRead(**plan);
  ASSERT_TRUE(names.has_value());
  EXPECT_EQ(*names, (std::set<std::string>{"auction", "price", "p"}));
}

}  // namespace
}  // namespace thund
