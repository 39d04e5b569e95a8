// The canonical writer's scalar quoting: every string must re-parse to itself,
// as a block value, as a literal block, inside flow collections and as a key.
#include "authoring/file/yaml_out.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <random>
#include <string>
#include <vector>

#include "testing/random_pipeline.h"

namespace thund::file {
namespace {

// Random valid UTF-8 from an alphabet of YAML troublemakers.
std::string RandomString(std::mt19937_64& rng) {
  static const std::vector<std::string> kPieces = {"a",
                                                   "Z",
                                                   "0",
                                                   "9",
                                                   " ",
                                                   "  ",
                                                   "\n",
                                                   "\t",
                                                   "\r",
                                                   ":",
                                                   ": ",
                                                   "#",
                                                   " #",
                                                   "-",
                                                   "- ",
                                                   "?",
                                                   ",",
                                                   "[",
                                                   "]",
                                                   "{",
                                                   "}",
                                                   "&",
                                                   "*",
                                                   "!",
                                                   "|",
                                                   ">",
                                                   "'",
                                                   "\"",
                                                   "%",
                                                   "@",
                                                   "`",
                                                   "\\",
                                                   ".",
                                                   "~",
                                                   "=",
                                                   "<",
                                                   "+",
                                                   "_",
                                                   "true",
                                                   "null",
                                                   "123",
                                                   "1.5",
                                                   "0x",
                                                   "é",
                                                   "日本",
                                                   "🚀",
                                                   "\xC2\xA0",
                                                   "\xC2\x85",
                                                   "\xE2\x80\xA8",
                                                   "\xEF\xBB\xBF",
                                                   std::string(1, '\0'),
                                                   "\x01",
                                                   "\x7f",
                                                   "---",
                                                   "...",
                                                   "SELECT "};
  std::string s;
  const size_t n = rng() % 10;
  for (size_t i = 0; i < n; ++i) s += kPieces[rng() % kPieces.size()];
  return s;
}

std::vector<std::string> Corpus() {
  std::vector<std::string> out = testing::RandomPipelineGenerator::TrickyStrings();
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) out.push_back(RandomString(rng));
  return out;
}

TEST(YamlOut, EveryStringSurvivesAsBlockValueFlowItemAndKey) {
  for (const std::string& s : Corpus()) {
    OutNode root = OutNode::Map();
    root.Add("value", OutNode::Str(s));
    OutNode& seq = root.Add("flow_list", OutNode::Seq(/*flow=*/true));
    seq.items.push_back(OutNode::Str(s));
    seq.items.push_back(OutNode::Str("next"));
    OutNode& fmap = root.Add("flow_map", OutNode::Map(/*flow=*/true));
    fmap.Add("k", OutNode::Str(s));
    OutNode& block_list = root.Add("block_list", OutNode::Seq());
    block_list.items.push_back(OutNode::Str(s));
    OutNode& keyed = root.Add("keyed", OutNode::Map());
    keyed.Add(s, OutNode::Str("v"));
    root.Add("after", OutNode::Str("end"));
    const std::string text = Render(root);
    YAML::Node doc;
    try {
      doc = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      FAIL() << "does not parse: " << e.what() << "\n" << text;
    }
    ASSERT_EQ(doc["value"].Scalar(), s) << text;
    ASSERT_EQ(doc["flow_list"][0].Scalar(), s) << text;
    ASSERT_EQ(doc["flow_list"][1].Scalar(), "next") << text;
    ASSERT_EQ(doc["flow_map"]["k"].Scalar(), s) << text;
    ASSERT_EQ(doc["block_list"][0].Scalar(), s) << text;
    ASSERT_EQ(doc["keyed"].begin()->first.Scalar(), s) << text;
    ASSERT_EQ(doc["after"].Scalar(), "end") << text;
    // A string never comes back as null, and plain scalars are never YAML's
    // other types (a YAML 1.1 reader would turn "yes" into a boolean).
    ASSERT_FALSE(doc["value"].IsNull()) << text;
  }
}

TEST(YamlOut, ChoosesReadableStyles) {
  EXPECT_EQ(ChooseStyle("orders", false), ScalarStyle::kPlain);
  EXPECT_EQ(ChooseStyle("10s", false), ScalarStyle::kPlain);
  EXPECT_EQ(ChooseStyle("SELECT a, b FROM t", false), ScalarStyle::kPlain);
  EXPECT_EQ(ChooseStyle("s3://bucket/path/", false), ScalarStyle::kPlain);
  EXPECT_EQ(ChooseStyle("SELECT *\nFROM t\n", false), ScalarStyle::kLiteral);
  for (const char* s : {"true", "No",  "on",   "null",       "~",    "",      "123",    "1.5",
                        "0x1F", "1e3", ".inf", "2024-01-01", "1:30", " lead", "trail ", "a: b",
                        "a #b", "#x",  "- x",  "'q'",        "@x",   "é"}) {
    EXPECT_EQ(ChooseStyle(s, false), ScalarStyle::kDoubleQuoted) << s;
  }
  // In flow collections ',' and brackets would end the scalar.
  EXPECT_EQ(ChooseStyle("a,b", false), ScalarStyle::kPlain);
  EXPECT_EQ(ChooseStyle("a,b", true), ScalarStyle::kDoubleQuoted);
  EXPECT_EQ(ChooseStyle("decimal(10,2)", true), ScalarStyle::kDoubleQuoted);
  EXPECT_EQ(ChooseStyle("array<int>", true), ScalarStyle::kPlain);
  // Literal blocks only where they read back unchanged.
  EXPECT_EQ(ChooseStyle(" indented\nx", false), ScalarStyle::kDoubleQuoted);
  EXPECT_EQ(ChooseStyle("a\r\nb", false), ScalarStyle::kDoubleQuoted);
  EXPECT_EQ(ChooseStyle("a\nb", true), ScalarStyle::kDoubleQuoted);
}

TEST(YamlOut, LiteralBlocksUseTheRightChomping) {
  auto render = [](const std::string& s) {
    OutNode root = OutNode::Map();
    root.Add("sql", OutNode::Str(s));
    return Render(root);
  };
  EXPECT_EQ(render("SELECT 1\nFROM t"), "sql: |-\n  SELECT 1\n  FROM t\n");
  EXPECT_EQ(render("SELECT 1\nFROM t\n"), "sql: |\n  SELECT 1\n  FROM t\n");
  EXPECT_EQ(render("SELECT 1\n\nFROM t\n\n"), "sql: |+\n  SELECT 1\n\n  FROM t\n\n");
}

TEST(YamlOut, DoubleQuotedEscapes) {
  EXPECT_EQ(DoubleQuote("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\x01\"");
  EXPECT_EQ(DoubleQuote("é"), "\"é\"");
  EXPECT_EQ(DoubleQuote("\xE2\x80\xA8"), "\"\\u2028\"");
}

}  // namespace
}  // namespace thund::file
