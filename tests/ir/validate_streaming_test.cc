// Validate(): streaming knobs, event-time columns, windows, triggers,
// watermarks, and the append-mode aggregation rule.
#include <gtest/gtest.h>

#include "ir/validate_test_util.h"

namespace thund {
namespace {

using testing::BasePipeline;
using testing::Contains;
using testing::Dump;
using testing::ExpectNo;
using testing::FindDatasetMut;
using testing::FindFlowMut;
using testing::One;
using testing::WithCode;

StreamingSpec& Spec(Pipeline& p) { return *FindFlowMut(p, "windowed")->streaming; }

TEST(ValidateStreaming, AStreamViewIsReadOnlyByStreamingFlowsOfStreamingTablesAndSinks) {
  // 'events' as a temporary view over its memory source: a stream view.
  Pipeline p = BasePipeline();
  FindDatasetMut(p, "events")->kind = DatasetKind::kTemporaryView;
  Diagnostics d = Validate(p);
  ExpectNo(d, "source-target-kind");
  ExpectNo(d, "streaming-on-batch-target");
  // 'windowed' streams it; the materialized view 'clean' would read it whole.
  Diagnostic x = One(d, "stream-view-reader");
  EXPECT_EQ(x.flow, "clean");
  EXPECT_TRUE(Contains(x.message, "'events'")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "streaming table")) << x.hint;

  // A persisted view cannot take a source; the hint names the temporary view.
  Pipeline v = BasePipeline();
  FindDatasetMut(v, "events")->kind = DatasetKind::kView;
  Diagnostic y = One(Validate(v), "source-target-kind");
  EXPECT_TRUE(Contains(y.hint, "temporary view")) << y.hint;

  // Without the batch reader the pipeline is valid.
  Pipeline ok = BasePipeline();
  FindDatasetMut(ok, "events")->kind = DatasetKind::kTemporaryView;
  FindFlowMut(ok, "clean")->sql = "SELECT 1 AS id";
  Diagnostics dok = Validate(ok);
  EXPECT_FALSE(HasErrors(dok)) << testing::Dump(dok);
}

TEST(ValidateStreaming, KnobsOnBatchTarget) {
  for (DatasetKind kind : {DatasetKind::kMaterializedView, DatasetKind::kView,
                           DatasetKind::kTemporaryView, DatasetKind::kTable}) {
    Pipeline p = BasePipeline();
    FindDatasetMut(p, "windowed")->kind = kind;
    Diagnostics d = Validate(p);
    Diagnostic x = One(d, "streaming-on-batch-target");
    EXPECT_EQ(x.flow, "windowed");
    EXPECT_EQ(x.dataset, "windowed");
    EXPECT_TRUE(Contains(x.message, Name(kind))) << x.message;
    EXPECT_TRUE(Contains(x.message, "streaming settings")) << x.message;
    EXPECT_TRUE(Contains(x.hint, "declare the target as a streaming_table")) << x.hint;
  }
  // CDC and a streaming source are streaming knobs too.
  Pipeline p = BasePipeline();
  FindDatasetMut(p, "events")->kind = DatasetKind::kTable;
  Diagnostic x = One(Validate(p), "streaming-on-batch-target");
  EXPECT_EQ(x.flow, "events");
  EXPECT_TRUE(Contains(x.message, "streaming memory source")) << x.message;

  Pipeline c = BasePipeline();
  FindFlowMut(c, "clean")->cdc = Cdc{{"id"}, "ts", "", {}, 1, {}, {}, {}};
  EXPECT_TRUE(Contains(One(Validate(c), "streaming-on-batch-target").message, "CDC"));

  // Streaming tables and sinks take streaming flows.
  Pipeline ok = BasePipeline();
  FindDatasetMut(ok, "windowed")->kind = DatasetKind::kSink;
  ExpectNo(Validate(ok), "streaming-on-batch-target");
  ExpectNo(Validate(BasePipeline()), "streaming-on-batch-target");
}

TEST(ValidateStreaming, WatermarkColumnMissingFromInputSchema) {
  Pipeline p = BasePipeline();
  Spec(p).watermark->event_time_column = "event_ts";
  Diagnostics d = Validate(p);
  Diagnostic x = One(d, "watermark-column");
  EXPECT_EQ(x.flow, "windowed");
  EXPECT_TRUE(Contains(x.message, "'event_ts'"));
  // Checked against what the flow reads (events), not what it writes.
  EXPECT_TRUE(Contains(x.message, "'events'; columns: id, ts, amount, customer")) << x.message;
  EXPECT_EQ(x.field_path, "flows[3].streaming.watermark.event_time_column");
  // An input without a declared schema: nothing to check against.
  FindDatasetMut(p, "events")->schema.arrow = nullptr;
  Pipeline undeclared = p;
  Spec(undeclared).window->time_column = "event_ts";
  Diagnostics du = Validate(undeclared);
  ExpectNo(du, "watermark-column");
  ExpectNo(du, "window-column");
  // Empty column is always an error.
  Spec(undeclared).watermark->event_time_column = "";
  EXPECT_TRUE(Contains(One(Validate(undeclared), "watermark-column").message, "no event-time"));
}

TEST(ValidateStreaming, WindowedAggregationOutputNeedNotCarryEventTime) {
  // The target of a windowed aggregation drops ts; the input has it.
  Pipeline p = BasePipeline();
  FindDatasetMut(p, "windowed")->schema.arrow =
      arrow::schema({arrow::field("window_start", arrow::timestamp(arrow::TimeUnit::MILLI)),
                     arrow::field("total", arrow::float64())});
  FindFlowMut(p, "windowed")->sql =
      "SELECT window_start, sum(amount) AS total FROM STREAM(events) GROUP BY window_start";
  Diagnostics d = Validate(p);
  ExpectNo(d, "watermark-column");
  ExpectNo(d, "window-column");
}

TEST(ValidateStreaming, SourceFlowEventTimeIsCheckedOnItsTarget) {
  Pipeline p = BasePipeline();
  StreamingSpec spec;
  spec.watermark = Watermark{"arrival", 0, std::nullopt};
  FindFlowMut(p, "events")->streaming = spec;
  Diagnostic x = One(Validate(p), "watermark-column");
  EXPECT_EQ(x.flow, "events");
  EXPECT_TRUE(Contains(x.message, "'events'")) << x.message;
  FindFlowMut(p, "events")->streaming->watermark->event_time_column = "ts";
  ExpectNo(Validate(p), "watermark-column");
}

TEST(ValidateStreaming, WindowColumnMissingOrNotTemporal) {
  Pipeline p = BasePipeline();
  Spec(p).window->time_column = "tss";
  Diagnostic x = One(Validate(p), "window-column");
  EXPECT_TRUE(Contains(x.message, "did you mean 'ts'")) << x.message;

  Pipeline t = BasePipeline();
  Spec(t).window->time_column = "amount";
  Spec(t).watermark->event_time_column = "amount";
  Diagnostics d = Validate(t);
  Diagnostic w = One(d, "window-column-type");
  EXPECT_TRUE(Contains(w.message, "type double")) << w.message;
  EXPECT_TRUE(Contains(w.hint, "timestamp"));
  One(d, "watermark-column-type");

  // A date column is temporal.
  Pipeline ok = BasePipeline();
  FindDatasetMut(ok, "events")->schema.arrow =
      arrow::schema({arrow::field("ts", arrow::date32()), arrow::field("amount", arrow::float64()),
                     arrow::field("window_start", arrow::date32())});
  Diagnostics dok = Validate(ok);
  ExpectNo(dok, "window-column-type");
  ExpectNo(dok, "watermark-column-type");
  ExpectNo(dok, "window-column");
}

TEST(ValidateStreaming, WindowSizes) {
  Pipeline p = BasePipeline();
  Spec(p).window = WindowSpec::Tumbling("ts", 0);
  Diagnostic x = One(Validate(p), "window-size");
  EXPECT_TRUE(Contains(x.message, "tumbling window size must be positive")) << x.message;
  EXPECT_EQ(x.field_path, "flows[3].streaming.window.size");

  Spec(p).window = WindowSpec::Hopping("ts", -1000, 500);
  One(Validate(p), "window-size");

  Spec(p).window = WindowSpec::Hopping("ts", 60000, 60000);  // slide == size is fine
  Diagnostics ok = Validate(p);
  ExpectNo(ok, "window-size");
  ExpectNo(ok, "window-slide");
}

TEST(ValidateStreaming, WindowSlides) {
  Pipeline p = BasePipeline();
  Spec(p).window = WindowSpec::Hopping("ts", 60000, 0);
  EXPECT_TRUE(Contains(One(Validate(p), "window-slide").message, "no slide"));
  Spec(p).window = WindowSpec::Hopping("ts", 60000, -5);
  EXPECT_TRUE(Contains(One(Validate(p), "window-slide").message, "positive"));
  Spec(p).window = WindowSpec::Hopping("ts", 60000, 120000);
  Diagnostic x = One(Validate(p), "window-slide");
  EXPECT_TRUE(Contains(x.message, "2m is larger than its size 1m")) << x.message;
  Spec(p).window = WindowSpec::Hopping("ts", 60000, 10000);
  ExpectNo(Validate(p), "window-slide");
}

TEST(ValidateStreaming, SessionGapAndFieldsOfOtherKinds) {
  Pipeline p = BasePipeline();
  Spec(p).window = WindowSpec::Session("ts", 0);
  One(Validate(p), "window-gap");
  Spec(p).window = WindowSpec::Session("ts", 30000);
  Diagnostics ok = Validate(p);
  ExpectNo(ok, "window-gap");
  ExpectNo(ok, "window-field");

  Spec(p).window->size_ms = 1000;  // size on a session window
  Diagnostic x = One(Validate(p), "window-field");
  EXPECT_EQ(x.field_path, "flows[3].streaming.window.size");

  WindowSpec tumbling = WindowSpec::Tumbling("ts", 60000);
  tumbling.slide_ms = 1000;
  tumbling.gap_ms = 5;
  Spec(p).window = tumbling;
  EXPECT_EQ(testing::WithCode(Validate(p), "window-field").size(), 2u);
}

TEST(ValidateStreaming, TriggerInterval) {
  Pipeline p = BasePipeline();
  Spec(p).trigger = Trigger::ProcessingTime(0);
  Diagnostic x = One(Validate(p), "trigger-interval");
  EXPECT_TRUE(Contains(x.message, "must be positive")) << x.message;
  Spec(p).trigger = Trigger{TriggerKind::kOnce, 5000};
  EXPECT_TRUE(Contains(One(Validate(p), "trigger-interval").message, "once trigger"));
  Spec(p).trigger = Trigger::ProcessingTime(10000);
  ExpectNo(Validate(p), "trigger-interval");
}

TEST(ValidateStreaming, WatermarkLatenessAndIdleTimeout) {
  Pipeline p = BasePipeline();
  Spec(p).watermark->allowed_lateness_ms = -1;
  Spec(p).watermark->idle_timeout_ms = 0;
  Diagnostics d = Validate(p);
  EXPECT_TRUE(Contains(One(d, "watermark-lateness").message, "must not be negative"));
  EXPECT_TRUE(Contains(One(d, "watermark-idle-timeout").message, "must be positive"));
  Spec(p).watermark->allowed_lateness_ms = 0;
  Spec(p).watermark->idle_timeout_ms = 60000;
  Diagnostics ok = Validate(p);
  ExpectNo(ok, "watermark-lateness");
  ExpectNo(ok, "watermark-idle-timeout");
}

TEST(ValidateStreaming, AppendAggregationNeedsWindowAndWatermark) {
  Pipeline p = BasePipeline();
  Spec(p).window.reset();
  Diagnostic x = One(Validate(p), "append-aggregation");
  EXPECT_EQ(x.flow, "windowed");
  EXPECT_TRUE(Contains(x.message, "without a window")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "update or complete"));

  Spec(p).watermark.reset();
  EXPECT_TRUE(Contains(One(Validate(p), "append-aggregation").message, "a window and a watermark"));

  // Update / complete output modes may aggregate freely.
  Spec(p).output_mode = OutputMode::kUpdate;
  ExpectNo(Validate(p), "append-aggregation");
  Spec(p).output_mode = OutputMode::kComplete;
  ExpectNo(Validate(p), "append-aggregation");
}

TEST(ValidateStreaming, AppendAggregationDetection) {
  // Queries that aggregate on the row path, and ones that do not.
  const std::vector<std::string> aggregating = {
      "SELECT count(*) AS n FROM STREAM(events)",
      "SELECT customer, max(ts) AS ts FROM events GROUP BY ALL",
      "SELECT * FROM (SELECT customer, sum(amount) AS s FROM events GROUP BY customer) t",
      "WITH g AS (SELECT customer, avg(amount) AS a FROM events GROUP BY 1) SELECT * FROM g",
      "SELECT id FROM events UNION ALL SELECT count(*) FROM events",
      "SELECT customer, ts FROM events GROUP BY GROUPING SETS ((customer), (ts))",
      "SELECT * FROM events PIVOT (sum(amount) FOR customer IN ('a', 'b'))",
      "SELECT * FROM (SELECT * FROM events) e JOIN (SELECT id, min(ts) AS t0 FROM events "
      "GROUP BY id) f USING (id)",
  };
  const std::vector<std::string> plain = {
      "SELECT * FROM events WHERE amount > (SELECT avg(amount) FROM clean)",
      "SELECT id, sum(amount) OVER (PARTITION BY customer ORDER BY ts) AS running FROM events",
      "SELECT id, ts FROM events WHERE id IN (SELECT id FROM clean GROUP BY id)",
      "WITH g AS (SELECT count(*) AS n FROM clean) SELECT id, ts FROM events",
      "SELECT * FROM events UNPIVOT (v FOR k IN (id, amount))",
      "SELECT DISTINCT id, ts FROM events",
  };
  auto check = [](const std::string& sql) {
    Pipeline p = BasePipeline();
    p.Add(Dataset::StreamingTable("agg"));
    p.Add(Flow("agg", "agg", sql));  // streaming (target is a streaming table), append
    Diagnostics d = Validate(p);
    EXPECT_FALSE(HasErrors(d) && testing::WithCode(d, "append-aggregation").empty()) << Dump(d);
    return !testing::WithCode(d, "append-aggregation").empty();
  };
  for (const auto& sql : aggregating) EXPECT_TRUE(check(sql)) << sql;
  for (const auto& sql : plain) EXPECT_FALSE(check(sql)) << sql;
}

}  // namespace
}  // namespace thund
