// DuckDB's JSON error messages read with nlohmann (not scraped), and data
// bytes that are not UTF-8 escaped in bad-row reports and dead-letter rows.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <string>

#include "engine/batch/bad_rows.h"
#include "engine/duckdb/duckdb_status.h"
#include "thund/utf8.h"

namespace thund::engine {
namespace {

TEST(ReadableDuckDbMessage, JsonErrorBecomesTypeAndMessage) {
  EXPECT_EQ(ReadableDuckDbMessage(
                R"({"exception_type":"Parser","exception_message":"syntax error at or near \"FORM\""})"),
            "Parser: syntax error at or near \"FORM\"");
  // Members in any order, with spaces; escapes decoded as JSON decodes them
  // (the old scraper kept "\u00e9" as 'u00e9' and stopped at the first '"').
  EXPECT_EQ(ReadableDuckDbMessage(
                "{ \"extra\": {\"a\": [1, 2]}, \"exception_message\": \"caf\\u00e9 \\\"q\\\"\\n\","
                " \"exception_type\": \"Binder\" }"),
            "Binder: caf\xC3\xA9 \"q\"\n");
  EXPECT_EQ(ReadableDuckDbMessage(R"({"exception_message":"no type"})"), "no type");
}

TEST(ReadableDuckDbMessage, TextThatIsNotSuchJsonComesBackUnchanged) {
  for (const std::string& text :
       {std::string("Catalog Error: Table with name x does not exist!"), std::string(""),
        std::string("{not json at all"), std::string(R"({"exception_type":"Parser"})"),
        std::string(R"({"exception_message": 42})"), std::string(R"({"exception_message":"a"} trailing)"),
        std::string("{\"exception_message\":\"bad \xFF\"}")}) {
    EXPECT_EQ(ReadableDuckDbMessage(text), text);
  }
}

TEST(ReadableDuckDbMessage, DuckDbErrorUsesTheReadableForm) {
  const arrow::Status st = DuckDbError(DUCKDB_ERROR_PARSER,
                                       R"({"exception_type":"Parser","exception_message":"oops"})",
                                       "parsing failed");
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_EQ(st.message(), "parsing failed: Parser: oops");
  ASSERT_NE(GetDuckDbErrorDetail(st), nullptr);
}

TEST(BadRowsUtf8, DeadLetterRowsAndMessagesEscapeBytesThatAreNotUtf8) {
  std::vector<batch::BadRow> rows = {
      {"in/caf\xE9.csv", 3, "bad value \xFF", "3,caf\xE9,\xC3"},
      {"in/b.csv", 7, "too many columns", std::string(200, 'x') + "\xC3\xA9"},
  };
  auto table = batch::DeadLetterTable("ingest", rows);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_TRUE((*table)->ValidateFull().ok());  // utf8 columns hold UTF-8
  auto raw = std::static_pointer_cast<arrow::StringArray>((*table)->GetColumnByName("raw")->chunk(0));
  EXPECT_EQ(raw->GetString(0), "3,caf\\xE9,\\xC3");
  EXPECT_EQ(raw->GetString(1), rows[1].raw);  // valid text is kept as it is
  auto file = std::static_pointer_cast<arrow::StringArray>((*table)->GetColumnByName("file")->chunk(0));
  EXPECT_EQ(file->GetString(0), "in/caf\\xE9.csv");
  auto reason = std::static_pointer_cast<arrow::StringArray>((*table)->GetColumnByName("reason")->chunk(0));
  EXPECT_EQ(reason->GetString(0), "bad value \\xFF");

  EXPECT_EQ(batch::DescribeBadRows(rows),
            "in/caf\\xE9.csv:3: bad value \\xFF (line: 3,caf\\xE9,\\xC3) (and 1 more bad rows)");
  // A long line is cut at 120 bytes, never inside a character.
  const std::string described = batch::DescribeBadRows({rows[1]});
  EXPECT_TRUE(IsValidUtf8(described));
  EXPECT_EQ(described, "in/b.csv:7: too many columns (line: " + std::string(120, 'x') + "...)");
}

}  // namespace
}  // namespace thund::engine
