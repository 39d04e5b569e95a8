// Validate(): the clean base pipeline, reporting many problems at once, names.
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

TEST(Validate, BasePipelineIsClean) {
  Diagnostics d = Validate(BasePipeline());
  EXPECT_TRUE(d.empty()) << Dump(d);
}

TEST(Validate, ReportsEveryProblemAtOnce) {
  Pipeline p = BasePipeline();
  p.Add(Dataset::MaterializedView("clean"));               // duplicate dataset
  p.Add(Flow("ghost", "nowhere", "SELECT * FROM clean"));  // unknown target
  p.Add(Flow("typo", "per_user", "SELECT * FROM claen"));  // unknown input + 2nd MV writer
  testing::FindFlowMut(p, "windowed")->streaming->window->size_ms = 0;
  Diagnostics d = Validate(p);
  EXPECT_EQ(One(d, "duplicate-dataset").dataset, "clean");
  EXPECT_EQ(One(d, "unknown-target").flow, "ghost");
  EXPECT_EQ(One(d, "unknown-input").flow, "typo");
  EXPECT_EQ(One(d, "multiple-writers").flow, "typo");
  EXPECT_EQ(One(d, "window-size").flow, "windowed");
  EXPECT_TRUE(HasErrors(d));
  // Errors first, then warnings.
  bool seen_warning = false;
  for (const auto& x : d) {
    if (x.severity == Severity::kWarning) seen_warning = true;
    if (seen_warning) {
      EXPECT_NE(x.severity, Severity::kError) << Dump(d);
    }
  }
}

TEST(Validate, LocationsAndFieldPathsAreCopied) {
  Pipeline p = BasePipeline();
  testing::FindFlowMut(p, "windowed")->location = {"p.yaml", 12, 3};
  testing::FindFlowMut(p, "windowed")->streaming->window->size_ms = -1;
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "window-size");
  EXPECT_EQ(x.location, (SourceLocation{"p.yaml", 12, 3}));
  EXPECT_EQ(x.field_path, "flows[3].streaming.window.size");
  EXPECT_TRUE(Contains(x.ToString(), "p.yaml:12:3")) << x.ToString();
}

TEST(ValidateNames, EmptyDatasetName) {
  Pipeline p = BasePipeline();
  p.Add(Dataset::Table(""));
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "empty-name");
  EXPECT_EQ(x.field_path, "datasets[5].name");
  EXPECT_TRUE(Contains(x.message, "no name"));
  EXPECT_FALSE(x.hint.empty());
  ExpectNo(Validate(BasePipeline()), "empty-name");
}

TEST(ValidateNames, EmptyFlowName) {
  Pipeline p = BasePipeline();
  p.Add(Flow("", "out", "SELECT * FROM per_user"));
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "empty-name");
  EXPECT_EQ(x.dataset, "out");
  EXPECT_TRUE(Contains(x.message, "'out'"));
  EXPECT_EQ(x.field_path, "flows[5].name");
}

TEST(ValidateNames, DuplicateDataset) {
  Pipeline p = BasePipeline();
  p.datasets[1].location = {"p.yaml", 7, 1};
  Dataset dup = Dataset::Table("clean");
  dup.location = {"p.yaml", 40, 1};
  p.Add(dup);
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "duplicate-dataset");
  EXPECT_EQ(x.dataset, "clean");
  EXPECT_EQ(x.location.line, 40);
  EXPECT_TRUE(Contains(x.message, "p.yaml:7:1")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "rename"));
  // Same name differing in case is a different dataset in the IR.
  Pipeline ok = BasePipeline();
  ok.AddQuery(Dataset::MaterializedView("Clean"), "SELECT 1 AS x");
  ExpectNo(Validate(ok), "duplicate-dataset");
}

TEST(ValidateNames, DuplicateFlow) {
  Pipeline p = BasePipeline();
  p.Add(Flow("out", "out", "SELECT * FROM clean"));
  Diagnostics d = Validate(p);
  const Diagnostic& x = One(d, "duplicate-flow");
  EXPECT_EQ(x.flow, "out");
  EXPECT_TRUE(Contains(x.message, "flows[4]")) << x.message;  // first declaration, no file
  // Two differently named flows into one sink are fine.
  Pipeline ok = BasePipeline();
  ok.Add(Flow("out2", "out", "SELECT * FROM per_user"));
  Diagnostics dok = Validate(ok);
  ExpectNo(dok, "duplicate-flow");
  EXPECT_FALSE(HasErrors(dok)) << Dump(dok);
}

}  // namespace
}  // namespace thund
