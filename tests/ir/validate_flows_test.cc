// Validate(): a flow's body (sql xor source), source settings, source targets.
#include <gtest/gtest.h>

#include "ir/validate_test_util.h"

namespace thund {
namespace {

using testing::BasePipeline;
using testing::Contains;
using testing::Dump;
using testing::ExpectNo;
using testing::FindFlowMut;
using testing::One;
using testing::WithCode;

TEST(ValidateFlows, NeitherSqlNorSource) {
  Pipeline p = BasePipeline();
  FindFlowMut(p, "clean")->sql.clear();
  Diagnostic x = One(Validate(p), "flow-body");
  EXPECT_EQ(x.flow, "clean");
  EXPECT_TRUE(Contains(x.message, "neither")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "SELECT"));
  ExpectNo(Validate(BasePipeline()), "flow-body");
}

TEST(ValidateFlows, BothSqlAndSource) {
  Pipeline p = BasePipeline();
  FindFlowMut(p, "events")->sql = "SELECT 1";
  Diagnostics d = Validate(p);
  Diagnostic x = One(d, "flow-body");
  EXPECT_EQ(x.flow, "events");
  EXPECT_TRUE(Contains(x.message, "both")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "read_parquet"));
}

TEST(ValidateFlows, SourceIntoQueryDefinedTarget) {
  Pipeline p = BasePipeline();
  FileSource files{"data/*.parquet", FileFormat::kParquet, false, {}};
  p.Add(Flow::FromSource("load", "per_user", files));
  Diagnostics d = Validate(p);
  Diagnostic x = One(d, "source-target-kind");
  EXPECT_EQ(x.flow, "load");
  EXPECT_TRUE(Contains(x.message, "materialized_view 'per_user'")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "streaming_table"));
  EXPECT_TRUE(Contains(x.hint, "read_parquet"));

  // A plain file load into a table is fine (batch source into batch table).
  Pipeline ok = BasePipeline();
  ok.Add(Dataset::Table("dim"));
  ok.Add(Flow::FromSource("dim", "dim", files));
  Diagnostics dok = Validate(ok);
  ExpectNo(dok, "source-target-kind");
  EXPECT_FALSE(HasErrors(dok)) << Dump(dok);
}

TEST(ValidateFlows, SourceSettings) {
  Pipeline p = BasePipeline();
  p.Add(Dataset::StreamingTable("s1"));
  p.Add(Flow::FromSource("bad_file", "s1", FileSource{"", std::nullopt, true, {}}));
  GeneratorSource gen;
  gen.rows_per_batch = 0;
  p.Add(Flow::FromSource("bad_gen", "s1", gen));
  KafkaSource kafka;
  kafka.bootstrap_servers = "localhost:9092";
  p.Add(Flow::FromSource("bad_kafka", "s1", kafka));
  p.Add(Flow::FromSource("bad_mem", "s1", MemorySource{""}));
  Diagnostics d = Validate(p);
  auto found = WithCode(d, "source-spec");
  std::map<std::string, std::vector<std::string>> by_flow;
  for (const auto& x : found) by_flow[x.flow].push_back(x.field_path);
  EXPECT_EQ(by_flow["bad_file"].size(), 2u) << Dump(d);   // path, format
  // A bad generator kind or Kafka starting_offsets cannot reach Validate (enums):
  // the decoders report them (tests/file/enum_values_test.cc).
  EXPECT_EQ(by_flow["bad_gen"].size(), 1u) << Dump(d);    // rows_per_batch
  EXPECT_EQ(by_flow["bad_kafka"].size(), 1u) << Dump(d);  // topic
  EXPECT_EQ(by_flow["bad_mem"].size(), 1u) << Dump(d);
  EXPECT_EQ(by_flow["bad_file"][1], "flows[5].source.format");
  ExpectNo(Validate(BasePipeline()), "source-spec");
}

}  // namespace
}  // namespace thund
