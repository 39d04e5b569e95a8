// `thund run --streaming-mode recompute|incremental`: the run-wide mode of
// streaming flows that set none (a flow's own mode wins), and a bad value is a
// usage error naming the allowed values.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/table_compare.h"
#include "testing/run_command.h"

namespace thund::testing {
namespace {

class StreamingModeCliTest : public ::testing::Test {
 protected:
  std::string Thund(const std::string& args) { return std::string(THUND_BINARY) + " " + args; }

  // Two DISTINCT ON flows (a shape the incremental mode runs in Recompute mode,
  // with a fallback event): `plain` sets no mode, `pinned` sets recompute.
  std::string Pipeline() {
    const std::string file = dir_.File("modes.sql");
    std::ofstream(file)
        << "CREATE STREAMING TABLE ev AS SELECT * FROM STREAM "
           "read_generator(kind => 'keyed_events', rows_per_batch => 10, total_rows => 20);\n"
           "CREATE STREAMING TABLE plain WITH (streaming = true) AS "
           "SELECT DISTINCT ON (key) key "
           "FROM STREAM(ev);\n"
           "CREATE STREAMING TABLE pinned WITH (mode = 'recompute') AS "
           "SELECT DISTINCT ON (key) key "
           "FROM STREAM(ev);\n";
    return file;
  }

  // The flows that got a fallback run event.
  std::set<std::string> FallbackFlows(const std::string& extra) {
    auto r = RunCommand(Thund("run " + ShellQuote(Pipeline()) + " --storage " +
                              ShellQuote(dir_.File("store-" + std::to_string(runs_++))) +
                              " --events json " + extra));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::set<std::string> out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_object() && j["event"] == "fallback") out.insert(j["flow"].get<std::string>());
    }
    return out;
  }

  engine::testing::TempDir dir_;
  int runs_ = 0;
};

TEST_F(StreamingModeCliTest, TheRunDefaultAppliesToFlowsThatSetNoMode) {
  EXPECT_EQ(FallbackFlows(""), std::set<std::string>{});
  EXPECT_EQ(FallbackFlows("--streaming-mode recompute"), std::set<std::string>{});
  // The flow that takes the default asks for incremental and falls back (DISTINCT ON),
  // saying so; the flow pinned to recompute is not affected.
  EXPECT_EQ(FallbackFlows("--streaming-mode incremental"), std::set<std::string>{"plain"});
}

TEST_F(StreamingModeCliTest, ABadValueIsAUsageError) {
  auto r = RunCommand(Thund("run " + ShellQuote(Pipeline()) + " --streaming-mode fast"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--streaming-mode"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("recompute"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("incremental"), std::string::npos) << r.err;
  r = RunCommand(Thund("run --help"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--streaming-mode"), std::string::npos) << r.out;
}

TEST_F(StreamingModeCliTest, PlanShowsTheModeAndTheLateRowsTable) {
  const std::string file = dir_.File("late.sql");
  std::ofstream(file)
      << "CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => "
         "'nexmark_bid', total_rows => 100);\n"
         "CREATE STREAMING TABLE late_bids;\n"
         "CREATE STREAMING TABLE max_price WITH (mode = 'incremental', late_rows = 'late_bids') "
         "AS SELECT window.start, max(price) AS p FROM STREAM bids WATERMARK date_time DELAY OF "
         "INTERVAL 5 SECONDS GROUP BY window(date_time, '10 seconds');\n"
         "CREATE MATERIALIZED VIEW a_late_count AS SELECT count(*) AS n FROM late_bids;\n";
  auto r = RunCommand(Thund("plan " + ShellQuote(file) + " --format json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> order;
  for (const auto& f : j["flows"]) {
    order.push_back(f["flow"].get<std::string>());
    if (f["flow"] == "max_price") {
      EXPECT_EQ(f["mode"], "incremental");
      EXPECT_EQ(f["late_rows"], "late_bids");
    }
    if (f["flow"] == "bids") {
      EXPECT_EQ(f["mode"], "recompute");  // no mode set, no run default in a plan
      EXPECT_FALSE(f.contains("late_rows"));
    }
  }
  // The reader of the late-rows table comes after the flow that fills it.
  EXPECT_EQ(order, (std::vector<std::string>{"bids", "max_price", "a_late_count"})) << r.out;
  r = RunCommand(Thund("plan " + ShellQuote(file)));
  EXPECT_NE(r.out.find("late rows to late_bids"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace thund::testing
