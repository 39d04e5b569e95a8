// Input inference from SQL (InferSqlInputs / FlowInputs). Expected inputs are
// read off each query by hand: the relations a DuckDB binder would look up in
// the catalog.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "thund/validate.h"

namespace thund {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Names = std::vector<std::string>;

Names Infer(const std::string& sql) {
  auto r = InferSqlInputs(sql);
  EXPECT_TRUE(r.ok()) << sql << ": " << r.status();
  return r.ok() ? *r : Names{"<error>"};
}

TEST(InferSqlInputs, PlainAndJoins) {
  EXPECT_THAT(Infer("SELECT * FROM a"), ElementsAre("a"));
  EXPECT_THAT(Infer("SELECT * FROM a JOIN b ON a.k = b.k LEFT JOIN c USING (k), d"),
              ElementsAre("a", "b", "c", "d"));
  EXPECT_THAT(Infer("SELECT 1"), IsEmpty());
  EXPECT_THAT(Infer("VALUES (1), (2)"), IsEmpty());
  EXPECT_THAT(Infer("FROM z SELECT *"), ElementsAre("z"));
}

TEST(InferSqlInputs, FirstSeenOrderAndDedup) {
  EXPECT_THAT(Infer("SELECT * FROM b JOIN a ON TRUE JOIN b AS b2 ON TRUE"), ElementsAre("b", "a"));
  // ORDER BY is stored before FROM in DuckDB's tree; the text order wins.
  EXPECT_THAT(Infer("SELECT * FROM a ORDER BY (SELECT max(x) FROM o)"), ElementsAre("a", "o"));
  // SQL identifiers are case-insensitive: T and t are one table.
  EXPECT_THAT(Infer("SELECT * FROM T JOIN t ON TRUE"), ElementsAre("T"));
}

TEST(InferSqlInputs, CtesAreNotInputs) {
  EXPECT_THAT(Infer("WITH c AS (SELECT * FROM a) SELECT * FROM c JOIN b ON TRUE"),
              ElementsAre("a", "b"));
  EXPECT_THAT(Infer("WITH x AS (SELECT * FROM a), y AS (SELECT * FROM x) SELECT * FROM y"),
              ElementsAre("a"));
  EXPECT_THAT(Infer("WITH Foo AS (SELECT 1) SELECT * FROM foo"), IsEmpty());
  EXPECT_THAT(Infer("WITH m AS MATERIALIZED (SELECT * FROM src) SELECT * FROM m"),
              ElementsAre("src"));
}

TEST(InferSqlInputs, CteShadowsDatasetOnlyInItsScope) {
  // Inside the query the CTE named `a` hides dataset `a`.
  EXPECT_THAT(Infer("WITH a AS (SELECT * FROM b) SELECT * FROM a"), ElementsAre("b"));
  // A non-recursive CTE's own body reads the dataset of the same name
  // (DuckDB binds `a` inside the body to the catalog table).
  EXPECT_THAT(Infer("WITH a AS (SELECT x + 1 AS x FROM a) SELECT * FROM a"), ElementsAre("a"));
  // A CTE inside a subquery does not hide `a` outside it ...
  EXPECT_THAT(Infer("SELECT * FROM (WITH a AS (SELECT 1 AS x) SELECT * FROM a) s, a"),
              ElementsAre("a"));
  EXPECT_THAT(Infer("SELECT * FROM a WHERE x IN (WITH a AS (SELECT 1) SELECT * FROM a)"),
              ElementsAre("a"));
  // ... and a later CTE is not visible in an earlier one.
  EXPECT_THAT(Infer("WITH c AS (SELECT * FROM d), d AS (SELECT 1) SELECT * FROM c"),
              ElementsAre("d"));
}

TEST(InferSqlInputs, NestedAndRecursiveCtes) {
  EXPECT_THAT(Infer("WITH o AS (WITH i AS (SELECT * FROM base) SELECT * FROM i) "
                    "SELECT * FROM o, i"),
              ElementsAre("base", "i"));
  EXPECT_THAT(Infer("WITH o AS (SELECT * FROM (WITH i AS (SELECT * FROM base) SELECT * FROM i)) "
                    "SELECT * FROM o"),
              ElementsAre("base"));
  EXPECT_THAT(Infer("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
                    "SELECT * FROM r JOIN t ON t.n = r.n"),
              ElementsAre("t"));
  EXPECT_THAT(Infer("WITH RECURSIVE r AS (SELECT * FROM seed UNION ALL SELECT e.* FROM r JOIN "
                    "edges e ON e.src = r.dst) SELECT * FROM r"),
              ElementsAre("seed", "edges"));
}

TEST(InferSqlInputs, SubqueriesEverywhere) {
  EXPECT_THAT(Infer("SELECT * FROM (SELECT * FROM f) sub"), ElementsAre("f"));
  EXPECT_THAT(Infer("SELECT * FROM a WHERE k IN (SELECT k FROM b)"), ElementsAre("a", "b"));
  EXPECT_THAT(Infer("SELECT * FROM a WHERE EXISTS (SELECT 1 FROM e WHERE e.k = a.k)"),
              ElementsAre("a", "e"));
  EXPECT_THAT(Infer("SELECT (SELECT max(x) FROM s) AS m FROM a"), ElementsAre("s", "a"));
  EXPECT_THAT(Infer("SELECT * FROM t1, LATERAL (SELECT * FROM t2 WHERE t2.k = t1.k)"),
              ElementsAre("t1", "t2"));
  EXPECT_THAT(
      Infer("SELECT k, count(*) FROM a GROUP BY k HAVING count(*) > (SELECT avg(n) FROM h)"),
      ElementsAre("a", "h"));
  EXPECT_THAT(Infer("SELECT CASE WHEN x > 0 THEN (SELECT 1 FROM c1) END FROM a"),
              ElementsAre("c1", "a"));
}

TEST(InferSqlInputs, SetOperations) {
  EXPECT_THAT(Infer("SELECT k FROM a UNION SELECT k FROM b UNION ALL SELECT k FROM c"),
              ElementsAre("a", "b", "c"));
  EXPECT_THAT(Infer("SELECT k FROM a EXCEPT SELECT k FROM b INTERSECT SELECT k FROM c"),
              ElementsAre("a", "b", "c"));
}

TEST(InferSqlInputs, TableFunctionsAreNotInputs) {
  EXPECT_THAT(Infer("SELECT * FROM read_parquet('data/*.parquet')"), IsEmpty());
  EXPECT_THAT(Infer("SELECT * FROM range(10) r JOIN generate_series(1, 3) g ON TRUE"), IsEmpty());
  EXPECT_THAT(Infer("SELECT * FROM read_csv('x.csv') JOIN a USING (k)"), ElementsAre("a"));
  // A subquery among a table function's arguments is still searched.
  EXPECT_THAT(Infer("SELECT * FROM unnest((SELECT list(x) FROM q))"), ElementsAre("q"));
}

TEST(InferSqlInputs, StreamReadsItsArgument) {
  EXPECT_THAT(Infer("SELECT * FROM STREAM(events)"), ElementsAre("events"));
  EXPECT_THAT(Infer("SELECT * FROM stream(db.events) e JOIN dim USING (k)"),
              ElementsAre("db.events", "dim"));
  EXPECT_THAT(Infer("WITH s AS (SELECT 1) SELECT * FROM stream(s)"), IsEmpty());
}

TEST(InferSqlInputs, QualifiedAndQuotedNames) {
  EXPECT_THAT(Infer("SELECT * FROM db.t"), ElementsAre("db.t"));
  EXPECT_THAT(Infer("SELECT * FROM cat.db.t"), ElementsAre("cat.db.t"));
  EXPECT_THAT(Infer("SELECT * FROM \"My Table\" JOIN \"weird.name\" ON TRUE"),
              ElementsAre("My Table", "weird.name"));
  // A qualified name is never a CTE, even when the last part matches one.
  EXPECT_THAT(Infer("WITH t AS (SELECT 1) SELECT * FROM t, db.t"), ElementsAre("db.t"));
}

TEST(InferSqlInputs, ParseErrorsCarryDuckDbMessageAndPosition) {
  auto r = InferSqlInputs("SELEC * FROM a");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalid());
  EXPECT_THAT(r.status().message(), HasSubstr("syntax error"));
  EXPECT_THAT(r.status().message(), HasSubstr("SELEC"));
  EXPECT_THAT(r.status().message(), HasSubstr("line 1, column 1"));

  auto multi = InferSqlInputs("SELECT *\nFROM a\nWHERE x = = 1");
  ASSERT_FALSE(multi.ok());
  EXPECT_THAT(multi.status().message(), HasSubstr("line 3"));

  auto two = InferSqlInputs("SELECT 1; SELECT 2");
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.status().message(), HasSubstr("2 statements"));

  EXPECT_FALSE(InferSqlInputs("").ok());
  auto ddl = InferSqlInputs("CREATE TABLE x (a INT)");
  ASSERT_FALSE(ddl.ok());
  EXPECT_THAT(ddl.status().message(), HasSubstr("expected a SELECT query"));
}

TEST(InferSqlInputs, BoundNotConcatenated) {
  // Quotes and comment markers in the text cannot escape the parameter.
  EXPECT_THAT(Infer("SELECT 'it''s', '); DROP TABLE x; --' FROM a"), ElementsAre("a"));
  EXPECT_THAT(Infer("SELECT * FROM a -- trailing comment"), ElementsAre("a"));
}

TEST(InferSqlInputs, ThreadSafe) {
  const std::string sql = "WITH c AS (SELECT * FROM a) SELECT * FROM c JOIN b ON TRUE";
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto r = InferSqlInputs(sql);
        if (r.ok() && *r == Names{"a", "b"}) ++good[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(good[t], 50) << "thread " << t;
}

TEST(FlowInputs, ReducesPipelineQualifiers) {
  Pipeline p("p");
  p.catalog = "main_cat";
  p.database = "sales";
  p.Add(Dataset::MaterializedView("orders"));
  p.Add(Dataset::MaterializedView("Customers"));
  Flow f("f", "x",
         "SELECT * FROM live.orders JOIN LIVE.orders ON TRUE JOIN sales.orders ON TRUE "
         "JOIN main_cat.sales.orders ON TRUE JOIN other.orders ON TRUE JOIN customers ON TRUE");
  auto r = FlowInputs(p, f);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(*r, ElementsAre("orders", "other.orders", "Customers"));

  Flow src = Flow::FromSource("s", "x", MemorySource{"m"});
  EXPECT_THAT(*FlowInputs(p, src), IsEmpty());
  EXPECT_FALSE(FlowInputs(p, Flow("bad", "x", "SELECT FROM FROM")).ok());
}

TEST(FlowInputs, AmbiguousCaseIsLeftAlone) {
  Pipeline p("p");
  p.Add(Dataset::MaterializedView("Ab"));
  p.Add(Dataset::MaterializedView("aB"));
  auto r = FlowInputs(p, Flow("f", "x", "SELECT * FROM ab"));
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(*r, ElementsAre("ab"));
}

}  // namespace
}  // namespace thund
