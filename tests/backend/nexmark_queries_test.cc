// The Nexmark queries of bench/nexmark/ (q0, q1, q2, q3, q4, q5 and its HOP
// count, q7 and its TUMBLE max, q8, q11's sessions) on a small bounded run:
// incremental mode ends equal to Recompute mode, which ends equal to the
// batch query (stream_recompute_test.cc and the property test check that
// rule). Every query but q4 runs incrementally; q4 (a nested aggregation over
// a join bounded by a column, A.expires) falls back to Recompute.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "batch_fixture.h"
#include "engine/duckdb/sql_quote.h"
#include "thund/sql_pipeline.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;

std::string Load(const std::string& query, const std::string& mode) {
  std::ifstream in(std::string(THUND_SOURCE_DIR) + "/bench/nexmark/" + query + ".sql");
  std::stringstream text;
  text << in.rdbuf();
  std::string sql = text.str();
  auto fill = [&](const std::string& key, const std::string& value) {
    for (size_t at; (at = sql.find(key)) != std::string::npos;) sql.replace(at, key.size(), value);
  };
  // Enough event time (10,000 events per second) for several 10-second windows.
  fill("{rows}", "60000");
  fill("{per_trigger}", "7000");
  fill("{mode}", mode);
  return sql;
}

class NexmarkQueriesTest : public BatchFixture,
                           public ::testing::WithParamInterface<const char*> {};

TEST_P(NexmarkQueriesTest, IncrementalEqualsRecompute) {
  const std::string q = GetParam();
  std::map<std::string, std::shared_ptr<arrow::Table>> out;
  for (const std::string mode : {"incremental", "recompute"}) {
    RunOptions o;
    o.storage_root = Path(mode);
    events_.clear();
    RunSummary s = Run(ParsePipeline(Load(q, mode)), o);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    for (const auto& e : events_) {
      if (q == "q4" && mode == "incremental") continue;
      ASSERT_NE(e.kind, RunEvent::Kind::kFallback) << e.message;
    }
    out[mode] = Oracle("SELECT * FROM read_parquet(" +
                       QuoteString(Path(mode) + "/" + q + "/current/*.parquet") + ")");
    ASSERT_TRUE(out[mode]);
  }
  EXPECT_GT(out["incremental"]->num_rows(), 0);
  EXPECT_TRUE(engine::testing::TablesEqualUnordered(*out["recompute"], *out["incremental"],
                                                    /*check_types=*/false));
}

INSTANTIATE_TEST_SUITE_P(Queries, NexmarkQueriesTest,
                         ::testing::Values("q0", "q1", "q2", "q3", "q4", "q5", "q5_hop_count",
                                           "q7", "q7_tumble_max", "q8", "q11"));

}  // namespace
}  // namespace thund::native::testing
