// The part files of append-only streaming datasets (backend/native/part_tiers.h):
// the merge rule's bounds over random trigger sizes, and runs with merging on
// and off (the plain twin) holding the same rows in the same order, resumed
// across runs, with few files instead of one per trigger.
#include <gtest/gtest.h>

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

// Appends random part sizes and applies the rule after each, as staging does:
// every part keeps at least twice the rows of the next newer one, the count
// stays logarithmic, and the rows rewritten stay within O(R log R).
TEST(PartTiersRule, PartsStayLogarithmicAndRowsAreRewrittenLogarithmicallyOften) {
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    std::vector<int64_t> parts;
    int64_t total = 0, rewritten = 0;
    for (int step = 0; step < 3000; ++step) {
      // Mostly similar sizes, sometimes empty-ish or ten times larger.
      int64_t rows = 50 + static_cast<int64_t>(rng() % 100);
      if (rng() % 10 == 0) rows = 1 + static_cast<int64_t>(rng() % 5);
      if (rng() % 17 == 0) rows *= 10;
      parts.push_back(rows);
      total += rows;
      const size_t n = NewestToMerge(parts);
      if (n >= 2) {
        int64_t merged = 0;
        for (size_t i = parts.size() - n; i < parts.size(); ++i) merged += parts[i];
        rewritten += merged;
        parts.resize(parts.size() - n);
        parts.push_back(merged);
      }
      int64_t sum = 0;
      for (size_t i = 0; i < parts.size(); ++i) {
        if (i + 1 < parts.size()) {
          ASSERT_GE(parts[i], 2 * parts[i + 1]) << "step " << step;
        }
        sum += parts[i];
      }
      ASSERT_EQ(sum, total);
      ASSERT_LE(parts.size(), static_cast<size_t>(std::log2(static_cast<double>(total)) + 2));
    }
    EXPECT_LE(rewritten, total * static_cast<int64_t>(std::log2(static_cast<double>(total)) + 1));
  }
}

TEST(PartTiersRule, NothingToMergeForOneOrADecreasingRun) {
  EXPECT_EQ(NewestToMerge({}), 0u);
  EXPECT_EQ(NewestToMerge({5}), 0u);
  EXPECT_EQ(NewestToMerge({100, 40, 10}), 1u);
  EXPECT_EQ(NewestToMerge({100, 10, 10}), 2u);
  EXPECT_EQ(NewestToMerge({30, 10, 10}), 3u);
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
    EXPECT_LE(merged_parts.size(),
              static_cast<size_t>(std::log2(static_cast<double>(plain->num_rows())) + 1));
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
