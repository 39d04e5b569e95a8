// Reconciliation: unchanged datasets are not recomputed; a changed input file
// or definition recomputes exactly what depends on it; --full-refresh,
// --full-refresh-all and --refresh select what runs.
#include <gmock/gmock.h>

#include <filesystem>

#include "batch_fixture.h"

namespace thund::native::testing {
namespace {

class ReconcileTest : public BatchFixture {
 protected:
  void SetUp() override {
    WriteFile("a.csv", "id,v\n1,10\n2,20\n");
    WriteFile("b.csv", "id,w\n1,5\n2,6\n");
  }
  Pipeline MakePipeline(const std::string& a_filter = "v > 0") const {
    Pipeline p("rec");
    p.AddQuery(Dataset::Table("a"),
               "SELECT * FROM read_csv('" + Path("a.csv") + "', header = true) WHERE " + a_filter);
    p.AddQuery(Dataset::Table("b"), "SELECT * FROM read_csv('" + Path("b.csv") + "', header = true)");
    p.AddQuery(Dataset::MaterializedView("ab"), "SELECT a.id, v, w FROM a JOIN b USING (id)");
    p.AddQuery(Dataset::MaterializedView("only_b"), "SELECT count(*) AS n FROM b");
    return p;
  }
  std::string Status(const RunSummary& s, const std::string& d) const {
    const DatasetOutcome* o = Find(s, d);
    return o ? Name(o->status) : "<missing>";
  }
  std::string Reason(const RunSummary& s, const std::string& d) const {
    const DatasetOutcome* o = Find(s, d);
    return o ? o->reason : "<missing>";
  }
};

TEST_F(ReconcileTest, UnchangedDatasetsAreNotRecomputed) {
  Pipeline p = MakePipeline();
  RunSummary first = Run(p);
  for (const char* d : {"a", "b", "ab", "only_b"}) {
    EXPECT_EQ(Status(first, d), "computed") << d;
    EXPECT_EQ(Reason(first, d), "never materialized") << d;
  }
  events_.clear();
  RunSummary second = Run(p);
  for (const char* d : {"a", "b", "ab", "only_b"}) {
    EXPECT_EQ(Status(second, d), "up_to_date") << d;
    EXPECT_NE(Reason(second, d).find("unchanged since v-000001"), std::string::npos) << d;
    EXPECT_EQ(CurrentVersion(d), "v-000001") << d;
  }
  for (const auto& e : events_) {
    EXPECT_NE(e.kind, RunEvent::Kind::kFlowStarted) << e.ToString();
  }
}

TEST_F(ReconcileTest, ChangedInputFileRecomputesItsDependentsOnly) {
  Pipeline p = MakePipeline();
  Run(p);
  WriteFile("a.csv", "id,v\n1,10\n2,21\n");
  RunSummary s = Run(p);
  EXPECT_EQ(Status(s, "a"), "computed");
  EXPECT_NE(Reason(s, "a").find("input file " + Path("a.csv") + " changed"), std::string::npos)
      << Reason(s, "a");
  EXPECT_EQ(Status(s, "ab"), "computed");
  EXPECT_NE(Reason(s, "ab").find("input 'a' changed"), std::string::npos) << Reason(s, "ab");
  EXPECT_EQ(Status(s, "b"), "up_to_date");
  EXPECT_EQ(Status(s, "only_b"), "up_to_date");
  EXPECT_DATASET_MATCHES("ab", "SELECT a.id, v, w FROM read_csv('" + Path("a.csv") +
                                   "') a JOIN read_csv('" + Path("b.csv") + "') USING (id)");
}

TEST_F(ReconcileTest, NewFileMatchingAGlobRecomputes) {
  Pipeline p("glob");
  WriteFile("parts/1.csv", "x\n1\n");
  p.AddQuery(Dataset::Table("t"), "SELECT * FROM read_csv('" + Path("parts/*.csv") + "')");
  Run(p);
  WriteFile("parts/2.csv", "x\n2\n");
  RunSummary s = Run(p);
  EXPECT_EQ(Status(s, "t"), "computed");
  EXPECT_NE(Reason(s, "t").find("new input file " + Path("parts/2.csv")), std::string::npos)
      << Reason(s, "t");
  EXPECT_DATASET_MATCHES("t", "SELECT * FROM read_csv('" + Path("parts/*.csv") + "')");
}

TEST_F(ReconcileTest, ChangedDefinitionRecomputes) {
  Run(MakePipeline());
  RunSummary s = Run(MakePipeline("v > 10"));
  EXPECT_EQ(Status(s, "a"), "computed");
  EXPECT_EQ(Reason(s, "a"), "definition changed");
  EXPECT_EQ(Status(s, "ab"), "computed");
  EXPECT_EQ(Status(s, "b"), "up_to_date");
  EXPECT_DATASET_MATCHES("a", "SELECT * FROM read_csv('" + Path("a.csv") + "') WHERE v > 10");
}

TEST_F(ReconcileTest, FullRefreshRecomputesTheNamedDatasetsOnly) {
  Pipeline p = MakePipeline();
  Run(p);
  RunOptions o;
  o.full_refresh = {"b"};
  RunSummary s = Run(p, o);
  EXPECT_EQ(Status(s, "b"), "computed");
  EXPECT_EQ(Reason(s, "b"), "full refresh requested");
  EXPECT_EQ(CurrentVersion("b"), "v-000002");
  // Not named: not run (spark-pipelines semantics), even though b changed version.
  EXPECT_EQ(Status(s, "ab"), "skipped");
  EXPECT_EQ(Status(s, "a"), "skipped");
  // A later plain run brings the dependents up to date.
  RunSummary after = Run(p);
  EXPECT_EQ(Status(after, "ab"), "computed");
  EXPECT_NE(Reason(after, "ab").find("input 'b' changed"), std::string::npos);
  EXPECT_EQ(Status(after, "a"), "up_to_date");
}

TEST_F(ReconcileTest, FullRefreshAllRecomputesEverything) {
  Pipeline p = MakePipeline();
  Run(p);
  RunOptions o;
  o.full_refresh_all = true;
  RunSummary s = Run(p, o);
  for (const char* d : {"a", "b", "ab", "only_b"}) {
    EXPECT_EQ(Status(s, d), "computed") << d;
    EXPECT_EQ(CurrentVersion(d), "v-000002") << d;
  }
}

TEST_F(ReconcileTest, RefreshSelectsDatasetsAndStillReconciles) {
  Pipeline p = MakePipeline();
  Run(p);
  WriteFile("a.csv", "id,v\n1,11\n2,20\n");
  WriteFile("b.csv", "id,w\n1,5\n2,7\n");
  RunOptions o;
  o.refresh = {"a"};
  RunSummary s = Run(p, o);
  EXPECT_EQ(Status(s, "a"), "computed");
  EXPECT_EQ(Status(s, "b"), "skipped");
  EXPECT_NE(Reason(s, "b").find("not selected"), std::string::npos);
  EXPECT_EQ(Status(s, "ab"), "skipped");
  EXPECT_EQ(CurrentVersion("b"), "v-000001");
  // A refreshed dataset that is up to date is not recomputed.
  RunSummary again = Run(p, o);
  EXPECT_EQ(Status(again, "a"), "up_to_date");
}

TEST_F(ReconcileTest, RefreshComputesNeverMaterializedUpstream) {
  Pipeline p = MakePipeline();
  RunOptions o;
  o.refresh = {"ab"};
  RunSummary s = Run(p, o);
  EXPECT_EQ(Status(s, "a"), "computed");
  EXPECT_EQ(Status(s, "b"), "computed");
  EXPECT_EQ(Status(s, "ab"), "computed");
  EXPECT_EQ(Status(s, "only_b"), "skipped");
}

TEST_F(ReconcileTest, UnknownRefreshNameIsAnError) {
  RunOptions o;
  o.refresh = {"nope"};
  auto r = TryRun(MakePipeline(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'nope'"), std::string::npos);
}

TEST_F(ReconcileTest, OnceFlowRunsOnceUntilFullRefresh) {
  Pipeline p("once");
  p.Add(Dataset::Table("t"));
  Flow backfill("backfill", "t", "SELECT * FROM read_csv('" + Path("b.csv") + "', header = true)");
  backfill.WithOnce();
  p.Add(backfill);
  p.Add(Flow("live", "t", "SELECT id, v AS w FROM read_csv('" + Path("a.csv") + "', header = true)"));
  Run(p);
  WriteFile("b.csv", "id,w\n1,5\n2,6\n3,7\n");  // the backfill source changes
  WriteFile("a.csv", "id,v\n9,90\n");
  RunSummary s = Run(p);
  EXPECT_EQ(Status(s, "t"), "computed");
  // The once flow's rows are kept from its first run; the other flow re-ran.
  EXPECT_DATASET_MATCHES("t", "SELECT * FROM (VALUES (1, 5), (2, 6), (9, 90)) v(id, w)");
  RunOptions full;
  full.full_refresh = {"t"};
  Run(p, full);
  EXPECT_DATASET_MATCHES("t", "SELECT * FROM read_csv('" + Path("b.csv") +
                                  "') UNION ALL SELECT id, v FROM read_csv('" + Path("a.csv") + "')");
}

TEST_F(ReconcileTest, AFailureSkipsEveryDependentNamingTheCause) {
  Pipeline p = MakePipeline();
  p.AddQuery(Dataset::MaterializedView("ab_count"), "SELECT count(*) AS n FROM ab");
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  std::filesystem::remove(Path("a.csv"));
  RunSummary s = Run(p);
  EXPECT_EQ(s.status, RunPhase::kFailed);
  EXPECT_EQ(Status(s, "a"), "failed");
  EXPECT_THAT(Reason(s, "a"), ::testing::HasSubstr("matches no file"));
  EXPECT_EQ(Status(s, "ab"), "skipped");
  EXPECT_EQ(Reason(s, "ab"), "upstream 'a' failed");
  EXPECT_EQ(Status(s, "ab_count"), "skipped");
  EXPECT_EQ(Reason(s, "ab_count"), "upstream 'a' failed");
  EXPECT_EQ(Status(s, "only_b"), "up_to_date");
  // Nothing committed is lost.
  EXPECT_EQ(CurrentVersion("a"), "v-000001");
  EXPECT_EQ(CurrentVersion("ab_count"), "v-000001");
}

}  // namespace
}  // namespace thund::native::testing
