// Inputs the fuzzers found (fuzz/): each used to hang or throw out of the
// reader; each is now an ordinary located error.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "test_util.h"
#include "thund/type_names.h"
#include "thund/utf8.h"

namespace thund {
namespace {

using file_test::DiagText;

// yaml-cpp 0.7's LoadAll loops for ever, allocating, on these streams
// (fuzz_pipeline_file: a flow collection followed by ','); the reader counts
// documents itself and stops at the first empty one.
TEST(PipelineFileBadInput, StreamsThatHangYamlCppLoadAllAreRead) {
  ParseResult r = ParsePipelineFile("{name: p},\n", "p.yaml");
  EXPECT_TRUE(r.ok()) << DiagText(r.diagnostics);
  EXPECT_EQ(r.pipeline.name, "p");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{},", "missing required key 'name' in pipeline"},
      {",", "the pipeline file is empty"},
      {"[],\n", "expected a pipeline mapping, got a list"},
      {"{}\n,\n,\n", "missing required key 'name' in pipeline"},
  };
  for (const auto& [text, message] : cases) {
    ParseResult bad = ParsePipelineFile(text, "p.yaml");
    ASSERT_EQ(bad.diagnostics.size(), 1u) << text << DiagText(bad.diagnostics);
    EXPECT_EQ(bad.diagnostics[0].message, message) << text;
    EXPECT_EQ(bad.diagnostics[0].location, (SourceLocation{"p.yaml", 1, 1})) << text;
  }
}

TEST(PipelineFileBadInput, ASecondDocumentIsStillCountedAndLocated) {
  ParseResult r = ParsePipelineFile("name: a\n---\nname: b\n---\nname: c\n", "p.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].code, "multiple-documents");
  EXPECT_EQ(r.diagnostics[0].location, (SourceLocation{"p.yaml", 3, 1}));
  EXPECT_NE(r.diagnostics[0].message.find("3 YAML documents"), std::string::npos);
}

// fuzz_pipeline_file: a NUL inside a key came out of yaml-cpp as bytes that
// are not UTF-8 (and then in the diagnostic); control characters are refused
// where they are: all of them but tab, LF and CR. (SQL keeps them: a string
// literal may hold any character, SqlRoundTrip.GeneratedPipelinesWithAwkwardStrings.)
TEST(PipelineFileBadInput, ControlCharactersAreRefusedAtTheByte) {
  ParseResult r = ParsePipelineFile(std::string("name: p\nflows:\n  - nam\0e: x\n", 28), "p.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].code, "control-character");
  EXPECT_EQ(r.diagnostics[0].location, (SourceLocation{"p.yaml", 3, 8}));
  EXPECT_NE(r.diagnostics[0].message.find("control character 0x00 at offset 22"),
            std::string::npos)
      << r.diagnostics[0].message;
  ParseResult bell = ParsePipelineFile("name: p\x07\n", "p.yaml");
  ASSERT_EQ(bell.diagnostics.size(), 1u);
  EXPECT_EQ(bell.diagnostics[0].location, (SourceLocation{"p.yaml", 1, 8}));
  // Tabs, CR LF line ends are text.
  EXPECT_TRUE(ParsePipelineFile("name: p\r\ndatasets: []\t\r\n", "p.yaml").ok());
}

// fuzz_pipeline_file: yaml-cpp decodes "\_" (U+00A0) to the lone byte 0xA0;
// a diagnostic that quotes such a key shows it escaped.
TEST(PipelineFileBadInput, YamlEscapesYamlCppDecodesToNonUtf8AreEscapedInDiagnostics) {
  ParseResult r = ParsePipelineFile("name: p\n\"a\\_b\": 1\n", "p.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].location, (SourceLocation{"p.yaml", 2, 1}));
  EXPECT_NE(r.diagnostics[0].message.find("unknown key 'a\\xA0b'"), std::string::npos)
      << r.diagnostics[0].message;
}

// fuzz_pipeline_file (2026-12-05): a value with "\_" read without errors but was
// written back with the lone byte 0xA0, a file that does not read. Values now
// hold the code points YAML means, and the written file reads back equal.
TEST(PipelineFileBadInput, YamlCodePointEscapesInValuesRoundTrip) {
  const std::string text =
      "name: p\ndatasets:\n  - name: t\n    kind: table\n"
      "    comment: \"a\\_b\\N\\xe9c\"\nflows:\n  - name: t\n    target: t\n"
      "    sql: SELECT 1 AS x\n";
  ParseResult r = ParsePipelineFile(text, "p.yaml");
  ASSERT_TRUE(r.ok()) << DiagText(r.diagnostics);
  const Dataset* t = r.pipeline.FindDataset("t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->comment, "a\xC2\xA0" "b\xC2\x85\xC3\xA9" "c");
  ParseResult back = ParsePipelineFile(FormatPipelineFile(r.pipeline), "back.yaml");
  ASSERT_TRUE(back.ok()) << DiagText(back.diagnostics);
  EXPECT_EQ(back.pipeline.FindDataset("t")->comment, t->comment);
}

// fuzz_pipeline_file (2026-12-05): yaml-cpp's message for an unknown escape
// quotes one byte, here the first of "é": the message is escaped, not broken UTF-8.
TEST(PipelineFileBadInput, AnUnknownEscapeBeforeAMultiByteCharacterIsAnEscapedMessage) {
  ParseResult r = ParsePipelineFile("name: \"a\\\xC3\xA9\"\n", "p.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].code, "yaml-syntax");
  EXPECT_TRUE(IsValidUtf8(r.diagnostics[0].message)) << r.diagnostics[0].message;
  EXPECT_NE(r.diagnostics[0].message.find("\\xC3"), std::string::npos) << r.diagnostics[0].message;
}

// fuzz_sql_parser: a decimal precision past int64 threw std::out_of_range
// from std::stoll.
TEST(TypeNameBadInput, NumberPastInt64IsAnErrorNotAnException) {
  auto t = ParseTypeName("decimal(99999999999999999999,2)");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("number too large"), std::string::npos)
      << t.status().ToString();
}

}  // namespace
}  // namespace thund
