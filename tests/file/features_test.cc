// Input conveniences, defaults, source locations and the canonical form.
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>

#include "test_util.h"
#include "thund/validate.h"

namespace thund {
namespace {

using file_test::DiagText;

Pipeline ParseOk(const std::string& text) {
  ParseResult r = ParsePipelineFile(text, "f.yaml");
  EXPECT_TRUE(r.ok()) << DiagText(r.diagnostics) << text;
  return r.pipeline;
}

TEST(PipelineFile, QueryShorthandBecomesAFlow) {
  Pipeline p = ParseOk(
      "name: p\n"
      "datasets:\n"
      "  - name: a\n"
      "    kind: table\n"
      "  - name: b\n"
      "    query: SELECT * FROM a\n"
      "flows:\n"
      "  - target: a\n"
      "    sql: SELECT 1 AS x\n");
  Pipeline want("p");
  want.Add(Dataset::Table("a"));
  want.AddQuery(Dataset::MaterializedView("b"), "SELECT * FROM a");
  want.Add(Flow("a", "a", "SELECT 1 AS x"));
  EXPECT_TRUE(p == want) << p.ToString();
  // The shorthand flow is located at its query.
  EXPECT_EQ(p.flows[0].location.line, 6);
  EXPECT_EQ(p.flows[0].location.column, 12);

  // fmt writes the explicit form, which reads back to the same pipeline.
  const std::string canonical = FormatPipelineFile(p);
  EXPECT_EQ(canonical.find("query:"), std::string::npos) << canonical;
  EXPECT_TRUE(ParseOk(canonical) == p);
}

TEST(PipelineFile, FlowNameDefaultsToTarget) {
  Pipeline p = ParseOk(
      "name: p\nflows:\n  - target: t\n  - target: t\n    name: second\n  - target: t\n    name: "
      "\"\"\n");
  ASSERT_EQ(p.flows.size(), 3u);
  EXPECT_EQ(p.flows[0].name, "t");
  EXPECT_EQ(p.flows[1].name, "second");
  EXPECT_EQ(p.flows[2].name, "");  // explicitly empty stays empty (Validate reports it)
}

TEST(PipelineFile, SourceLocationsPointAtEachRecord) {
  Pipeline p = ParseOk(
      "# header comment\n"
      "name: p\n"
      "datasets:\n"
      "  - name: a\n"
      "    expectations:\n"
      "      - name: e1\n"
      "        expect: x > 0\n"
      "      - {name: e2, expect: y > 0}\n"
      "flows:\n"
      "  -   target: a\n"
      "      sql: SELECT 1\n");
  EXPECT_EQ(p.location, (SourceLocation{"f.yaml", 2, 1}));
  EXPECT_EQ(p.datasets[0].location, (SourceLocation{"f.yaml", 4, 5}));
  EXPECT_EQ(p.datasets[0].expectations[0].location, (SourceLocation{"f.yaml", 6, 9}));
  EXPECT_EQ(p.datasets[0].expectations[1].location, (SourceLocation{"f.yaml", 8, 9}));
  EXPECT_EQ(p.flows[0].location, (SourceLocation{"f.yaml", 10, 7}));
}

TEST(PipelineFile, TriggerAndDurationForms) {
  Pipeline p = ParseOk(
      "name: p\n"
      "flows:\n"
      "  - {target: a, streaming: {trigger: once}}\n"
      "  - {target: b, streaming: {trigger: available_now}}\n"
      "  - {target: c, streaming: {trigger: {processing_time: 10s}}}\n"
      "  - {target: d, streaming: {trigger: 5 minutes}}\n"
      "  - {target: e, streaming: {trigger: {processing_time: 1500}}}\n"
      "  - target: f\n"
      "    streaming:\n"
      "      watermark: {column: ts, allowed_lateness: 2h, idle_timeout: 0s}\n"
      "      window: {kind: hopping, column: ts, size: 1d, slide: 250ms}\n");
  ASSERT_EQ(p.flows.size(), 6u);
  EXPECT_EQ(p.flows[0].streaming->trigger, Trigger::Once());
  EXPECT_EQ(p.flows[1].streaming->trigger, Trigger::AvailableNow());
  EXPECT_EQ(p.flows[2].streaming->trigger, Trigger::ProcessingTime(10'000));
  EXPECT_EQ(p.flows[3].streaming->trigger, Trigger::ProcessingTime(300'000));
  EXPECT_EQ(p.flows[4].streaming->trigger, Trigger::ProcessingTime(1'500));
  const StreamingSpec& s = *p.flows[5].streaming;
  EXPECT_EQ(s.watermark->allowed_lateness_ms, 7'200'000);
  EXPECT_EQ(s.watermark->idle_timeout_ms, std::optional<int64_t>(0));  // set, even though zero
  EXPECT_EQ(*s.window, WindowSpec::Hopping("ts", 86'400'000, 250));
}

TEST(PipelineFile, NullMeansNotSetAndEmptyMappingMeansDefaults) {
  Pipeline p = ParseOk(
      "name: p\n"
      "storage: ~\n"
      "datasets:\n"
      "  - name: a\n"
      "    comment:\n"
      "    schema: null\n"
      "  - name: b\n"
      "    schema: []\n"
      "flows:\n"
      "  - target: a\n"
      "    streaming:\n"
      "    cdc: ~\n"
      "  - target: b\n"
      "    streaming: {}\n"
      "    cdc: {}\n");
  EXPECT_EQ(p.storage, "");
  EXPECT_FALSE(p.datasets[0].schema.declared());
  ASSERT_TRUE(p.datasets[1].schema.declared());
  EXPECT_EQ(p.datasets[1].schema.arrow->num_fields(), 0);
  EXPECT_FALSE(p.flows[0].streaming.has_value());
  EXPECT_FALSE(p.flows[0].cdc.has_value());
  EXPECT_EQ(p.flows[1].streaming, StreamingSpec{});
  EXPECT_EQ(p.flows[1].cdc, Cdc{});
}

TEST(PipelineFile, ColumnsTypesAndComments) {
  Pipeline p = ParseOk(
      "name: p\n"
      "datasets:\n"
      "  - name: t\n"
      "    schema:\n"
      "      - {name: id, type: int64, nullable: false, comment: the key}\n"
      "      - {name: price, type: \"decimal(10,2)\"}\n"
      "      - name: at\n"
      "        type: timestamp(ns, tz=UTC)\n"
      "        metadata: {unit: ns}\n");
  auto id = arrow::field("id", arrow::int64(), false,
                         arrow::key_value_metadata({"comment"}, {"the key"}));
  auto price = arrow::field("price", arrow::decimal128(10, 2));
  auto at = arrow::field("at", arrow::timestamp(arrow::TimeUnit::NANO, "UTC"), true,
                         arrow::key_value_metadata({"unit"}, {"ns"}));
  const auto want = arrow::schema({id, price, at});
  ASSERT_TRUE(p.datasets[0].schema.declared());
  EXPECT_TRUE(p.datasets[0].schema.arrow->Equals(*want, /*check_metadata=*/true))
      << p.datasets[0].schema.arrow->ToString(true);
  // The alias is written back under its canonical name.
  EXPECT_NE(
      FormatPipelineFile(p).find("{name: id, type: bigint, nullable: false, comment: the key}"),
      std::string::npos)
      << FormatPipelineFile(p);
}

TEST(PipelineFile, KeyOrderAndCommentsDoNotMatter) {
  Pipeline a = ParseOk(
      "name: p\n"
      "datasets:\n"
      "  - {name: t, kind: table, comment: c}\n"
      "flows:\n"
      "  - {target: t, sql: SELECT 1, once: true}\n");
  Pipeline b = ParseOk(
      "# a comment\n"
      "flows:\n"
      "  - sql: SELECT 1   # trailing comment\n"
      "    once: yes\n"
      "    target: t\n"
      "datasets:\n"
      "  - comment: c\n"
      "    kind: table\n"
      "    name: t\n"
      "name: p\n");
  EXPECT_TRUE(a == b) << a.ToString() << b.ToString();
}

TEST(PipelineFile, ScalarsOfAnyYamlTypeReadAsStrings) {
  Pipeline p =
      ParseOk("name: 2024\ncatalog: true\ndatabase: 1.50\nconfiguration: {x: null_not, y: 007}\n");
  EXPECT_EQ(p.name, "2024");
  EXPECT_EQ(p.catalog, "true");
  EXPECT_EQ(p.database, "1.50");  // the text, not a re-printed number
  EXPECT_EQ(p.configuration.at("y"), "007");
}

TEST(PipelineFile, WindowsLineEndingsAndByteOrderMark) {
  Pipeline p = ParseOk(
      "\xEF\xBB\xBFname: p\r\ndatasets:\r\n  - name: a\r\n    query: |\r\n      SELECT 1\r\n      "
      "FROM t\r\n");
  EXPECT_EQ(p.name, "p");
  ASSERT_EQ(p.flows.size(), 1u);
  EXPECT_EQ(p.flows[0].sql, "SELECT 1\nFROM t\n");
}

// The canonical form is part of the format: this is what `thund fmt` prints.
TEST(PipelineFile, CanonicalForm) {
  Pipeline p("shop");
  p.WithStorage("s3://lake/shop/").WithConfiguration("owner", "data team");
  p.Add(
      Dataset::StreamingTable("clicks")
          .WithSchema(arrow::schema({arrow::field("user_id", arrow::int64(), false),
                                     arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MILLI))}))
          .WithExpectation(file_test::MakeExpectation("has_user", "user_id IS NOT NULL",
                                                      ExpectationAction::kDrop)));
  p.Add(Dataset::MaterializedView("per_minute").WithComment("yes"));
  p.Add(Flow::FromSource("clicks", "clicks", FileSource{"landing/", FileFormat::kJson, true, {}})
            .WithStreaming({StreamingMode::kIncremental, Trigger::ProcessingTime(10'000),
                            OutputMode::kAppend, Watermark{"ts", 30'000, std::nullopt},
                            WindowSpec::Tumbling("ts", 60'000), "", std::nullopt}));
  p.Add(Flow("per_minute", "per_minute", "SELECT count(*) AS n\nFROM clicks\n"));
  const std::string want =
      "name: shop\n"
      "storage: s3://lake/shop/\n"
      "configuration:\n"
      "  owner: data team\n"
      "datasets:\n"
      "  - name: clicks\n"
      "    kind: streaming_table\n"
      "    schema:\n"
      "      - {name: user_id, type: bigint, nullable: false}\n"
      "      - {name: ts, type: timestamp(ms)}\n"
      "    expectations:\n"
      "      - name: has_user\n"
      "        expect: user_id IS NOT NULL\n"
      "        on_violation: drop\n"
      "  - name: per_minute\n"
      "    comment: \"yes\"\n"
      "flows:\n"
      "  - target: clicks\n"
      "    source:\n"
      "      kind: file_drop\n"
      "      path: landing/\n"
      "      format: json\n"
      "    streaming:\n"
      "      mode: incremental\n"
      "      trigger: {processing_time: 10s}\n"
      "      watermark: {column: ts, allowed_lateness: 30s}\n"
      "      window: {kind: tumbling, column: ts, size: 1m}\n"
      "  - target: per_minute\n"
      "    sql: |\n"
      "      SELECT count(*) AS n\n"
      "      FROM clicks\n";
  EXPECT_EQ(FormatPipelineFile(p), want);
  EXPECT_TRUE(ParseOk(want) == p);
}

TEST(PipelineFile, MergeSinkStorageAndItsChecks) {
  const std::string text =
      "name: p\n"
      "datasets:\n"
      "  - name: totals\n"
      "    kind: sink\n"
      "    storage: {location: out/totals, mode: merge, merge_keys: [region, id]}\n"
      "flows:\n"
      "  - target: totals\n"
      "    sql: SELECT 'n' AS region, 1 AS id\n";
  Pipeline p = ParseOk(text);
  const StorageSpec& s = p.datasets[0].storage;
  EXPECT_EQ(s.mode, WriteMode::kMerge);
  EXPECT_EQ(s.merge_keys, (std::vector<std::string>{"region", "id"}));
  EXPECT_FALSE(HasErrors(Validate(p)));
  const std::string canonical = FormatPipelineFile(p);
  EXPECT_NE(canonical.find("merge_keys: [region, id]"), std::string::npos) << canonical;
  EXPECT_TRUE(ParseOk(canonical) == p);
  // Without keys: an error at the dataset, naming the field.
  Pipeline no_keys = ParseOk(
      "name: p\n"
      "datasets:\n"
      "  - name: totals\n"
      "    kind: sink\n"
      "    storage: {mode: merge}\n");
  Diagnostics d = Validate(no_keys);
  ASSERT_TRUE(HasErrors(d));
  EXPECT_EQ(d[0].code, "merge-keys");
  EXPECT_EQ(d[0].field_path, "datasets[0].storage.merge_keys");
  EXPECT_EQ(d[0].location.line, 3);
  // A misspelt key is caught by the reader.
  ParseResult typo = ParsePipelineFile(
      "name: p\ndatasets:\n  - {name: t, kind: sink, storage: {mode: merge, merge_key: [id]}}\n",
      "f.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(DiagText(typo.diagnostics).find("did you mean 'merge_keys'"), std::string::npos)
      << DiagText(typo.diagnostics);
}

TEST(PipelineFile, FormatIsIdempotentOnHandWrittenInput) {
  const std::string text = file_test::ReadSourceFile("tests/file/data/full.yaml");
  const std::string once = FormatPipelineFile(ParseOk(text));
  EXPECT_EQ(FormatPipelineFile(ParseOk(once)), once);
}

}  // namespace
}  // namespace thund
