// Found by fuzz_check_json (fuzz/): the Spark-dialect rewrite of this mangled
// window(...) grew the query without bound (16 GB from 428 bytes) until the
// process was killed; the translation now stops with an error at the flow.
#include <gmock/gmock.h>

#include <fstream>
#include <iterator>

#include "thund/sql_pipeline.h"
#include "thund/validate.h"

namespace thund {
namespace {

constexpr const char* kGrowing = R"SQL(-- Revenue per 5-minute window, emitted when the watermark closes the window.
CREATE OR REFRESH STREAMING TABLE gold_revenue_5m
WITH (trigger = '255s', mode = 'incremental')
AS SELECT window.start AS window_start, window.end AS window_end, sum(amount) AS revenue
FROM STREAM silver_orders WATEed_at DELAY OF INTERVAL 2 MINUTES
GROUP BY window(ordered_a closes the window.
CREATE OR REFRESH STREAMING TABLE gold_t, '5 minutes');
)SQL";

TEST(DialectBadInput, ARewriteThatKeepsGrowingIsAnErrorAtTheFlow) {
  ParseResult r = ParseSql(kGrowing, "grow.sql");
  ASSERT_TRUE(r.ok());
  Diagnostics diags = Validate(r.pipeline);
  const Diagnostic* found = nullptr;
  for (const auto& d : diags) {
    if (d.message.find("does not settle (it keeps growing)") != std::string::npos) found = &d;
  }
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->flow, "gold_revenue_5m");
  EXPECT_EQ(found->location, (SourceLocation{"grow.sql", 2, 35}));
}


// fuzz_check_json's other finding (fuzz/corpus/sql_parser/
// check_json_duckdb_bad_alloc.sql): a std::bad_alloc escaped the in-process
// check. Not DuckDB's binder after all: session_window() over a FROM whose
// table function never closes its parenthesis made the Spark-dialect rewrite
// read the token one past the end (MatchingClose gives the token count for
// an unclosed parenthesis) and build a string of a garbage length. The
// relation is now refused ("needs a single relation"), located at the flow.
// The same calls as the fuzz target and `thund check`: nothing throws, every
// error is located (ASan reports the old out-of-bounds read on every run).
TEST(DialectBadInput, TheBadAllocFindingGivesLocatedDiagnosticsAndNoException) {
  std::ifstream in(std::string(THUND_SOURCE_DIR) +
                       "/fuzz/corpus/sql_parser/check_json_duckdb_bad_alloc.sql",
                   std::ios::binary);
  ASSERT_TRUE(in);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Diagnostics diags;
  EXPECT_NO_THROW({
    ParseResult r = ParseSql(text, "found.sql");
    diags = r.diagnostics;
    if (r.ok()) {
      for (auto& d : Validate(r.pipeline)) diags.push_back(d);
      for (auto& d : CheckSqlFunctions(r.pipeline)) diags.push_back(d);
    }
  });
  std::vector<std::string> flows;
  for (const auto& d : diags) {
    if (d.severity != Severity::kError) continue;
    EXPECT_TRUE(d.location.known()) << d.ToString();
    EXPECT_EQ(d.location.file, "found.sql");
    flows.push_back(d.flow);
  }
  // The two flows whose SQL does not parse and the one reading an unknown input.
  EXPECT_THAT(flows, ::testing::UnorderedElementsAre("device_sessions", "bids_per_minute",
                                                      "hot_minutes"));
}

TEST(DialectBadInput, SessionWindowOverAnUnclosedTableFunctionIsALocatedError) {
  ParseResult r = ParseSql(
      "CREATE TABLE b AS\n"
      "SELECT 1 FROM TUMBLE(TABLE x y GROUP BY session_window(ts, '10 minutes');\n",
      "open.sql");
  ASSERT_TRUE(r.ok());
  Diagnostics diags;
  EXPECT_NO_THROW(diags = Validate(r.pipeline));
  const Diagnostic* found = nullptr;
  for (const auto& d : diags) {
    if (d.message.find("session_window() needs a single relation") != std::string::npos) {
      found = &d;
    }
  }
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->flow, "b");
  EXPECT_EQ(found->location.file, "open.sql");
  EXPECT_EQ(found->location.line, 1);  // the flow (its query starts there)
  EXPECT_NO_THROW(CheckSqlFunctions(r.pipeline));
}

}  // namespace
}  // namespace thund
