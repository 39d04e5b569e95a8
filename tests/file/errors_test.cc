// Every class of file error: message, hint, line, column, field path, and the
// dataset/flow it belongs to.
#include <gtest/gtest.h>

#include "test_util.h"
#include "thund/duration.h"
#include "thund/type_names.h"
#include "thund/validate.h"

namespace thund {
namespace {

using file_test::DiagText;
using file_test::OnlyWithCode;

Diagnostics Errors(const std::string& text) {
  ParseResult r = ParsePipelineFile(text, "p.yaml");
  EXPECT_FALSE(r.ok()) << text;
  return r.diagnostics;
}

// Checks the one diagnostic with `code`, then returns it for further checks.
Diagnostic Expect(const Diagnostics& diags, const std::string& code, int line, int column,
                  const std::string& path) {
  const Diagnostic* d = OnlyWithCode(diags, code);
  EXPECT_NE(d, nullptr) << "want exactly one '" << code << "' in:\n" << DiagText(diags);
  if (d == nullptr) return {};
  EXPECT_EQ(d->severity, Severity::kError);
  EXPECT_EQ(d->location.file, "p.yaml");
  EXPECT_EQ(d->location.line, line) << d->ToString();
  EXPECT_EQ(d->location.column, column) << d->ToString();
  EXPECT_EQ(d->field_path, path) << d->ToString();
  return *d;
}

TEST(PipelineFileErrors, YamlSyntaxErrorHasTheParsersPosition) {
  auto diags = Errors("name: p\nflows:\n  - target: x\n    sql: a: b\n");
  ASSERT_EQ(diags.size(), 1u) << DiagText(diags);
  // "    sql: a: b": the second ': ' (column 11) is illegal in a plain scalar.
  auto d = Expect(diags, "yaml-syntax", 4, 11, "");
  EXPECT_NE(d.message.find("YAML syntax error"), std::string::npos) << d.message;
}

TEST(PipelineFileErrors, UnclosedFlowSequence) {
  auto diags = Errors("name: p\ndatasets: [a, b\n");
  ASSERT_EQ(diags.size(), 1u) << DiagText(diags);
  EXPECT_EQ(diags[0].code, "yaml-syntax");
  EXPECT_GE(diags[0].location.line, 2) << diags[0].ToString();
}

TEST(PipelineFileErrors, UnknownKeySuggestsTheClosestKey) {
  auto diags = Errors(
      "name: p\n"
      "datasets:\n"
      "  - name: orders\n"
      "    schemaa: []\n");
  auto d = Expect(diags, "unknown-key", 4, 5, "datasets[0].schemaa");
  EXPECT_EQ(d.message, "unknown key 'schemaa' in dataset");
  EXPECT_EQ(d.hint, "did you mean 'schema'?");
  EXPECT_EQ(d.dataset, "orders");
  EXPECT_EQ(d.ToString(),
            "p.yaml:4:5: error: dataset 'orders': unknown key 'schemaa' in dataset "
            "(at datasets[0].schemaa); did you mean 'schema'?");
}

TEST(PipelineFileErrors, UnknownKeyWithoutCloseMatchListsValidKeys) {
  auto diags = Errors(
      "name: p\n"
      "flows:\n"
      "  - target: t\n"
      "    streaming:\n"
      "      window: {kind: tumbling, column: ts, length: 10s}\n");
  auto d = Expect(diags, "unknown-key", 5, 44, "flows[0].streaming.window.length");
  EXPECT_EQ(d.hint, "valid keys: kind, column, size, slide, gap");
  EXPECT_EQ(d.flow, "t");
}

TEST(PipelineFileErrors, TransposedLettersAreSuggested) {
  auto diags = Errors("name: p\nflows:\n  - taregt: t\n");
  auto d = Expect(diags, "unknown-key", 3, 5, "flows[0].taregt");
  EXPECT_EQ(d.hint, "did you mean 'target'?");
}

TEST(PipelineFileErrors, DuplicateKeyPointsAtTheSecond) {
  auto diags = Errors("name: p\ndatasets:\n  - name: a\n    kind: table\n    kind: view\n");
  auto d = Expect(diags, "duplicate-key", 5, 5, "datasets[0].kind");
  EXPECT_NE(d.hint.find("line 4"), std::string::npos) << d.hint;
}

TEST(PipelineFileErrors, WrongNodeTypeSaysWhatWasExpected) {
  auto diags = Errors(
      "name: p\n"
      "datasets:\n"
      "  - name: orders\n"
      "    schema: id bigint\n");
  auto d = Expect(diags, "wrong-type", 4, 13, "datasets[0].schema");
  EXPECT_EQ(d.message, "expected a list of column definitions, got a scalar ('id bigint')");
}

TEST(PipelineFileErrors, ScalarWhereAMappingBelongs) {
  auto diags = Errors("name: p\nflows:\n  - target: t\n    streaming: fast\n");
  auto d = Expect(diags, "wrong-type", 4, 16, "flows[0].streaming");
  EXPECT_EQ(d.message, "expected a streaming mapping, got a scalar ('fast')");
  EXPECT_EQ(d.hint, "valid keys: mode, trigger, output_mode, watermark, window, late_rows, state_ttl");
}

TEST(PipelineFileErrors, ListWhereAStringBelongs) {
  auto diags = Errors("name: p\ndatasets:\n  - name: a\n    comment: [x, y]\n");
  auto d = Expect(diags, "wrong-type", 4, 14, "datasets[0].comment");
  EXPECT_EQ(d.message, "expected a string, got a list");
}

TEST(PipelineFileErrors, BadEnumListsAllowedValues) {
  auto diags = Errors("name: p\ndatasets:\n  - name: a\n    kind: materialised_view\n");
  auto d = Expect(diags, "bad-enum", 4, 11, "datasets[0].kind");
  EXPECT_EQ(d.message, "unknown dataset kind 'materialised_view'");
  EXPECT_EQ(d.hint,
            "did you mean 'materialized_view'? allowed: table, streaming_table, materialized_view, "
            "view, temporary_view, sink");
}

TEST(PipelineFileErrors, BadEnumFarFromEverything) {
  auto diags = Errors("name: p\nflows:\n  - target: t\n    streaming: {output_mode: sometimes}\n");
  auto d = Expect(diags, "bad-enum", 4, 30, "flows[0].streaming.output_mode");
  EXPECT_EQ(d.hint, "allowed: append, update, complete");
}

TEST(PipelineFileErrors, BadDurationForwardsTheDurationParser) {
  const std::string text =
      "name: p\n"
      "flows:\n"
      "  - target: a\n"
      "    sql: SELECT 1\n"
      "  - target: b\n"
      "    sql: SELECT 2\n"
      "  - target: c\n"
      "    streaming:\n"
      "      window:\n"
      "        kind: tumbling\n"
      "        column: ts\n"
      "        size: ten minutes\n";
  auto diags = Errors(text);
  auto d = Expect(diags, "bad-duration", 12, 15, "flows[2].streaming.window.size");
  const std::string oracle = ParseDuration("ten minutes").status().message();
  EXPECT_EQ(d.message, "bad duration: " + oracle);
  EXPECT_EQ(d.flow, "c");
}

TEST(PipelineFileErrors, BadTypeForwardsTheTypeParser) {
  auto diags = Errors(
      "name: p\n"
      "datasets:\n"
      "  - name: t\n"
      "    schema:\n"
      "      - {name: id, type: bigint}\n"
      "      - {name: tags, type: array<strnig>}\n");
  auto d = Expect(diags, "bad-type", 6, 28, "datasets[0].schema[1].type");
  EXPECT_EQ(d.message, "bad column type: " + ParseTypeName("array<strnig>").status().message());
  EXPECT_EQ(d.dataset, "t");
}

TEST(PipelineFileErrors, BadIntegerAndBoolean) {
  auto diags = Errors(
      "name: p\n"
      "datasets:\n"
      "  - name: t\n"
      "    keyed_write: {keys: [id], buckets: many}\n"
      "flows:\n"
      "  - target: t\n"
      "    once: maybe\n");
  ASSERT_EQ(diags.size(), 2u) << DiagText(diags);
  EXPECT_EQ(diags[0].message, "expected an integer, got 'many'");
  EXPECT_EQ(diags[0].field_path, "datasets[0].keyed_write.buckets");
  EXPECT_EQ(diags[0].location.line, 4);
  EXPECT_EQ(diags[0].location.column, 40);
  EXPECT_EQ(diags[1].message, "expected true or false, got 'maybe'");
  EXPECT_EQ(diags[1].field_path, "flows[0].once");
  EXPECT_EQ(diags[1].location.line, 7);
  EXPECT_EQ(diags[1].location.column, 11);
}

TEST(PipelineFileErrors, NegativeSeed) {
  auto diags = Errors("name: p\nflows:\n  - target: t\n    source: {kind: generator, seed: -1}\n");
  auto d = Expect(diags, "bad-value", 4, 37, "flows[0].source.seed");
  EXPECT_EQ(d.message, "expected a non-negative integer, got '-1'");
}

TEST(PipelineFileErrors, MissingRequiredKeys) {
  auto diags = Errors(
      "name: p\n"
      "datasets:\n"
      "  - kind: table\n"
      "flows:\n"
      "  - sql: SELECT 1\n"
      "  - target: t\n"
      "    streaming:\n"
      "      watermark: {allowed_lateness: 5s}\n");
  ASSERT_EQ(diags.size(), 3u) << DiagText(diags);
  EXPECT_EQ(diags[0].message, "missing required key 'name' in dataset");
  EXPECT_EQ(diags[0].field_path, "datasets[0].name");
  EXPECT_EQ(diags[0].location.line, 3);
  EXPECT_EQ(diags[0].location.column, 5);
  EXPECT_EQ(diags[1].message, "missing required key 'target' in flow");
  EXPECT_EQ(diags[1].field_path, "flows[0].target");
  EXPECT_EQ(diags[1].location.line, 5);
  EXPECT_EQ(diags[2].message, "missing required key 'column' in watermark");
  EXPECT_EQ(diags[2].field_path, "flows[1].streaming.watermark.column");
  EXPECT_EQ(diags[2].location.line, 8);
  EXPECT_EQ(diags[2].location.column, 18);
  EXPECT_EQ(diags[2].flow, "t");
}

TEST(PipelineFileErrors, RequiredKeyWithoutValue) {
  auto diags = Errors("name:\n");
  auto d = Expect(diags, "missing-key", 1, 1, "name");
  EXPECT_EQ(d.message, "required key 'name' has no value in pipeline");
}

TEST(PipelineFileErrors, MissingPipelineName) {
  auto diags = Errors("datasets: []\n");
  auto d = Expect(diags, "missing-key", 1, 1, "name");
  EXPECT_EQ(d.message, "missing required key 'name' in pipeline");
}

TEST(PipelineFileErrors, SourceKindMissingOrUnknown) {
  auto diags = Errors(
      "name: p\n"
      "flows:\n"
      "  - target: a\n"
      "    source: {path: x/}\n"
      "  - target: b\n"
      "    source: {kind: filedrop, path: x/, fromat: csv}\n"
      "  - target: c\n"
      "    source: {kind: kafka, topic: t}\n");
  ASSERT_EQ(diags.size(), 4u) << DiagText(diags);
  EXPECT_EQ(diags[0].message, "missing required key 'kind' in source");
  EXPECT_EQ(diags[0].field_path, "flows[0].source.kind");
  EXPECT_EQ(diags[0].hint, "allowed kinds: files, file_drop, generator, memory, kafka");
  EXPECT_EQ(diags[1].message, "unknown source kind 'filedrop'");
  EXPECT_EQ(diags[1].hint,
            "did you mean 'file_drop'? allowed: files, file_drop, generator, memory, kafka");
  EXPECT_EQ(diags[1].location.line, 6);
  EXPECT_EQ(diags[1].location.column, 20);
  // Other keys are still checked when the kind is unknown.
  EXPECT_EQ(diags[2].message, "unknown key 'fromat' in source");
  EXPECT_EQ(diags[2].hint, "did you mean 'format'?");
  EXPECT_EQ(diags[3].message, "missing required key 'bootstrap_servers' in kafka source");
  EXPECT_EQ(diags[3].field_path, "flows[2].source.bootstrap_servers");
}

TEST(PipelineFileErrors, KeyOfAnotherSourceKind) {
  auto diags =
      Errors("name: p\nflows:\n  - target: a\n    source: {kind: memory, name: m, topic: t}\n");
  auto d = Expect(diags, "unknown-key", 4, 37, "flows[0].source.topic");
  EXPECT_EQ(d.message, "unknown key 'topic' in memory source");
  EXPECT_EQ(d.hint, "valid keys: kind, name");
}

TEST(PipelineFileErrors, TriggerForms) {
  auto diags = Errors(
      "name: p\n"
      "flows:\n"
      "  - target: a\n"
      "    streaming: {trigger: availablenow}\n"
      "  - target: b\n"
      "    streaming: {trigger: processing_time}\n"
      "  - target: c\n"
      "    streaming: {trigger: {every: 10s}}\n");
  ASSERT_EQ(diags.size(), 4u) << DiagText(diags);
  EXPECT_EQ(diags[0].message, "unknown trigger 'availablenow'");
  EXPECT_EQ(
      diags[0].hint,
      "did you mean 'available_now'? allowed: once, available_now, {processing_time: <duration>}");
  EXPECT_EQ(diags[0].field_path, "flows[0].streaming.trigger");
  EXPECT_EQ(diags[1].message, "a processing_time trigger needs an interval");
  EXPECT_EQ(diags[2].message, "unknown key 'every' in trigger");
  EXPECT_EQ(diags[3].message, "missing required key 'processing_time' in trigger");
}

TEST(PipelineFileErrors, MapValuesMustBeStrings) {
  auto diags = Errors("name: p\nconfiguration:\n  a: [1]\n  b:\n  c: ok\n");
  ASSERT_EQ(diags.size(), 2u) << DiagText(diags);
  EXPECT_EQ(diags[0].message, "expected a string value, got a list");
  EXPECT_EQ(diags[0].field_path, "configuration.a");
  EXPECT_EQ(diags[1].message, "expected a string value, got null");
  EXPECT_EQ(diags[1].field_path, "configuration.b");
  EXPECT_EQ(diags[1].location.line, 4);
}

TEST(PipelineFileErrors, CommentIsNotColumnMetadata) {
  auto diags = Errors(
      "name: p\ndatasets:\n  - name: t\n    schema:\n      - name: a\n        type: int\n"
      "        metadata: {comment: x}\n");
  auto d = Expect(diags, "bad-value", 7, 20, "datasets[0].schema[0].metadata.comment");
  EXPECT_EQ(d.hint, "move it to the column's `comment:` key");
}

TEST(PipelineFileErrors, EveryProblemIsReportedNotJustTheFirst) {
  auto r = ParsePipelineFile(
      "name: p\n"
      "datasets:\n"
      "  - name: a\n"
      "    kind: tabel\n"
      "    comennt: x\n"
      "  - name: b\n"
      "    schema: [{name: id, type: bigin}]\n"
      "flows:\n"
      "  - target: a\n"
      "    streaming: {watermark: {column: ts, allowed_lateness: soon}}\n",
      "p.yaml");
  ASSERT_EQ(r.diagnostics.size(), 4u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].field_path,
            "datasets[0].comennt");  // key checks come first per record
  EXPECT_EQ(r.diagnostics[1].field_path, "datasets[0].kind");
  EXPECT_EQ(r.diagnostics[2].field_path, "datasets[1].schema[0].type");
  EXPECT_EQ(r.diagnostics[3].field_path, "flows[0].streaming.watermark.allowed_lateness");
  // Best effort: what could be read is there.
  ASSERT_EQ(r.pipeline.datasets.size(), 2u);
  EXPECT_EQ(r.pipeline.datasets[1].name, "b");
  ASSERT_EQ(r.pipeline.flows.size(), 1u);
  ASSERT_TRUE(r.pipeline.flows[0].streaming.has_value());
  EXPECT_EQ(r.pipeline.flows[0].streaming->watermark->event_time_column, "ts");
}

TEST(PipelineFileErrors, TopLevelMustBeAMapping) {
  auto diags = Errors("- a\n- b\n");
  auto d = Expect(diags, "wrong-type", 1, 1, "");
  EXPECT_EQ(d.message, "expected a pipeline mapping, got a list");
}

TEST(PipelineFileErrors, EmptyFile) {
  for (const char* text : {"", "# only a comment\n", "~\n"}) {
    auto diags = Errors(text);
    ASSERT_EQ(diags.size(), 1u) << text;
    EXPECT_EQ(diags[0].code, "empty-file");
  }
}

TEST(PipelineFileErrors, MoreThanOneDocument) {
  auto diags = Errors("name: a\n---\nname: b\n");
  auto d = Expect(diags, "multiple-documents", 3, 1, "");
  EXPECT_NE(d.message.find("2 YAML documents"), std::string::npos);
}

TEST(PipelineFileErrors, ListItemsOfTheWrongShape) {
  auto diags = Errors("name: p\ndatasets:\n  - orders\nflows: {target: x}\n");
  ASSERT_EQ(diags.size(), 2u) << DiagText(diags);
  EXPECT_EQ(diags[0].message, "expected a dataset mapping, got a scalar ('orders')");
  EXPECT_EQ(diags[0].field_path, "datasets[0]");
  EXPECT_EQ(diags[0].location.line, 3);
  EXPECT_EQ(diags[0].location.column, 5);
  EXPECT_EQ(diags[1].message, "expected a list of flows, got a mapping");
  EXPECT_EQ(diags[1].field_path, "flows");
}

TEST(LoadPipelineFile, MissingFileIsOneDiagnosticNamingThePath) {
  const std::string path = "/nonexistent/dir/pipeline.yaml";
  ParseResult r = LoadPipelineFile(path);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].code, "file-unreadable");
  EXPECT_NE(r.diagnostics[0].message.find(path), std::string::npos) << r.diagnostics[0].message;
  EXPECT_EQ(r.diagnostics[0].location.file, path);
  EXPECT_FALSE(r.ok());
}

TEST(LoadPipelineFile, DirectoryIsOneDiagnostic) {
  ParseResult r = LoadPipelineFile(THUND_SOURCE_DIR);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_NE(r.diagnostics[0].message.find("is a directory"), std::string::npos);
}

TEST(LoadPipelineFile, ReadsAndNamesTheFile) {
  const std::string path = std::string(THUND_SOURCE_DIR) + "/tests/file/data/full.yaml";
  ParseResult r = LoadPipelineFile(path);
  ASSERT_TRUE(r.ok()) << DiagText(r.diagnostics);
  EXPECT_EQ(r.pipeline.name, "full");
  EXPECT_EQ(r.pipeline.location.file, path);
  EXPECT_EQ(r.pipeline.datasets[0].location.file, path);
}

}  // namespace
}  // namespace thund

namespace thund {
namespace {

// A problem inside a flow's SQL is reported where it is written in the
// pipeline file: in a literal block (`sql: |`), and in a one-line scalar.
TEST(PipelineFileErrors, AnUnknownDatasetInSqlIsReportedWhereItIsWritten) {
  const std::string text =
      "name: shop\n"                                   // 1
      "datasets:\n"                                    // 2
      "  - name: orders\n"                             // 3
      "  - name: report\n"                             // 4
      "  - name: quick\n"                              // 5
      "flows:\n"                                       // 6
      "  - name: orders\n"                             // 7
      "    target: orders\n"                           // 8
      "    sql: SELECT 1 AS id\n"                      // 9
      "  - name: report\n"                             // 10
      "    target: report\n"                           // 11
      "    sql: |\n"                                   // 12
      "      SELECT o.id\n"                            // 13
      "      FROM orders o\n"                          // 14
      "        JOIN orderz x ON x.id = o.id\n"         // 15
      "  - name: quick\n"                              // 16
      "    target: quick\n"                            // 17
      "    sql: \"SELECT * FROM nowhere\"\n";          // 18
  ParseResult r = ParsePipelineFile(text, "p.yaml");
  ASSERT_TRUE(r.ok());
  int found = 0;
  for (const auto& d : Validate(r.pipeline)) {
    if (d.code != "unknown-input") continue;
    ++found;
    if (d.flow == "report") {
      EXPECT_EQ(d.location.line, 15) << d.message;
      EXPECT_EQ(d.location.column, 14) << d.message;
    } else {
      EXPECT_EQ(d.flow, "quick");
      EXPECT_EQ(d.location.line, 18) << d.message;
      EXPECT_EQ(d.location.column, 25) << d.message;
    }
  }
  EXPECT_EQ(found, 2);
}

}  // namespace
}  // namespace thund
