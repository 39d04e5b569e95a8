// Expectations: warn keeps and counts, drop removes and counts, fail aborts
// the flow (name, count so far, sample rows); independent flows still run and
// dependents are skipped by name. NULL predicate results are violations.
#include <arrow/scalar.h>

#include "batch_fixture.h"

namespace thund::native::testing {
namespace {

class ExpectationsTest : public BatchFixture {
 protected:
  void SetUp() override {
    WriteFile("items.csv",
              "id,qty,price\n1,2,10.0\n2,-1,5.0\n3,4,\n4,0,1.0\n5,3,2.5\n6,-7,3.0\n");
  }
  std::string Items() const { return "read_csv('" + Path("items.csv") + "', header = true)"; }

  Pipeline WithRule(ExpectationAction action) const {
    Pipeline p("exp");
    Dataset items = Dataset::MaterializedView("items");
    items.WithExpectation({"positive_qty", "qty > 0", action, {}});
    items.WithExpectation({"has_price", "price IS NOT NULL", ExpectationAction::kWarn, {}});
    p.AddQuery(items, "SELECT * FROM " + Items());
    p.AddQuery(Dataset::MaterializedView("totals"),
               "SELECT count(*) AS n, sum(qty * price) AS value FROM items");
    p.AddQuery(Dataset::MaterializedView("independent"), "SELECT 42 AS answer");
    return p;
  }
  int64_t OracleCount(const std::string& where) const {
    auto t = Oracle("SELECT count(*) FROM " + Items() + " WHERE " + where);
    return std::static_pointer_cast<arrow::Int64Scalar>(*t->column(0)->GetScalar(0))->value;
  }
  const RunEvent* ExpectationEvent(const std::string& name) const {
    for (const auto& e : events_) {
      if (e.kind == RunEvent::Kind::kExpectation && e.name == name) return &e;
    }
    return nullptr;
  }
};

TEST_F(ExpectationsTest, WarnKeepsRowsAndCountsThem) {
  RunSummary s = Run(WithRule(ExpectationAction::kWarn));
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_DATASET_MATCHES("items", "SELECT * FROM " + Items());
  const DatasetOutcome* o = Find(s, "items");
  EXPECT_EQ(o->expectation_violations.at("positive_qty"), OracleCount("NOT (qty > 0)"));
  // NULL counts as a violation.
  EXPECT_EQ(o->expectation_violations.at("has_price"), OracleCount("price IS NULL"));
  EXPECT_EQ(o->expectation_violations.at("has_price"), 1);
  const RunEvent* e = ExpectationEvent("positive_qty");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->action, "warn");
  EXPECT_EQ(e->count, OracleCount("NOT (qty > 0)"));
  EXPECT_EQ(e->rows_in, 6);
}

TEST_F(ExpectationsTest, DropRemovesViolatingRowsAndCountsThem) {
  RunSummary s = Run(WithRule(ExpectationAction::kDrop));
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_DATASET_MATCHES("items", "SELECT * FROM " + Items() + " WHERE qty > 0");
  EXPECT_DATASET_MATCHES("totals", "SELECT count(*) AS n, sum(qty * price) AS value FROM " +
                                       Items() + " WHERE qty > 0");
  const DatasetOutcome* o = Find(s, "items");
  EXPECT_EQ(o->expectation_violations.at("positive_qty"), OracleCount("NOT (qty > 0)"));
  EXPECT_EQ(o->native->rows_in, 6);
  EXPECT_EQ(o->rows_written, OracleCount("qty > 0"));
}

TEST_F(ExpectationsTest, DropTreatsNullAsViolation) {
  Pipeline p("null");
  Dataset d = Dataset::MaterializedView("priced");
  d.WithExpectation({"has_price", "price > 0", ExpectationAction::kDrop, {}});
  p.AddQuery(d, "SELECT * FROM " + Items());
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted);
  EXPECT_DATASET_MATCHES("priced", "SELECT * FROM " + Items() + " WHERE price > 0");
  EXPECT_EQ(Find(s, "priced")->expectation_violations.at("has_price"),
            OracleCount("price IS NULL OR NOT (price > 0)"));
}

TEST_F(ExpectationsTest, FailAbortsTheFlowAndSkipsOnlyDependents) {
  // A committed version first, to check that the failure leaves it in place.
  Pipeline ok = WithRule(ExpectationAction::kWarn);
  ASSERT_EQ(Run(ok).status, RunPhase::kCompleted);
  auto before = ReadDataset("items");

  RunSummary s = Run(WithRule(ExpectationAction::kFail));
  EXPECT_EQ(s.status, RunPhase::kFailed);
  const DatasetOutcome* items = Find(s, "items");
  EXPECT_EQ(items->status, DatasetStatus::kFailed);
  EXPECT_NE(items->reason.find("expectation 'positive_qty'"), std::string::npos) << items->reason;
  // One batch: the count so far is every violation.
  EXPECT_NE(items->reason.find(std::to_string(OracleCount("NOT (qty > 0)")) +
                               " violating rows so far"),
            std::string::npos)
      << items->reason;
  EXPECT_NE(items->reason.find("sample: {id: 2, qty: -1"), std::string::npos) << items->reason;
  const DatasetOutcome* totals = Find(s, "totals");
  EXPECT_EQ(totals->status, DatasetStatus::kSkipped);
  EXPECT_EQ(totals->reason, "upstream 'items' failed");
  EXPECT_EQ(Find(s, "independent")->status, DatasetStatus::kUpToDate);
  EXPECT_NE(s.error.find("positive_qty"), std::string::npos);
  bool skipped_event = false;
  for (const auto& e : events_) {
    skipped_event |= e.kind == RunEvent::Kind::kFlowSkipped && e.flow == "totals" &&
                     e.message == "upstream 'items' failed";
  }
  EXPECT_TRUE(skipped_event);
  // The previous version is untouched.
  EXPECT_TRUE(engine::testing::TablesEqualUnordered(*before, *ReadDataset("items")));
  EXPECT_EQ(CurrentVersion("items"), "v-000001");
}

TEST_F(ExpectationsTest, IndependentFlowsRunWhenAnotherFails) {
  RunSummary s = Run(WithRule(ExpectationAction::kFail));
  EXPECT_EQ(s.status, RunPhase::kFailed);
  EXPECT_EQ(Find(s, "independent")->status, DatasetStatus::kComputed);
  EXPECT_DATASET_MATCHES("independent", "SELECT 42 AS answer");
  EXPECT_EQ(ReadDataset("items"), nullptr);
}

TEST_F(ExpectationsTest, ExpectationsOnViewsAndSinksApplyToo) {
  Pipeline p("views");
  Dataset v = Dataset::View("good_items");
  v.WithExpectation({"positive_qty", "qty > 0", ExpectationAction::kDrop, {}});
  p.AddQuery(v, "SELECT * FROM " + Items());
  p.AddQuery(Dataset::MaterializedView("copy"), "SELECT * FROM good_items");
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_DATASET_MATCHES("copy", "SELECT * FROM " + Items() + " WHERE qty > 0");
  EXPECT_EQ(Find(s, "good_items")->expectation_violations.at("positive_qty"),
            OracleCount("NOT (qty > 0)"));
}

}  // namespace
}  // namespace thund::native::testing
