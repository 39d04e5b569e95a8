// Validate(): targets, inputs, sinks, self-reads, cycles, single-writer kinds.
#include <gtest/gtest.h>

#include "ir/validate_test_util.h"

namespace thund {
namespace {

using testing::BasePipeline;
using testing::Contains;
using testing::Dump;
using testing::ExpectNo;
using testing::One;
using testing::WithCode;

TEST(ValidateGraph, UnknownTarget) {
  Pipeline p = BasePipeline();
  p.Add(Flow("f", "per_usr", "SELECT * FROM clean"));
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "unknown-target");
  EXPECT_EQ(x.flow, "f");
  EXPECT_EQ(x.dataset, "per_usr");
  EXPECT_TRUE(Contains(x.message, "did you mean 'per_user'")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "declare a dataset named 'per_usr'")) << x.hint;

  Pipeline empty_target = BasePipeline();
  empty_target.Add(Flow("g", "", "SELECT 1"));
  EXPECT_TRUE(Contains(One(Validate(empty_target), "unknown-target").message, "no target"));
  ExpectNo(Validate(BasePipeline()), "unknown-target");
}

TEST(ValidateGraph, UnknownInput) {
  Pipeline p = BasePipeline();
  testing::FindFlowMut(p, "per_user")->sql = "SELECT * FROM clena JOIN mystery USING (id)";
  Diagnostics d = Validate(p);
  auto found = WithCode(d, "unknown-input");
  ASSERT_EQ(found.size(), 2u) << Dump(d);
  EXPECT_EQ(found[0].flow, "per_user");
  EXPECT_TRUE(Contains(found[0].message, "'clena'"));
  EXPECT_TRUE(Contains(found[0].message, "did you mean 'clean'")) << found[0].message;
  EXPECT_TRUE(Contains(found[1].message, "'mystery'"));
  EXPECT_FALSE(Contains(found[1].message, "did you mean"));
  EXPECT_TRUE(Contains(found[1].hint, "declare")) << found[1].hint;
  EXPECT_TRUE(Contains(found[1].hint, "read_parquet(")) << found[1].hint;
}

TEST(ValidateGraph, KnownOrExternalInputsAreFine) {
  Pipeline p = BasePipeline();
  p.database = "sales";
  testing::FindFlowMut(p, "per_user")->sql =
      "WITH x AS (SELECT * FROM LIVE.clean) SELECT * FROM x JOIN warehouse.dim_customer USING "
      "(customer) JOIN read_parquet('f.parquet') USING (id) JOIN sales.clean USING (id) "
      "JOIN CLEAN USING (id)";
  Diagnostics d = Validate(p);
  ExpectNo(d, "unknown-input");
  EXPECT_FALSE(HasErrors(d)) << Dump(d);
  // Our own database's qualifier is stripped: sales.nothing is unknown.
  testing::FindFlowMut(p, "per_user")->sql = "SELECT * FROM sales.nothing";
  EXPECT_TRUE(Contains(One(Validate(p), "unknown-input").message, "'nothing'"));
}

TEST(ValidateGraph, SqlParseError) {
  Pipeline p = BasePipeline();
  testing::FindFlowMut(p, "clean")->sql = "SELECT id FROM events WHERE";
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "sql-parse-error");
  EXPECT_EQ(x.flow, "clean");
  EXPECT_TRUE(Contains(x.message, "syntax error")) << x.message;
  EXPECT_TRUE(Contains(x.message, "line 1")) << x.message;
  EXPECT_FALSE(x.hint.empty());
  ExpectNo(Validate(BasePipeline()), "sql-parse-error");
}

TEST(ValidateGraph, ReadsSink) {
  Pipeline p = BasePipeline();
  p.AddQuery(Dataset::MaterializedView("again"), "SELECT * FROM out");
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "reads-sink");
  EXPECT_EQ(x.flow, "again");
  EXPECT_TRUE(Contains(x.message, "sink 'out'"));
  EXPECT_TRUE(Contains(x.hint, "read the dataset that feeds the sink"));
  // Reading the sink's upstream is fine.
  Pipeline ok = BasePipeline();
  ok.AddQuery(Dataset::MaterializedView("again"), "SELECT * FROM per_user");
  ExpectNo(Validate(ok), "reads-sink");
}

TEST(ValidateGraph, SelfRead) {
  Pipeline p = BasePipeline();
  testing::FindFlowMut(p, "per_user")->sql = "SELECT * FROM per_user UNION ALL SELECT * FROM clean";
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "self-read");
  EXPECT_EQ(x.flow, "per_user");
  EXPECT_TRUE(Contains(x.message, "per_user -> per_user")) << x.message;
  ExpectNo(d, "cycle");  // reported once, with its own code
  // A CTE named like the target is not a self-read.
  Pipeline ok = BasePipeline();
  testing::FindFlowMut(ok, "per_user")->sql =
      "WITH per_user AS (SELECT * FROM clean) SELECT * FROM per_user";
  ExpectNo(Validate(ok), "self-read");
}

TEST(ValidateGraph, CycleNamesMembersInOrder) {
  Pipeline p("cyc");
  p.AddQuery(Dataset::MaterializedView("a"), "SELECT * FROM c");
  p.AddQuery(Dataset::MaterializedView("b"), "SELECT * FROM a");
  p.AddQuery(Dataset::View("c"), "SELECT * FROM b JOIN ok USING (k)");
  p.AddQuery(Dataset::MaterializedView("ok"), "SELECT 1 AS k");
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "cycle");
  EXPECT_TRUE(Contains(x.message, "a -> b -> c -> a")) << x.message;
  EXPECT_TRUE(Contains(x.message, "'b'") && Contains(x.message, "'c'") &&
              Contains(x.message, "'a'"))
      << x.message;
  EXPECT_EQ(x.flow, "b");  // the flow of the first edge a -> b
  EXPECT_FALSE(x.hint.empty());

  // Two separate cycles are two diagnostics.
  p.AddQuery(Dataset::MaterializedView("x"), "SELECT * FROM y");
  p.AddQuery(Dataset::MaterializedView("y"), "SELECT * FROM x");
  auto cycles = WithCode(Validate(p), "cycle");
  ASSERT_EQ(cycles.size(), 2u);
  EXPECT_TRUE(Contains(cycles[1].message, "x -> y -> x")) << cycles[1].message;

  // A diamond is not a cycle.
  Pipeline diamond("d");
  diamond.AddQuery(Dataset::MaterializedView("s"), "SELECT 1 AS k");
  diamond.AddQuery(Dataset::MaterializedView("l"), "SELECT * FROM s");
  diamond.AddQuery(Dataset::MaterializedView("r"), "SELECT * FROM s");
  diamond.AddQuery(Dataset::MaterializedView("j"), "SELECT * FROM l JOIN r USING (k)");
  Diagnostics dd = Validate(diamond);
  EXPECT_TRUE(dd.empty()) << Dump(dd);
}

TEST(ValidateGraph, CycleGroupMentionsExtraMembers) {
  // a <-> b and b <-> c: one strongly connected group {a, b, c}.
  Pipeline p("cyc");
  p.AddQuery(Dataset::MaterializedView("a"), "SELECT * FROM b");
  p.AddQuery(Dataset::MaterializedView("b"), "SELECT * FROM a UNION ALL SELECT * FROM c");
  p.AddQuery(Dataset::MaterializedView("c"), "SELECT * FROM b");
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "cycle");
  EXPECT_TRUE(Contains(x.message, "a -> b -> a")) << x.message;
  EXPECT_TRUE(Contains(x.message, "c also belong")) << x.message;
}

TEST(ValidateGraph, TwoFlowsWritingOneMaterializedView) {
  Pipeline p = BasePipeline();
  p.Add(Flow("per_user_2", "per_user", "SELECT customer, 0.0 AS total FROM clean"));
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "multiple-writers");
  EXPECT_EQ(x.flow, "per_user_2");
  EXPECT_EQ(x.dataset, "per_user");
  EXPECT_TRUE(Contains(x.message, "materialized_view 'per_user' is written by 2 flows"))
      << x.message;
  EXPECT_TRUE(Contains(x.hint, "UNION ALL"));
  EXPECT_TRUE(Contains(x.hint, "streaming_table"));

  // Views too; streaming tables accept several flows.
  Pipeline v = BasePipeline();
  v.AddQuery(Dataset::TemporaryView("tv"), "SELECT 1 AS x");
  v.Add(Flow("tv2", "tv", "SELECT 2 AS x"));
  EXPECT_EQ(One(Validate(v), "multiple-writers").dataset, "tv");
  Pipeline ok = BasePipeline();
  ok.Add(Flow::FromSource("events_backfill", "events", MemorySource{"old"}));
  ExpectNo(Validate(ok), "multiple-writers");
}

}  // namespace
}  // namespace thund
