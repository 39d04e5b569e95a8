// The pipeline file: streaming.mode set or unset, and streaming.late_rows —
// decoding, errors with positions, the canonical writer, and the late-rows
// checks of thund check on a file.
#include <gtest/gtest.h>

#include "test_util.h"
#include "thund/validate.h"

namespace thund {
namespace {

using file_test::DiagText;
using file_test::OnlyWithCode;

Pipeline ParseOk(const std::string& text) {
  ParseResult r = ParsePipelineFile(text, "p.yaml");
  EXPECT_TRUE(r.ok()) << DiagText(r.diagnostics) << text;
  return r.pipeline;
}

const char* kAuctions =
    "name: auctions\n"
    "datasets:\n"
    "  - {name: bids, kind: streaming_table}\n"
    "  - {name: late_bids, kind: streaming_table}\n"
    "  - {name: max_price, kind: streaming_table}\n"
    "flows:\n"
    "  - target: bids\n"
    "    source: {kind: generator, generator: nexmark_bid}\n"
    "    streaming:\n"
    "      watermark: {column: date_time, allowed_lateness: 5s}\n"
    "      late_rows: late_bids\n"
    "  - target: max_price\n"
    "    streaming: {mode: recompute, output_mode: complete, late_rows: late_bids}\n"
    "    sql: SELECT max(price) AS p FROM STREAM(bids)\n";

TEST(PipelineFileLateRows, DecodesModeAndLateRows) {
  Pipeline p = ParseOk(kAuctions);
  ASSERT_EQ(p.flows.size(), 2u);
  ASSERT_TRUE(p.flows[0].streaming);
  EXPECT_EQ(p.flows[0].streaming->late_rows, "late_bids");
  EXPECT_FALSE(p.flows[0].streaming->mode.has_value());  // unset: the run's default applies
  ASSERT_TRUE(p.flows[1].streaming);
  EXPECT_EQ(p.flows[1].streaming->late_rows, "late_bids");
  EXPECT_EQ(p.flows[1].streaming->mode, StreamingMode::kRecompute);
  // `late_rows:` with no value is not set.
  Pipeline q = ParseOk("name: p\nflows:\n  - target: t\n    streaming: {late_rows: ~}\n    sql: "
                       "SELECT 1\n");
  EXPECT_EQ(*q.flows[0].streaming, StreamingSpec{});
}

TEST(PipelineFileLateRows, WritesThemBackCanonically) {
  Pipeline p = ParseOk(kAuctions);
  const std::string text = FormatPipelineFile(p);
  EXPECT_NE(text.find("      late_rows: late_bids\n"), std::string::npos) << text;
  EXPECT_NE(text.find("mode: recompute"), std::string::npos) << text;  // explicit: kept
  EXPECT_EQ(text.find("mode: incremental"), std::string::npos) << text;
  EXPECT_EQ(ParseOk(text), p);
  EXPECT_EQ(FormatPipelineFile(ParseOk(text)), text);
  // The flow without a mode is written without one.
  Pipeline one;
  one.name = "p";
  StreamingSpec s;
  s.late_rows = "late";
  one.Add(Flow("t", "t", "SELECT 1").WithStreaming(s));
  EXPECT_EQ(FormatPipelineFile(one),
            "name: p\n"
            "flows:\n"
            "  - target: t\n"
            "    streaming:\n"
            "      late_rows: late\n"
            "    sql: SELECT 1\n");
}

TEST(PipelineFileLateRows, BadValuesAreReportedWhereWritten) {
  ParseResult r = ParsePipelineFile(
      "name: p\nflows:\n  - target: t\n    streaming: {late_rows: [a, b]}\n    sql: SELECT 1\n",
      "p.yaml");
  ASSERT_FALSE(r.ok());
  const Diagnostic* d = OnlyWithCode(r.diagnostics, "wrong-type");
  ASSERT_NE(d, nullptr) << DiagText(r.diagnostics);
  EXPECT_EQ(d->field_path, "flows[0].streaming.late_rows");
  EXPECT_EQ(d->location.line, 4);
  EXPECT_EQ(d->location.column, 28);  // the list
  EXPECT_NE(d->message.find("expected a string"), std::string::npos) << d->message;
  EXPECT_EQ(d->flow, "t");

  r = ParsePipelineFile(
      "name: p\nflows:\n  - target: t\n    streaming: {mode: fast}\n    sql: SELECT 1\n",
      "p.yaml");
  d = OnlyWithCode(r.diagnostics, "bad-enum");
  ASSERT_NE(d, nullptr) << DiagText(r.diagnostics);
  EXPECT_EQ(d->field_path, "flows[0].streaming.mode");
  EXPECT_EQ(d->message, "unknown streaming mode 'fast'");
  EXPECT_EQ(d->hint, "allowed: recompute, incremental");

  r = ParsePipelineFile(
      "name: p\nflows:\n  - target: t\n    streaming: {late_row: x}\n    sql: SELECT 1\n",
      "p.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(DiagText(r.diagnostics).find("did you mean 'late_rows'?"), std::string::npos)
      << DiagText(r.diagnostics);
}

TEST(PipelineFileLateRows, CheckAcceptsTheExample) {
  Diagnostics d = Validate(ParseOk(kAuctions));
  EXPECT_TRUE(d.empty()) << DiagText(d);  // late_bids is not "unwritten"
}

TEST(PipelineFileLateRows, CheckReportsEachProblemAtTheFlow) {
  const std::string text =
      "name: auctions\n"
      "datasets:\n"
      "  - {name: bids, kind: streaming_table}\n"
      "  - {name: late_bids, kind: table}\n"
      "  - {name: max_price, kind: streaming_table}\n"
      "flows:\n"
      "  - target: bids\n"
      "    source: {kind: memory, name: bids}\n"
      "    streaming: {late_rows: late_bids}\n"
      "  - target: max_price\n"
      "    streaming: {output_mode: complete, late_rows: max_price}\n"
      "    sql: SELECT max(price) AS p FROM STREAM(bids)\n"
      "  - name: fill\n"
      "    target: late_bids\n"
      "    sql: SELECT 1 AS x\n";
  Diagnostics d = Validate(ParseOk(text));
  const Diagnostic* kind = OnlyWithCode(d, "late-rows-kind");
  ASSERT_NE(kind, nullptr) << DiagText(d);
  EXPECT_EQ(kind->flow, "bids");
  EXPECT_EQ(kind->field_path, "flows[0].streaming.late_rows");
  EXPECT_EQ(kind->location.file, "p.yaml");
  EXPECT_EQ(kind->location.line, 7);
  const Diagnostic* self = OnlyWithCode(d, "late-rows-self");
  ASSERT_NE(self, nullptr) << DiagText(d);
  EXPECT_EQ(self->flow, "max_price");
  EXPECT_EQ(self->location.line, 10);
  // Neither flow has a watermark (none on the flow writing bids either).
  int no_watermark = 0;
  for (const auto& x : d) no_watermark += x.code == "late-rows-watermark";
  EXPECT_EQ(no_watermark, 2) << DiagText(d);
}

}  // namespace
}  // namespace thund
