// streaming.late_rows: Validate() (each error case, and what is accepted), the
// late-rows table as written by the flows naming it (no no-writer warning,
// TopoOrder, cycles), FlowsSendingLateRowsTo, and the run-wide streaming mode
// (EffectiveStreamingMode).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/validate_test_util.h"

namespace thund {
namespace {

using ::testing::ElementsAre;
using testing::BasePipeline;
using testing::Contains;
using testing::Dump;
using testing::ExpectNo;
using testing::FindDatasetMut;
using testing::FindFlowMut;
using testing::One;

// BasePipeline with a streaming table `late` that flow `windowed` (which has
// its own watermark) sends its late rows to.
Pipeline WithLateRows() {
  Pipeline p = BasePipeline();
  p.Add(Dataset::StreamingTable("late"));
  FindFlowMut(p, "windowed")->streaming->late_rows = "late";
  return p;
}

std::vector<std::string> Names(const std::vector<const Flow*>& flows) {
  std::vector<std::string> out;
  for (const Flow* f : flows) out.push_back(f->name);
  return out;
}

constexpr const char* kLateCodes[] = {"late-rows-unknown", "late-rows-self", "late-rows-kind",
                                      "late-rows-written", "late-rows-watermark"};

TEST(ValidateLateRows, AStreamingTableNoFlowWritesIsAccepted) {
  Diagnostics d = Validate(WithLateRows());
  EXPECT_TRUE(d.empty()) << Dump(d);  // not even a no-writer warning for 'late'
  // Without late_rows the table is unwritten, as before.
  Pipeline p = WithLateRows();
  FindFlowMut(p, "windowed")->streaming->late_rows.clear();
  EXPECT_EQ(One(Validate(p), "no-writer").dataset, "late");
}

TEST(ValidateLateRows, SeveralFlowsMayShareOneTable) {
  Pipeline p = WithLateRows();
  Flow again = *FindFlowMut(p, "windowed");
  again.name = "windowed_again";
  p.Add(again);
  Diagnostics d = Validate(p);
  for (const char* code : kLateCodes) ExpectNo(d, code);
  EXPECT_THAT(Names(FlowsSendingLateRowsTo(p, "late")), ElementsAre("windowed", "windowed_again"));
  EXPECT_TRUE(FlowsSendingLateRowsTo(p, "windowed").empty());
  EXPECT_TRUE(FlowsSendingLateRowsTo(p, "").empty());  // "" names no table
  EXPECT_TRUE(FlowsSendingLateRowsTo(BasePipeline(), "late").empty());
}

TEST(ValidateLateRows, UnknownDatasetSaysDidYouMean) {
  Pipeline p = WithLateRows();
  FindFlowMut(p, "windowed")->streaming->late_rows = "lat";
  Diagnostic x = One(Validate(p), "late-rows-unknown");
  EXPECT_EQ(x.severity, Severity::kError);
  EXPECT_EQ(x.flow, "windowed");
  EXPECT_EQ(x.field_path, "flows[3].streaming.late_rows");
  EXPECT_TRUE(Contains(x.message, "'lat', which is not a dataset of this pipeline")) << x.message;
  EXPECT_TRUE(Contains(x.message, "did you mean 'late'?")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "streaming_table named 'lat'")) << x.hint;
}

TEST(ValidateLateRows, NotTheFlowsOwnTarget) {
  Pipeline p = WithLateRows();
  FindFlowMut(p, "windowed")->streaming->late_rows = "windowed";
  Diagnostics d = Validate(p);
  Diagnostic x = One(d, "late-rows-self");
  EXPECT_TRUE(Contains(x.message, "its own target")) << x.message;
  EXPECT_EQ(x.field_path, "flows[3].streaming.late_rows");
  ExpectNo(d, "late-rows-written");  // one problem, one diagnostic
  ExpectNo(d, "cycle");
}

TEST(ValidateLateRows, OnlyAStreamingTable) {
  for (DatasetKind kind : {DatasetKind::kTable, DatasetKind::kMaterializedView, DatasetKind::kView,
                           DatasetKind::kTemporaryView, DatasetKind::kSink}) {
    Pipeline p = WithLateRows();
    FindDatasetMut(p, "late")->kind = kind;
    Diagnostics d = Validate(p);
    Diagnostic x = One(d, "late-rows-kind");
    EXPECT_TRUE(Contains(x.message, std::string("which is a ") + Name(kind))) << x.message;
    EXPECT_TRUE(Contains(x.hint, "streaming_table")) << x.hint;
  }
}

TEST(ValidateLateRows, NoFlowMayWriteTheTable) {
  Pipeline p = WithLateRows();
  p.Add(Flow("fill_late", "late", "SELECT * FROM STREAM(events)"));
  Diagnostic x = One(Validate(p), "late-rows-written");
  EXPECT_EQ(x.flow, "windowed");
  EXPECT_TRUE(Contains(x.message, "which flow 'fill_late' writes")) << x.message;
  p.Add(Flow("fill_late_2", "late", "SELECT * FROM STREAM(events)"));
  x = One(Validate(p), "late-rows-written");
  EXPECT_TRUE(Contains(x.message, "which flows 'fill_late', 'fill_late_2' write")) << x.message;
  // An existing stored table of the wrong kind that a flow writes: the kind is reported.
  Pipeline q = WithLateRows();
  FindFlowMut(q, "windowed")->streaming->late_rows = "per_user";
  Diagnostics d = Validate(q);
  One(d, "late-rows-kind");
  ExpectNo(d, "late-rows-written");
}

TEST(ValidateLateRows, TheFlowNeedsAWatermark) {
  Pipeline p = WithLateRows();
  Flow* f = FindFlowMut(p, "windowed");
  f->streaming->watermark.reset();
  f->streaming->output_mode = OutputMode::kUpdate;  // keep Spark's append rule out of the way
  Diagnostics d = Validate(p);
  Diagnostic x = One(d, "late-rows-watermark");
  EXPECT_EQ(x.field_path, "flows[3].streaming.late_rows");
  EXPECT_TRUE(Contains(x.message, "has no watermark, so no row is ever late")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "watermark")) << x.hint;
  // A watermark declared on the flow writing its input stream counts.
  StreamingSpec source_spec;
  source_spec.watermark = Watermark{"ts", 1000, std::nullopt};
  FindFlowMut(p, "events")->streaming = source_spec;
  Diagnostics ok = Validate(p);
  for (const char* code : kLateCodes) ExpectNo(ok, code);
}

TEST(ValidateLateRows, EveryProblemAtOnce) {
  // Unknown table and no watermark are separate problems of one flow.
  Pipeline p = WithLateRows();
  Flow* f = FindFlowMut(p, "windowed");
  f->streaming->watermark.reset();
  f->streaming->output_mode = OutputMode::kComplete;
  f->streaming->late_rows = "nowhere";
  Diagnostics d = Validate(p);
  One(d, "late-rows-unknown");
  One(d, "late-rows-watermark");
}

TEST(ValidateLateRows, ReadersRunAfterTheFlowsNamingIt) {
  Pipeline p = WithLateRows();
  // 'aaa_late_count' sorts first, so only the late-rows edge orders it after 'windowed'.
  p.AddQuery(Dataset::MaterializedView("aaa_late_count"), "SELECT count(*) AS n FROM late");
  Diagnostics d = Validate(p);
  EXPECT_FALSE(HasErrors(d)) << Dump(d);
  auto order = TopoOrder(p);
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  std::vector<std::string> names = Names(*order);
  auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n); };
  EXPECT_LT(at("windowed"), at("aaa_late_count")) << ::testing::PrintToString(names);
  // Without late_rows nothing orders them.
  FindFlowMut(p, "windowed")->streaming->late_rows.clear();
  order = TopoOrder(p);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ((*order).front()->name, "aaa_late_count");
}

TEST(ValidateLateRows, ReadingItsOwnLateRowsIsACycle) {
  Pipeline p = WithLateRows();
  FindFlowMut(p, "windowed")->sql =
      "SELECT window_start, max(ts) AS ts, sum(amount) AS total FROM STREAM(events) "
      "WHERE id NOT IN (SELECT id FROM late) GROUP BY window_start";
  Diagnostic x = One(Validate(p), "cycle");
  EXPECT_TRUE(Contains(x.message, "late -> late")) << x.message;
  EXPECT_TRUE(Contains(x.message, "'windowed'")) << x.message;
  auto order = TopoOrder(p);
  ASSERT_FALSE(order.ok());
  EXPECT_TRUE(Contains(order.status().message(), "windowed -> windowed"))
      << order.status().ToString();
}

TEST(ValidateLateRows, ACycleThroughTheLateRowsTable) {
  // windowed -> late (its late rows) -> echo -> events -> windowed.
  Pipeline p = WithLateRows();
  p.Add(Flow("echo", "events", "SELECT * FROM STREAM(late)"));
  Diagnostic x = One(Validate(p), "cycle");
  EXPECT_TRUE(Contains(x.message, "events -> late -> events")) << x.message;
  EXPECT_TRUE(Contains(x.message, "'windowed', 'echo'")) << x.message;
  EXPECT_FALSE(TopoOrder(p).ok());
}

TEST(StreamingMode, EffectiveModeIsTheFlowsOwnThenTheRunsThenRecompute) {
  Flow batch("b", "b", "SELECT 1");
  Flow unset("u", "u", "SELECT 1");
  unset.streaming = StreamingSpec{};
  Flow recompute = unset, incremental = unset;
  recompute.streaming->mode = StreamingMode::kRecompute;
  incremental.streaming->mode = StreamingMode::kIncremental;
  const std::optional<StreamingMode> none, rec = StreamingMode::kRecompute,
                                           inc = StreamingMode::kIncremental;
  EXPECT_EQ(EffectiveStreamingMode(batch, none), StreamingMode::kRecompute);
  EXPECT_EQ(EffectiveStreamingMode(batch, inc), StreamingMode::kIncremental);
  EXPECT_EQ(EffectiveStreamingMode(unset, none), StreamingMode::kRecompute);
  EXPECT_EQ(EffectiveStreamingMode(unset, inc), StreamingMode::kIncremental);
  EXPECT_EQ(EffectiveStreamingMode(unset, rec), StreamingMode::kRecompute);
  EXPECT_EQ(EffectiveStreamingMode(recompute, inc), StreamingMode::kRecompute);
  EXPECT_EQ(EffectiveStreamingMode(incremental, rec), StreamingMode::kIncremental);
  EXPECT_EQ(EffectiveStreamingMode(incremental, none), StreamingMode::kIncremental);
}

TEST(StreamingMode, SetAndUnsetAreDifferentSpecs) {
  StreamingSpec unset, recompute;
  recompute.mode = StreamingMode::kRecompute;
  EXPECT_FALSE(unset.mode.has_value());
  EXPECT_NE(unset, recompute);
  EXPECT_EQ(unset.ToString(), "streaming{trigger=available_now, output=append}");
  EXPECT_EQ(recompute.ToString(),
            "streaming{mode=recompute, trigger=available_now, output=append}");
  StreamingSpec late = unset;
  late.late_rows = "late_bids";
  EXPECT_NE(late, unset);
  EXPECT_EQ(late.ToString(),
            "streaming{trigger=available_now, output=append, late_rows=late_bids}");
}

}  // namespace
}  // namespace thund
