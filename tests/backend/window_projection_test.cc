// Windowed Append flows whose SELECT keeps only the window's start, only its
// end, or no window column at all (common Spark forms). The window is the
// aggregate's grouping key in the plan, so every form emits each window once
// the watermark passes its end, across runs on file drops, exactly as the
// form that keeps the whole window does. Oracle: DuckDB over all rows dropped,
// with the window computed by integer arithmetic on epoch microseconds.
#include <gtest/gtest.h>

#include "batch_fixture.h"
#include "engine/duckdb/sql_quote.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;
using engine::testing::TablesEqualUnordered;

constexpr int64_t kWindowUs = 10LL * 60 * 1000000;  // 10 minutes
constexpr int64_t kDelayUs = 60LL * 1000000;         // the watermark's 1 minute delay

// Events of user u at minute m (a CSV row per event, minutes from midnight).
std::string Csv(const std::vector<std::pair<int, int>>& events) {
  std::string s = "user_id,amount,ts\n";
  for (const auto& [user, minute] : events) {
    char ts[32];
    std::snprintf(ts, sizeof ts, "2026-01-01 %02d:%02d:00", minute / 60, minute % 60);
    s += std::to_string(user) + "," + std::to_string(user * 10 + minute) + "," + ts + "\n";
  }
  return s;
}

class WindowProjectionTest : public BatchFixture {
 protected:
  Pipeline MakePipeline() const {
    const std::string src = "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('" +
                            Path("drop") + "', format => 'csv');\n";
    auto flow = [](const std::string& name, const std::string& select, const std::string& group) {
      return "CREATE STREAMING TABLE " + name + " AS SELECT " + select +
             " FROM STREAM(raw) WATERMARK ts DELAY OF INTERVAL 1 MINUTE GROUP BY " + group +
             ";\n";
    };
    return ParsePipeline(
        src + flow("whole", "window, user_id, count(*) AS n", "window(ts, '10 minutes'), user_id") +
        flow("starts", "window.start AS ws, user_id, count(*) AS n",
             "window(ts, '10 minutes'), user_id") +
        flow("ends", "window.end AS we, sum(amount) AS total", "window(ts, '10 minutes')") +
        flow("bare", "user_id, count(*) AS n, sum(amount) AS total",
             "window(ts, '10 minutes'), user_id") +
        flow("hop_starts", "window.start AS ws, count(*) AS n",
             "window(ts, '10 minutes', '5 minutes')") +
        "CREATE STREAMING TABLE tvf_starts AS SELECT window_start, count(*) AS n FROM "
        "TUMBLE(TABLE STREAM(raw), DESCRIPTOR(ts), INTERVAL '10' MINUTES) "
        "WATERMARK ts DELAY OF INTERVAL 1 MINUTE GROUP BY window_start;\n");
  }

  // The windows the watermark (max event time - delay) has closed, per user.
  std::string Closed(const std::string& select) const {
    const std::string all = "read_csv(" + QuoteString(Path("drop") + "/*.csv") + ")";
    const std::string w = std::to_string(kWindowUs);
    return "WITH e AS (SELECT user_id, amount, (epoch_us(ts) // " + w + ") * " + w +
           " AS ws FROM " + all + "), closed AS (SELECT * FROM e WHERE ws + " + w +
           " <= (SELECT max(epoch_us(ts)) - " + std::to_string(kDelayUs) + " FROM " + all +
           ")) " + select;
  }

  void ExpectAllForms() {
    const std::string w = std::to_string(kWindowUs);
    auto check = [&](const std::string& dataset, const std::string& actual_sql,
                     const std::string& expected_sql) {
      SCOPED_TRACE(dataset);
      auto actual = Oracle(actual_sql);
      auto expected = Oracle(Closed(expected_sql));
      ASSERT_TRUE(actual && expected);
      EXPECT_TRUE(TablesEqualUnordered(*expected, *actual, /*check_types=*/false))
          << "expected " << expected->ToString() << "\nactual " << actual->ToString();
    };
    auto stored = [&](const std::string& dataset) {
      return "read_parquet(" + QuoteString(root() + "/" + dataset + "/current/*.parquet") + ")";
    };
    check("whole", "SELECT epoch_us(\"window\".start) AS ws, user_id, n FROM " + stored("whole"),
          "SELECT ws, user_id, count(*) AS n FROM closed GROUP BY ws, user_id");
    check("starts", "SELECT epoch_us(ws) AS ws, user_id, n FROM " + stored("starts"),
          "SELECT ws, user_id, count(*) AS n FROM closed GROUP BY ws, user_id");
    check("ends", "SELECT epoch_us(we) AS we, total FROM " + stored("ends"),
          "SELECT ws + " + w + " AS we, sum(amount) AS total FROM closed GROUP BY ws");
    check("bare", "SELECT user_id, n, total FROM " + stored("bare"),
          "SELECT user_id, count(*) AS n, sum(amount) AS total FROM closed GROUP BY ws, user_id");
    check("tvf_starts", "SELECT epoch_us(window_start) AS ws, n FROM " + stored("tvf_starts"),
          "SELECT ws, count(*) AS n FROM closed GROUP BY ws");
    // Hopping: 10-minute windows every 5 minutes; each event is in two.
    {
      SCOPED_TRACE("hop_starts");
      const std::string all = "read_csv(" + QuoteString(Path("drop") + "/*.csv") + ")";
      const std::string slide = std::to_string(kWindowUs / 2);
      auto actual = Oracle("SELECT epoch_us(ws) AS ws, n FROM " + stored("hop_starts"));
      auto expected = Oracle(
          "WITH e AS (SELECT (epoch_us(ts) // " + slide + ") * " + slide + " - k * " + slide +
          " AS ws FROM " + all + ", range(2) r(k)) SELECT ws, count(*) AS n FROM e WHERE ws + " +
          w + " <= (SELECT max(epoch_us(ts)) - " + std::to_string(kDelayUs) + " FROM " + all +
          ") GROUP BY ws");
      ASSERT_TRUE(actual && expected);
      EXPECT_TRUE(TablesEqualUnordered(*expected, *actual, /*check_types=*/false))
          << "expected " << expected->ToString() << "\nactual " << actual->ToString();
    }
  }
};

TEST_F(WindowProjectionTest, EveryProjectionOfTheWindowEmitsClosedWindowsAcrossRuns) {
  const Pipeline p = MakePipeline();
  // Run 1: minutes 0..14 -> watermark 0:13, window [0:00, 0:10) closes.
  WriteFile("drop/a.csv", Csv({{1, 0}, {2, 3}, {1, 7}, {1, 12}, {2, 14}}));
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  ASSERT_NE(ReadDataset("bare"), nullptr);
  EXPECT_GT(ReadDataset("bare")->num_rows(), 0);  // the window that closed was emitted
  ExpectAllForms();
  // Run 2: a later file moves the watermark to 0:40; two more windows close.
  WriteFile("drop/b.csv", Csv({{3, 21}, {1, 25}, {2, 33}, {3, 41}}));
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  ExpectAllForms();
  // Run 3: nothing new changes nothing.
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  ExpectAllForms();
  // The bare form's stored table has only the columns the SELECT names.
  auto bare = ReadDataset("bare");
  ASSERT_NE(bare, nullptr);
  EXPECT_EQ(bare->schema()->num_fields(), 3);
  EXPECT_EQ(bare->schema()->GetFieldIndex("__thund_window_end"), -1);
}

}  // namespace
}  // namespace thund::native::testing
