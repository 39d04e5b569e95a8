// Found by fuzz_check_json (fuzz/): the Spark-dialect rewrite of this mangled
// window(...) grew the query without bound (16 GB from 428 bytes) until the
// process was killed; the translation now stops with an error at the flow.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace thund
