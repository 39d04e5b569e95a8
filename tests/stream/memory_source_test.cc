// MemorySource streams: batches in order, Exhausted, take_all, positions,
// and the errors for missing or mismatched batches.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include "engine/stream/stream_source.h"
#include "engine/table_compare.h"

namespace thund::engine::stream {
namespace {

using testing::TablesEqualOrdered;

std::shared_ptr<arrow::RecordBatch> Batch(int64_t first, int64_t n) {
  arrow::Int64Builder b;
  for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(b.Append(first + i).ok());
  return arrow::RecordBatch::Make(arrow::schema({arrow::field("x", arrow::int64())}), n,
                                  {b.Finish().ValueOrDie()});
}

std::shared_ptr<arrow::Table> AsTable(std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  return arrow::Table::FromRecordBatches(batches).ValueOrDie();
}

class MemorySourceTest : public ::testing::Test {
 protected:
  arrow::Result<std::unique_ptr<StreamSource>> Make(
      const std::vector<std::shared_ptr<arrow::RecordBatch>>* batches) {
    StreamSourceContext ctx;
    ctx.flow = &flow_;
    ctx.target = &target_;
    ctx.memory_batches = batches;
    return MakeStreamSource(*flow_.source, ctx);
  }
  Flow flow_ = Flow::FromSource("feed", "events", MemorySource{"clicks"});
  Dataset target_ = Dataset::StreamingTable("events");
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_ = {Batch(0, 3), Batch(3, 0),
                                                               Batch(3, 2)};
};

TEST_F(MemorySourceTest, OneBatchPerTriggerInOrderThenExhausted) {
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make(&batches_));
  EXPECT_EQ(src->Position(), "");
  for (size_t i = 0; i < batches_.size(); ++i) {
    EXPECT_FALSE(src->Exhausted());
    THUND_ASSERT_OK_AND_ASSIGN(auto got, src->Next({}));
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(TablesEqualOrdered(*AsTable({batches_[i]}), *got->rows));
    EXPECT_EQ(got->position_summary, "batch=" + std::to_string(i + 1) + "/3");
  }
  EXPECT_TRUE(src->Exhausted());
  THUND_ASSERT_OK_AND_ASSIGN(auto none, src->Next({}));
  EXPECT_FALSE(none.has_value());
  EXPECT_EQ(src->Position(), R"({"batch":3})");
}

TEST_F(MemorySourceTest, TakeAllConcatenatesTheRest) {
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make(&batches_));
  THUND_ASSERT_OK_AND_ASSIGN(auto first, src->Next({}));
  THUND_ASSERT_OK_AND_ASSIGN(auto rest, src->Next({/*take_all=*/true}));
  ASSERT_TRUE(rest.has_value());
  EXPECT_TRUE(TablesEqualOrdered(*AsTable({Batch(3, 2)}), *rest->rows));
  EXPECT_TRUE(src->Exhausted());
}

TEST_F(MemorySourceTest, RestoreContinuesAfterTheCommittedBatch) {
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make(&batches_));
  ASSERT_TRUE(src->Next({}).ok());
  const std::string pos = src->Position();
  THUND_ASSERT_OK_AND_ASSIGN(auto again, Make(&batches_));
  THUND_ASSERT_OK(again->Restore(pos));
  THUND_ASSERT_OK_AND_ASSIGN(auto got, again->Next({}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->rows->num_rows(), 0);  // batch 1 is the empty one
  EXPECT_EQ(again->Position(), R"({"batch":2})");
}

TEST_F(MemorySourceTest, RestoreBeyondTheBatchesGivenLeavesNothing) {
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make(&batches_));
  THUND_ASSERT_OK(src->Restore(R"({"batch":7})"));
  EXPECT_TRUE(src->Exhausted());
  THUND_ASSERT_OK_AND_ASSIGN(auto none, src->Next({true}));
  EXPECT_FALSE(none.has_value());
}

TEST_F(MemorySourceTest, RestoreRejectsAnotherSourcesPosition) {
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make(&batches_));
  auto st = src->Restore(R"({"offset":3})");
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("flow 'feed'"), std::string::npos) << st.message();
}

TEST_F(MemorySourceTest, MissingBatchesNameTheFlowSourceAndRunOption) {
  auto src = Make(nullptr);
  ASSERT_TRUE(src.status().IsInvalid());
  const std::string m = src.status().message();
  EXPECT_NE(m.find("flow 'feed'"), std::string::npos) << m;
  EXPECT_NE(m.find("'clicks'"), std::string::npos) << m;
  EXPECT_NE(m.find("RunOptions::memory_streams[\"clicks\"]"), std::string::npos) << m;
}

TEST_F(MemorySourceTest, BatchesWithDifferentSchemasAreRejected) {
  auto other = arrow::RecordBatch::Make(arrow::schema({arrow::field("y", arrow::utf8())}), 0,
                                        {arrow::MakeArrayOfNull(arrow::utf8(), 0).ValueOrDie()});
  std::vector<std::shared_ptr<arrow::RecordBatch>> mixed = {Batch(0, 1), other};
  auto src = Make(&mixed);
  ASSERT_TRUE(src.status().IsInvalid());
  EXPECT_NE(src.status().message().find("batch 1"), std::string::npos);
}

TEST_F(MemorySourceTest, NoBatchesIsExhaustedAtOnce) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> none;
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make(&none));
  EXPECT_TRUE(src->Exhausted());
  THUND_ASSERT_OK_AND_ASSIGN(auto got, src->Next({}));
  EXPECT_FALSE(got.has_value());
}

}  // namespace
}  // namespace thund::engine::stream
