// docs/sql.md stays true: every SQL example parses, every translated Spark
// function is in the reference table, and every documented WITH key is one
// the parser knows.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "thund/sql_dialect.h"
#include "thund/sql_pipeline.h"

namespace thund {
namespace {

std::string Doc() {
  std::ifstream in(std::filesystem::path(THUND_SOURCE_DIR) / "docs" / "sql.md");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::vector<std::string> SqlBlocks(const std::string& doc) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = doc.find("```sql\n", pos)) != std::string::npos) {
    size_t start = pos + 7;
    size_t end = doc.find("```", start);
    out.push_back(doc.substr(start, end - start));
    pos = end + 3;
  }
  return out;
}

TEST(SqlDocs, EveryExampleParses) {
  auto blocks = SqlBlocks(Doc());
  ASSERT_GE(blocks.size(), 12u);
  for (const auto& b : blocks) {
    ParseResult r = ParseSql(b, "docs/sql.md");
    std::string diags;
    for (const auto& d : r.diagnostics) diags += RenderDiagnostic(d, b);
    EXPECT_TRUE(r.ok()) << diags << "\n" << b;
  }
}

TEST(SqlDocs, FunctionTableListsEveryTranslation) {
  const std::string doc = Doc();
  for (const auto& m : SparkFunctionTable()) {
    EXPECT_NE(doc.find("| `" + m.spark + "` |"), std::string::npos)
        << m.spark << " is not in docs/sql.md";
  }
}

TEST(SqlDocs, EveryDocumentedWithKeyIsKnown) {
  const std::string doc = Doc();
  size_t section = doc.find("## WITH options");
  ASSERT_NE(section, std::string::npos);
  size_t end = doc.find("\n## ", section + 3);
  std::istringstream lines(doc.substr(section, end - section));
  int keys = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    // | `key` | or | `a` / `b` | : every back-quoted word in the first cell.
    std::string cell = line.substr(1, line.find('|', 1) - 1);
    for (size_t p = cell.find('`'); p != std::string::npos; p = cell.find('`', p)) {
      size_t q = cell.find('`', p + 1);
      std::string key = cell.substr(p + 1, q - p - 1);
      p = q + 1;
      if (key[0] == '.') key = "keyed_write" + key;
      ++keys;
      ParseResult r =
          ParseSql("CREATE STREAMING TABLE t WITH (" + key + " = 'x') AS SELECT 1", "t.sql");
      for (const auto& d : r.diagnostics) {
        EXPECT_EQ(d.message.find("unknown option"), std::string::npos) << key;
      }
    }
  }
  EXPECT_GE(keys, 19);
}

}  // namespace
}  // namespace thund
