// RequiredCapabilities(): the documented vocabulary, sorted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/validate_test_util.h"

namespace thund {
namespace {

using testing::BasePipeline;
using ::testing::ElementsAre;

std::vector<std::string> Caps(const Pipeline& p, const std::string& flow) {
  return RequiredCapabilities(p, *p.FindFlow(flow));
}

TEST(RequiredCapabilities, BatchSqlFlow) {
  Pipeline p = BasePipeline();
  EXPECT_THAT(Caps(p, "per_user"), ElementsAre("batch-sql"));
  EXPECT_THAT(Caps(p, "clean"), ElementsAre("batch-sql", "expectations:drop"));
  EXPECT_THAT(Caps(p, "out"), ElementsAre("batch-sql", "sink:csv"));
}

TEST(RequiredCapabilities, SourceAndStreaming) {
  Pipeline p = BasePipeline();
  EXPECT_THAT(Caps(p, "events"), ElementsAre("source:memory", "streaming"));
  EXPECT_THAT(Caps(p, "windowed"),
              ElementsAre("streaming", "streaming-sql", "watermark", "window:tumbling"));
  p.Add(Dataset::Table("dim"));
  p.Add(Flow::FromSource("dim", "dim", FileSource{"d.parquet", FileFormat::kParquet, false, {}})
            .WithOnce());
  EXPECT_THAT(Caps(p, "dim"), ElementsAre("once", "source:files"));
}

TEST(RequiredCapabilities, EveryKnob) {
  Pipeline p = BasePipeline();
  StreamingSpec s;
  s.mode = StreamingMode::kIncremental;
  s.trigger = Trigger::ProcessingTime(1000);
  s.output_mode = OutputMode::kUpdate;
  s.window = WindowSpec::Session("ts", 1000);
  KeyedWrite kw;
  kw.keys = {"id"};
  p.Add(Dataset::Sink("k")
            .WithKeyedWrite(kw)
            .WithExpectation({"a", "id > 0", ExpectationAction::kFail, {}})
            .WithExpectation({"b", "id < 9", ExpectationAction::kWarn, {}}));
  p.Add(Flow("k", "k", "SELECT * FROM STREAM(events)")
            .WithStreaming(s)
            .WithCdc(Cdc{{"id"}, "ts", "", {}, 2, {}, {}, {}}));
  EXPECT_THAT(Caps(p, "k"),
              ElementsAre("cdc:scd2", "expectations:fail", "expectations:warn", "keyed-write",
                          "mode:incremental", "output:update", "sink:parquet", "streaming",
                          "streaming-sql", "trigger:processing_time", "window:session"));
  testing::FindFlowMut(p, "k")->cdc->scd_type = 1;
  testing::FindFlowMut(p, "k")->streaming->output_mode = OutputMode::kComplete;
  auto caps = Caps(p, "k");
  EXPECT_TRUE(std::count(caps.begin(), caps.end(), "cdc:scd1"));
  EXPECT_TRUE(std::count(caps.begin(), caps.end(), "output:complete"));
  EXPECT_TRUE(std::is_sorted(caps.begin(), caps.end()));
}

TEST(RequiredCapabilities, IncrementalModeOnlyWhenTheFlowSetsIt) {
  Pipeline p = BasePipeline();
  auto has = [&](const char* cap) {
    auto caps = Caps(p, "windowed");
    return std::count(caps.begin(), caps.end(), cap) > 0;
  };
  StreamingSpec& s = *testing::FindFlowMut(p, "windowed")->streaming;
  EXPECT_FALSE(s.mode.has_value());
  EXPECT_FALSE(has("mode:incremental"));  // unset: the run's default is not known here
  s.mode = StreamingMode::kRecompute;
  EXPECT_FALSE(has("mode:incremental"));
  s.mode = StreamingMode::kIncremental;
  EXPECT_TRUE(has("mode:incremental"));
}

TEST(RequiredCapabilities, IncrementalMaterializedView) {
  Pipeline p = BasePipeline();
  testing::FindDatasetMut(p, "per_user")->materialization = Materialization::kIncremental;
  EXPECT_THAT(Caps(p, "per_user"), ElementsAre("batch-sql", "materialization:incremental"));
}

}  // namespace
}  // namespace thund
