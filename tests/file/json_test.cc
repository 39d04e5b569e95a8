// JSON input: the same document in JSON gives the same pipeline as in YAML,
// and errors carry JSON line/column positions.
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace thund {
namespace {

using file_test::DiagText;
using file_test::ReadSourceFile;

// tests/file/data/full.yaml, built by hand with the C++ builder.
Pipeline FullFixture() {
  Pipeline p("full");
  p.storage = "s3://lake/full/";
  p.catalog = "main";
  p.database = "analytics";
  p.WithConfiguration("spark.sql.shuffle.partitions", "8").WithConfiguration("owner", "data-team");

  auto schema = arrow::schema({
      arrow::field("order_id", arrow::int64(), false,
                   arrow::key_value_metadata({"comment"}, {"primary key"})),
      arrow::field("amount", arrow::decimal128(12, 2)),
      arrow::field("tags", arrow::list(arrow::utf8())),
      arrow::field("attrs", arrow::map(arrow::utf8(), arrow::int64())),
      arrow::field("address", arrow::struct_({arrow::field("street", arrow::utf8()),
                                              arrow::field("zip", arrow::int32())})),
      arrow::field("ordered_at", arrow::timestamp(arrow::TimeUnit::MILLI, "Europe/Oslo"), true,
                   arrow::key_value_metadata({"source"}, {"erp"})),
  });
  StorageSpec storage{FileFormat::kParquet,
                      "s3://lake/full/raw_orders/",
                      std::nullopt,
                      {"ordered_at"},
                      {{"compression", "zstd"}},
                      {}};
  p.Add(Dataset::Table("raw_orders")
            .WithComment("As exported.")
            .WithMaterialization(Materialization::kIncremental)
            .WithSchema(schema)
            .WithExpectation(file_test::MakeExpectation("positive_amount", "amount > 0",
                                                        ExpectationAction::kDrop))
            .WithExpectation(file_test::MakeExpectation("has_id", "order_id IS NOT NULL",
                                                        ExpectationAction::kWarn))
            .WithStorage(storage)
            .WithKeyedWrite({{"order_id"}, DuplicateKeys::kAll, NullKeys::kError,
                             KeyMatch::kExact, {16, 4, 50'000}})
            .WithProperty("quality", "bronze"));
  p.AddQuery(Dataset::MaterializedView("revenue"),
             "SELECT sum(amount) AS total\nFROM raw_orders\n");
  p.Add(Dataset::Sink("export").WithStorage(
      {FileFormat::kCsv, "out/revenue.csv", WriteMode::kOverwrite, {}, {}, {}}));
  p.Add(Dataset::Sink("totals").WithStorage(
      {FileFormat::kParquet, "out/totals", WriteMode::kMerge, {}, {}, {"region", "total"}}));

  p.Add(Flow::FromSource(
            "raw_orders", "raw_orders",
            FileSource{"landing/orders/",
                       FileFormat::kCsv,
                       true,
                       {{"header", "true"}, {"delimiter", ";"}}})
            .WithStreaming({StreamingMode::kIncremental, Trigger::ProcessingTime(10'000),
                            OutputMode::kUpdate, Watermark{"ordered_at", 60'000, 1'500},
                            WindowSpec::Hopping("ordered_at", 600'000, 60'000),
                            "late_orders", 3'600'000}));
  p.Add(Flow::FromSource("backfill", "raw_orders",
                         FileSource{"archive/*.parquet", FileFormat::kParquet, false, {}})
            .WithOnce());
  p.Add(Flow("cdc_orders", "raw_orders", "SELECT * FROM STREAM(erp_changes)")
            .WithComment("changes from the ERP")
            .WithCdc({{"order_id"}, "seq", "op = 'D'", {"op", "seq"}, 2}));
  GeneratorSource gen;
  gen.kind = GeneratorKind::kNexmarkBid;
  gen.seed = 18446744073709551615ULL;
  gen.rows_per_batch = 10;
  gen.total_rows = 100;
  gen.events_per_second = 1000;
  gen.out_of_orderness_ms = 5000;
  gen.options = {{"skew", "0.5"}};
  StreamingSpec once;
  once.trigger = Trigger::Once();
  once.window = WindowSpec::Session("ordered_at", 1'800'000);
  p.Add(Flow::FromSource("generated", "raw_orders", gen).WithStreaming(once));
  p.Add(Flow::FromSource("api", "raw_orders", MemorySource{"feed"}).WithStreaming({}));
  StreamingSpec hourly;
  hourly.mode = StreamingMode::kRecompute;  // written explicitly: kept, not dropped as a default
  hourly.window = WindowSpec::Tumbling("ordered_at", 3'600'000);
  p.Add(Flow::FromSource(
            "kafka", "raw_orders",
            KafkaSource{
                "broker:9092", "orders", "avro", StartingOffsets::kLatest, {{"group.id", "thund"}}})
            .WithStreaming(hourly));
  p.Add(Flow("export", "export", "SELECT * FROM revenue"));
  p.Add(Flow("totals", "totals", "SELECT 'north' AS region, total FROM revenue"));
  return p;
}

TEST(PipelineFileJson, YamlFixtureMatchesTheHandBuiltPipeline) {
  ParseResult r = ParsePipelineFile(ReadSourceFile("tests/file/data/full.yaml"), "full.yaml");
  ASSERT_TRUE(r.ok()) << DiagText(r.diagnostics);
  const Pipeline want = FullFixture();
  EXPECT_TRUE(r.pipeline == want) << "got:\n"
                                  << r.pipeline.ToString() << "want:\n"
                                  << want.ToString();
}

TEST(PipelineFileJson, JsonVersionGivesTheSamePipeline) {
  ParseResult yaml = ParsePipelineFile(ReadSourceFile("tests/file/data/full.yaml"), "full.yaml");
  ParseResult json = ParsePipelineFile(ReadSourceFile("tests/file/data/full.json"), "full.json");
  ASSERT_TRUE(yaml.ok()) << DiagText(yaml.diagnostics);
  ASSERT_TRUE(json.ok()) << DiagText(json.diagnostics);
  EXPECT_TRUE(json.pipeline == yaml.pipeline) << json.pipeline.ToString();
  EXPECT_EQ(FormatPipelineFile(json.pipeline), FormatPipelineFile(yaml.pipeline));
  EXPECT_EQ(json.pipeline.datasets[0].location.file, "full.json");
  EXPECT_EQ(json.pipeline.datasets[0].location.line, 11);  // the '{' opening the first dataset
  EXPECT_EQ(json.pipeline.datasets[0].location.column, 5);
}

TEST(PipelineFileJson, CompactJsonOnOneLine) {
  ParseResult r = ParsePipelineFile(
      R"({"name":"p","datasets":[{"name":"a","kind":"table","schema":[{"name":"id","type":"bigint","nullable":false}]}],)"
      R"("flows":[{"target":"a","sql":"SELECT 1 AS id","streaming":{"trigger":{"processing_time":"10s"}}}]})",
      "p.json");
  ASSERT_TRUE(r.ok()) << DiagText(r.diagnostics);
  EXPECT_EQ(r.pipeline.datasets[0].schema.arrow->field(0)->nullable(), false);
  EXPECT_EQ(r.pipeline.flows[0].streaming->trigger, Trigger::ProcessingTime(10'000));
}

TEST(PipelineFileJson, JsonEscapesAndNumbers) {
  ParseResult r = ParsePipelineFile(
      "{\"name\": \"caf\\u00e9 \\\"q\\\" a\\/b\\n\", \"datasets\": [{\"name\": \"t\", "
      "\"keyed_write\": {\"keys\": [\"id\"], \"buckets\": 8}}]}",
      "p.json");
  ASSERT_TRUE(r.ok()) << DiagText(r.diagnostics);
  EXPECT_EQ(r.pipeline.name, "caf\xC3\xA9 \"q\" a/b\n");
  EXPECT_EQ(r.pipeline.datasets[0].keyed_write.tuning.buckets, 8);
}

TEST(PipelineFileJson, ErrorsHaveJsonPositions) {
  const std::string text =
      "{\n"
      "  \"name\": \"p\",\n"
      "  \"flows\": [\n"
      "    {\"target\": \"a\",\n"
      "     \"streaming\": {\"window\": {\"kind\": \"tumbling\", \"column\": \"ts\", \"size\": "
      "\"ten\"}}},\n"
      "    {\"target\": \"b\", \"sqll\": \"SELECT 1\"}\n"
      "  ]\n"
      "}\n";
  ParseResult r = ParsePipelineFile(text, "p.json");
  ASSERT_EQ(r.diagnostics.size(), 2u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].field_path, "flows[0].streaming.window.size");
  EXPECT_EQ(r.diagnostics[0].location.line, 5);
  EXPECT_EQ(r.diagnostics[0].location.column, 75);
  EXPECT_EQ(r.diagnostics[1].field_path, "flows[1].sqll");
  EXPECT_EQ(r.diagnostics[1].hint, "did you mean 'sql'?");
  EXPECT_EQ(r.diagnostics[1].location.line, 6);
  EXPECT_EQ(r.diagnostics[1].location.column, 21);
}

TEST(PipelineFileJson, JsonSyntaxError) {
  ParseResult r = ParsePipelineFile("{\n  \"name\": \"p\",\n  \"flows\": [\n}\n", "p.json");
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].code, "yaml-syntax");
  EXPECT_EQ(r.diagnostics[0].location.line, 4);
}

}  // namespace
}  // namespace thund
