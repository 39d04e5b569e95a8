// Text that is not UTF-8: refused where it is written (pipeline files, SQL
// files, SDP specs), escaped where it is data, and never a throwing JSON dump.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "thund/json_text.h"
#include "thund/sql_pipeline.h"
#include "thund/utf8.h"

namespace thund {
namespace {

using file_test::DiagText;

TEST(Utf8, InvalidOffsetFindsTheFirstByteThatStartsNoCharacter) {
  EXPECT_EQ(InvalidUtf8Offset(""), std::string_view::npos);
  EXPECT_EQ(InvalidUtf8Offset("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), std::string_view::npos);
  EXPECT_EQ(InvalidUtf8Offset("ab\xFF"), 2u);                  // never in UTF-8
  EXPECT_EQ(InvalidUtf8Offset("a\x80"), 1u);                   // a lone continuation byte
  EXPECT_EQ(InvalidUtf8Offset("\xC0\x80"), 0u);                // overlong NUL
  EXPECT_EQ(InvalidUtf8Offset("\xE0\x80\xAF"), 0u);            // overlong '/'
  EXPECT_EQ(InvalidUtf8Offset("x\xED\xA0\x80"), 1u);           // a surrogate
  EXPECT_EQ(InvalidUtf8Offset("\xF4\x90\x80\x80"), 0u);        // past U+10FFFF
  EXPECT_EQ(InvalidUtf8Offset("ok \xE2\x82"), 3u);             // cut short
  EXPECT_EQ(InvalidUtf8Offset("\xC3\xA9\xC3"), 2u);
}

TEST(Utf8, EscapeWritesEachBadByteAsHexAndKeepsValidText) {
  EXPECT_EQ(EscapeInvalidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(EscapeInvalidUtf8("a\xFF" "b\xE2\x82"), "a\\xFFb\\xE2\\x82");
  EXPECT_EQ(EscapeInvalidUtf8("\xED\xA0\x80"), "\\xED\\xA0\\x80");
}

TEST(Utf8, ExcerptNeverCutsACharacterInTwo) {
  // "é" is two bytes at offsets 2-3; a cut at 3 falls inside it.
  EXPECT_EQ(Utf8Excerpt("ab\xC3\xA9" "cd", 3), "ab...");
  EXPECT_EQ(Utf8Excerpt("ab\xC3\xA9" "cd", 4), "ab\xC3\xA9...");
  EXPECT_EQ(Utf8Excerpt("abc", 3), "abc");
  EXPECT_EQ(Utf8Excerpt("a\xFF", 10), "a\\xFF");
}

TEST(Utf8, JsonTextReplacesInvalidBytesInsteadOfThrowing) {
  nlohmann::json j = {{"message", std::string("bad \xFF byte")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what JsonText avoids
  EXPECT_EQ(JsonText(j), "{\"message\":\"bad \xEF\xBF\xBD byte\"}");
  nlohmann::ordered_json o = {{"k", std::string("\xC3")}};
  EXPECT_EQ(JsonText(o, 1), "{\n \"k\": \"\xEF\xBF\xBD\"\n}");
}

TEST(Utf8, PipelineFileWithInvalidUtf8IsRefusedAtTheByte) {
  // Latin-1 "é" (0xE9) in a dataset name on line 3, column 14.
  ParseResult r = ParsePipelineFile("name: p\ndatasets:\n  - name: caf\xE9\n", "p.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  const Diagnostic& d = r.diagnostics[0];
  EXPECT_EQ(d.code, "invalid-utf8");
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.location, (SourceLocation{"p.yaml", 3, 14}));
  EXPECT_NE(d.message.find("byte 0xE9 at offset 31"), std::string::npos) << d.message;
  EXPECT_NE(d.hint.find("UTF-8"), std::string::npos);
  EXPECT_TRUE(IsValidUtf8(d.ToString()));
}

TEST(Utf8, JsonPipelineFileWithInvalidUtf8IsRefusedAtTheByte) {
  ParseResult r = ParsePipelineFile("{\"name\": \"p\xFF\"}", "p.json");
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].code, "invalid-utf8");
  EXPECT_EQ(r.diagnostics[0].location, (SourceLocation{"p.json", 1, 12}));
}

TEST(Utf8, SqlFileWithInvalidUtf8IsRefusedAtTheByte) {
  ParseResult r = ParseSql(
      "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;\n"
      "CREATE MATERIALIZED VIEW t AS SELECT 'x\xFF' AS c;\n",
      "p.sql");
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].code, "invalid-utf8");
  EXPECT_EQ(r.diagnostics[0].location, (SourceLocation{"p.sql", 2, 40}));
}

TEST(Utf8, SqlIdentifierWithInvalidUtf8IsRefused) {
  ParseResult r = ParseSql("CREATE MATERIALIZED VIEW `t\xC0\x80` AS SELECT 1 AS x;", "p.sql");
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].code, "invalid-utf8");
  EXPECT_EQ(r.diagnostics[0].location, (SourceLocation{"p.sql", 1, 28}));
}

TEST(Utf8, SdpSpecWithInvalidUtf8IsRefusedAtTheByte) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("thund-utf8-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "spark-pipeline.yml") << "name: p\nstorage: ./s\xFE\n";
  ParseResult r = LoadSdpProject((dir / "spark-pipeline.yml").string());
  fs::remove_all(dir);
  ASSERT_EQ(r.diagnostics.size(), 1u) << DiagText(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].code, "invalid-utf8");
  EXPECT_EQ(r.diagnostics[0].location.line, 2);
  EXPECT_EQ(r.diagnostics[0].location.column, 13);
}

// The one way JSON is written: no `.dump(` in src/ outside thund/json_text.h
// (a raw dump throws on invalid UTF-8). A line may opt out by saying
// "raw dump: " and why.
TEST(Utf8, EveryJsonDumpInSrcGoesThroughJsonText) {
  namespace fs = std::filesystem;
  std::string offenders;
  int files = 0;
  for (const char* root : {"src", "include"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(THUND_SOURCE_DIR) / root)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cc" && ext != ".h") continue;
      if (e.path().filename() == "json_text.h") continue;
      ++files;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (line.find(".dump(") != std::string::npos && line.find("raw dump: ") == std::string::npos) {
          offenders += e.path().string() + ":" + std::to_string(n) + ": " + line + "\n";
        }
      }
    }
  }
  EXPECT_GT(files, 100);
  EXPECT_EQ(offenders, "") << "use thund::JsonText (thund/json_text.h)";
}

}  // namespace
}  // namespace thund
