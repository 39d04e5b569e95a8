// The part files of append-only streaming datasets (backend/native/part_tiers.h):
// the merge rule's bounds over many triggers, and runs with merging on
// and off (the plain twin) holding the same rows in the same order, resumed
// across runs, with few files instead of one per trigger.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/native/part_tiers.h"
#include "batch_fixture.h"

namespace thund::native::testing {
namespace {

// Adds one part per trigger and merges as staging does: after T triggers at
// most (fan-in - 1) parts per power of the fan-in, each trigger's rows
// rewritten at most log_fan-in(T) times, and the parts always hold every
// trigger once, in order.
TEST(PartTiersRule, PartsAndRewritesStayLogarithmicInTriggers) {
  std::vector<int64_t> parts;  // triggers per part
  std::vector<int> rewrites;   // per trigger
  for (int t = 1; t <= 5000; ++t) {
    parts.push_back(1);
    rewrites.push_back(0);
    while (NewestMerge(parts)) {
      int64_t held = 0;
      for (size_t i = parts.size() - kPartFanIn; i < parts.size(); ++i) held += parts[i];
      for (int64_t k = 0; k < held; ++k) ++rewrites[rewrites.size() - 1 - static_cast<size_t>(k)];
      parts.resize(parts.size() - kPartFanIn);
      parts.push_back(held);
    }
    int64_t sum = 0;
    for (int64_t p : parts) sum += p;
    ASSERT_EQ(sum, t);
    const double levels = std::floor(std::log(static_cast<double>(t)) / std::log(8.0)) + 1;
    ASSERT_LE(static_cast<double>(parts.size()), (kPartFanIn - 1) * levels) << "trigger " << t;
    for (size_t i = 1; i < parts.size(); ++i) ASSERT_GE(parts[i - 1], parts[i]);
  }
  EXPECT_LE(*std::max_element(rewrites.begin(), rewrites.end()),
            static_cast<int>(std::log(5000.0) / std::log(8.0)));
}

TEST(PartTiersRule, OnlyEqualNewestPartsMerge) {
  EXPECT_FALSE(NewestMerge({}));
  EXPECT_FALSE(NewestMerge({1, 1, 1, 1, 1, 1, 1}));
  EXPECT_TRUE(NewestMerge({1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_TRUE(NewestMerge({64, 8, 8, 8, 8, 8, 8, 8, 8}));
  EXPECT_FALSE(NewestMerge({8, 1, 1, 1, 1, 1, 1, 1}));
}

constexpr const char* kSql = R"sql(
SET thund.stream.merge_parts = {merge};
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => 'keyed_events',
  seed => 7, rows_per_batch => 150, total_rows => 9000, keys => 30, events_per_second => 300);
CREATE STREAMING TABLE evens WITH (mode = 'incremental') AS
SELECT key, value, seq, event_time FROM STREAM(ev) WHERE value % 2 = 0;
CREATE STREAMING TABLE per_window WITH (mode = 'incremental', watermark = 'event_time') AS
SELECT window.start AS ws, key, count(*) AS n, sum(value) AS total
FROM STREAM(evens) GROUP BY window(event_time, '2 seconds'), key;
)sql";

class PartTiersRunTest : public BatchFixture {
 protected:
  // Runs the pipeline in pieces of `piece` triggers until it completes;
  // returns the number of runs.
  int RunInPieces(const std::string& merge, const std::string& store, int64_t piece) {
    std::string sql = kSql;
    sql.replace(sql.find("{merge}"), 7, merge);
    for (int run = 0; run < 40; ++run) {
      RunOptions o;
      o.storage_root = store;
      o.max_triggers = piece;
      RunSummary s = Run(ParsePipeline(sql), o);
      EXPECT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
      bool more = false;
      for (const auto& d : s.datasets) more |= d.reason.find(std::to_string(piece) + " trig") == 0;
      if (!more || s.status != RunPhase::kCompleted) return run + 1;
    }
    return 40;
  }
  // The committed version's part files of `dataset` (rows per part, in order).
  static std::vector<int64_t> Parts(const std::string& store, const std::string& dataset) {
    std::ifstream in(store + "/" + dataset + "/current/_manifest.json");
    nlohmann::json m = nlohmann::json::parse(in);
    std::vector<int64_t> out;
    for (const auto& f : m.at("files")) out.push_back(f.at("rows").get<int64_t>());
    return out;
  }
  std::shared_ptr<arrow::Table> Ordered(const std::string& store, const std::string& dataset) {
    // Rows in stored order: the parts as the manifest lists them, file by file.
    std::ifstream in(store + "/" + dataset + "/current/_manifest.json");
    nlohmann::json m = nlohmann::json::parse(in);
    std::string files;
    for (const auto& f : m.at("files")) {
      files += std::string(files.empty() ? "" : ", ") + "'" + store + "/" + dataset +
               "/current/" + f.at("file").get<std::string>() + "'";
    }
    return Oracle("SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet([" + files +
                  "], filename = true, file_row_number = true) ORDER BY list_position([" +
                  files + "], filename), file_row_number");
  }
};

// Merging parts changes where rows are stored, not which rows or their order:
// against the plain twin (one part per trigger), in pieces of a few triggers.
TEST_F(PartTiersRunTest, MergedPartsHoldTheSameRowsInOrderAsOnePartPerTrigger) {
  EXPECT_GE(RunInPieces("false", Path("plain"), 7), 8);
  EXPECT_GE(RunInPieces("true", Path("merged"), 7), 8);
  for (const std::string d : {"ev", "evens"}) {
    SCOPED_TRACE(d);
    auto plain = Ordered(Path("plain"), d);
    auto merged = Ordered(Path("merged"), d);
    ASSERT_GT(plain->num_rows(), 0);
    EXPECT_TRUE(plain->Equals(*merged)) << plain->num_rows() << " vs " << merged->num_rows();
    const auto plain_parts = Parts(Path("plain"), d);
    const auto merged_parts = Parts(Path("merged"), d);
    EXPECT_GE(plain_parts.size(), 50u);  // 60 triggers
    EXPECT_LE(merged_parts.size(), 2 * (kPartFanIn - 1));  // 60 = 7 x 8 + 4
  }
  EXPECT_TRUE(::thund::engine::testing::TablesEqualUnordered(
      *Ordered(Path("plain"), "per_window"), *Ordered(Path("merged"), "per_window"),
      /*check_types=*/true));
}

TEST_F(PartTiersRunTest, AnInvalidSwitchIsRefused) {
  std::string sql = kSql;
  sql.replace(sql.find("{merge}"), 7, "'maybe'");
  RunOptions o;
  o.storage_root = Path("bad");
  RunSummary s = Run(ParsePipeline(sql), o);
  EXPECT_NE(s.ToString().find("thund.stream.merge_parts = 'maybe' is not true or false"),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace thund::native::testing
