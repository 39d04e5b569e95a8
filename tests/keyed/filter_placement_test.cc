// PlanFilterPlacement: where the filter may run for a given query shape.
#include "engine/keyed/filter_placement.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

namespace thund::engine::keyed {
namespace {

std::vector<SourceSchema> Sources() {
  auto a = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("k", arrow::int64()),
                          arrow::field("v", arrow::utf8())});
  auto b = arrow::schema({arrow::field("k", arrow::int64()), arrow::field("name", arrow::utf8()),
                          arrow::field("id", arrow::int64())});
  return {{"a", a}, {"b", b}};
}

FilterPlacement Plan(const std::string& sql, std::vector<std::string> keys = {"id"},
                     std::vector<SourceSchema> sources = Sources()) {
  auto p = PlanFilterPlacement(sql, keys, sources);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : FilterPlacement{};
}

using Cols = std::vector<std::string>;

TEST(FilterPlacementTest, NoSqlFiltersTheSingleSource) {
  auto p = Plan("", {"ID"}, {Sources()[0]});
  EXPECT_FALSE(p.before_write);
  EXPECT_TRUE(p.row_wise);
  EXPECT_EQ(p.at_source.at("a"), Cols{"id"});
  EXPECT_TRUE(PlanFilterPlacement("", {"nope"}, {Sources()[0]}).status().IsInvalid());
}

TEST(FilterPlacementTest, ProjectionsAndWherePushDown) {
  for (const char* sql :
       {"SELECT * FROM a", "SELECT id, upper(v) AS v FROM a WHERE k > 3", "SELECT a.id, v FROM a",
        "SELECT x.id FROM a AS x", "SELECT * EXCLUDE (v) FROM a",
        "SELECT DISTINCT id, v FROM a ORDER BY id"}) {
    auto p = Plan(sql);
    EXPECT_FALSE(p.before_write) << sql << ": " << p.explanation;
    EXPECT_EQ(p.at_source.size(), 1u) << sql;
    EXPECT_EQ(p.at_source["a"], Cols{"id"}) << sql;
  }
  const std::vector<SourceSchema> only_a = {Sources()[0]};
  EXPECT_TRUE(Plan("SELECT id, upper(v) AS v FROM a WHERE k > 3", {"id"}, only_a).row_wise);
  EXPECT_FALSE(Plan("SELECT DISTINCT id FROM a", {"id"}, only_a).row_wise);
  EXPECT_FALSE(Plan("SELECT id, sum(k) OVER () FROM a", {"id"}, only_a).row_wise);
  EXPECT_FALSE(Plan("SELECT count(*) AS id FROM a", {"id"}, only_a).row_wise);
  EXPECT_FALSE(Plan("SELECT id FROM a WHERE k > (SELECT 1)", {"id"}, only_a).row_wise);
  EXPECT_FALSE(Plan("SELECT id FROM a ORDER BY id", {"id"}, only_a).row_wise);
  EXPECT_FALSE(Plan("SELECT id, upper(v) AS v FROM a", {"id"}, Sources()).row_wise);
}

TEST(FilterPlacementTest, RenamedKeyMapsToTheSourceColumn) {
  auto p = Plan("SELECT k AS id, v FROM a");
  EXPECT_FALSE(p.before_write);
  EXPECT_EQ(p.at_source["a"], Cols{"k"});
}

TEST(FilterPlacementTest, JoinsPushToThePreservedSideThatCarriesTheKey) {
  auto inner = Plan("SELECT a.id, b.name FROM a JOIN b ON a.k = b.k");
  EXPECT_FALSE(inner.before_write) << inner.explanation;
  EXPECT_EQ(inner.at_source.count("a"), 1u);
  EXPECT_EQ(inner.at_source.count("b"), 0u);
  EXPECT_FALSE(inner.row_wise);

  auto from_b = Plan("SELECT b.id, a.v FROM a JOIN b ON a.k = b.k");
  EXPECT_EQ(from_b.at_source.count("b"), 1u);

  auto left = Plan("SELECT a.id, b.name FROM a LEFT JOIN b ON a.k = b.k");
  EXPECT_FALSE(left.before_write);
  auto null_side = Plan("SELECT b.id, a.v FROM a LEFT JOIN b ON a.k = b.k");
  EXPECT_TRUE(null_side.before_write) << null_side.explanation;
  auto full = Plan("SELECT a.id FROM a FULL OUTER JOIN b ON a.k = b.k");
  EXPECT_TRUE(full.before_write);
  auto semi = Plan("SELECT a.id FROM a SEMI JOIN b ON a.k = b.k");
  EXPECT_FALSE(semi.before_write);
  auto composite = Plan("SELECT a.id, a.k FROM a JOIN b ON a.k = b.k", {"id", "k"});
  EXPECT_EQ(composite.at_source["a"], (Cols{"id", "k"}));
}

TEST(FilterPlacementTest, UnionsFilterEveryBranch) {
  auto p = Plan("SELECT id, v FROM a UNION ALL SELECT id, name FROM b");
  EXPECT_FALSE(p.before_write) << p.explanation;
  EXPECT_EQ(p.at_source["a"], Cols{"id"});
  EXPECT_EQ(p.at_source["b"], Cols{"id"});
  auto by_position = Plan("SELECT id, v FROM a UNION SELECT k, name FROM b");
  EXPECT_EQ(by_position.at_source["b"], Cols{"k"});
  auto computed_branch = Plan("SELECT id FROM a UNION ALL SELECT id + 1 FROM b");
  EXPECT_TRUE(computed_branch.before_write);
}

TEST(FilterPlacementTest, UnsafeShapesFilterBeforeTheWrite) {
  struct Case {
    const char* sql;
    const char* why;
  };
  for (const Case& c :
       std::vector<Case>{{"SELECT id, count(*) AS n FROM a GROUP BY id", "aggregates"},
                         {"SELECT id, row_number() OVER (ORDER BY k) AS r FROM a", "window"},
                         {"SELECT id FROM a LIMIT 10", "LIMIT"},
                         {"SELECT DISTINCT ON (k) id FROM a", "DISTINCT ON"},
                         {"SELECT id + 0 AS id FROM a", "computed"},
                         {"SELECT CAST(id AS VARCHAR) AS id FROM a", "computed"},
                         {"WITH t AS (SELECT * FROM a) SELECT id FROM t", "WITH"},
                         {"SELECT x.id FROM a x JOIN a y ON x.k = y.id", "more than once"},
                         {"SELECT id FROM a WHERE v IN (SELECT v FROM a)", "more than once"},
                         {"SELECT id FROM a POSITIONAL JOIN b", ""},
                         {"SELECT * FROM range(3) t(id)", ""}}) {
    auto p = Plan(c.sql);
    EXPECT_TRUE(p.before_write) << c.sql;
    EXPECT_TRUE(p.at_source.empty()) << c.sql;
    EXPECT_NE(p.explanation.find(c.why), std::string::npos) << c.sql << ": " << p.explanation;
  }
}

TEST(FilterPlacementTest, KeysFromTwoSourcesCannotBePushed) {
  auto p = Plan("SELECT a.id, b.k FROM a JOIN b ON a.id = b.id", {"id", "k"});
  EXPECT_TRUE(p.before_write);
  EXPECT_NE(p.explanation.find("different sources"), std::string::npos) << p.explanation;
}

TEST(FilterPlacementTest, BadSqlIsAnError) {
  EXPECT_TRUE(PlanFilterPlacement("SELEC id FROM a", {"id"}, Sources()).status().IsInvalid());
}

}  // namespace
}  // namespace thund::engine::keyed
