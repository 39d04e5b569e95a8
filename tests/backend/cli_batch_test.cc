// The `thund run | show | query | runs` commands: output and exit codes
// (0 ok, 1 failed flow / bad input, 2 usage).
#include <gmock/gmock.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "batch_fixture.h"
#include "testing/run_command.h"

namespace thund::native::testing {
namespace {

using ::testing::HasSubstr;
using thund::testing::RunCommand;
using thund::testing::ShellQuote;

class CliBatchTest : public BatchFixture {
 protected:
  void SetUp() override {
    WriteFile("in.csv", "id,v\n1,10\n2,-3\n3,30\n");
    WriteFile("p.yaml", "name: clitest\n"
                        "storage: " + root() + "\n"
                        "datasets:\n"
                        "  - name: clean\n"
                        "    expectations:\n"
                        "      - {name: positive, expect: v > 0, on_violation: drop}\n"
                        "    query: SELECT * FROM read_csv('" + Path("in.csv") + "')\n"
                        "  - name: total\n"
                        "    query: SELECT sum(v) AS s, count(*) AS n FROM clean\n"
                        "  - name: big\n"
                        "    kind: view\n"
                        "    query: SELECT * FROM clean WHERE v > 20\n");
  }
  thund::testing::CommandResult Thund(const std::string& args) const {
    return RunCommand(std::string(THUND_BINARY) + " " + args);
  }
  std::string P() const { return ShellQuote(Path("p.yaml")); }
};

TEST_F(CliBatchTest, RunPrintsEventsAndSummaryAndExitsZero) {
  auto r = Thund("run " + P());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("flow 'clean': done, 3 rows in, 2 written"));
  EXPECT_THAT(r.out, HasSubstr("expectation 'positive' on clean (drop): 1 of 3 rows violate it"));
  EXPECT_THAT(r.out, HasSubstr("of pipeline 'clitest': completed"));
  EXPECT_DATASET_MATCHES("total", "SELECT sum(v) AS s, count(*) AS n FROM read_csv('" +
                                      Path("in.csv") + "') WHERE v > 0");
  auto again = Thund("run " + P());
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_THAT(again.out, HasSubstr("up_to_date"));
}

TEST_F(CliBatchTest, RunEventsJsonAreJsonLines) {
  auto r = Thund("run " + P() + " --events json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int lines = 0;
  bool finished = false;
  std::stringstream ss(r.out);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    ++lines;
    finished |= j["event"] == "flow_finished" && j["flow"] == "total";
  }
  EXPECT_GT(lines, 4);
  EXPECT_TRUE(finished);
  EXPECT_THAT(r.err, HasSubstr("completed"));  // the summary goes to stderr
}

TEST_F(CliBatchTest, FailedFlowExitsOne) {
  WriteFile("in.csv", "id,v\n1,10\n");
  WriteFile("bad.yaml", "name: bad\nstorage: " + root() + "\n"
                        "datasets:\n  - name: t\n    query: SELECT nope FROM read_csv('" +
                            Path("in.csv") + "')\n");
  auto r = Thund("run " + ShellQuote(Path("bad.yaml")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
  EXPECT_THAT(r.out, HasSubstr("flow 't' (" + Path("bad.yaml")));
}

TEST_F(CliBatchTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Thund("run").exit_code, 2);
  auto unknown = Thund("run " + P() + " --refresh nope");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("'nope'"));
  EXPECT_EQ(Thund("run " + P() + " --events loud").exit_code, 2);
  EXPECT_EQ(Thund("show clean").exit_code, 2);  // neither PATH nor --storage
  EXPECT_EQ(Thund("runs").exit_code, 2);
  EXPECT_EQ(Thund("query " + P()).exit_code, 2);
}

TEST_F(CliBatchTest, ShowPrintsAndExportsADataset) {
  ASSERT_EQ(Thund("run " + P()).exit_code, 0);
  auto table = Thund("show clean " + P());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("id | v"));
  EXPECT_THAT(table.out, HasSubstr("(2 rows)"));
  auto csv = Thund("show total --storage " + ShellQuote(root()) + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "\"s\",\"n\"\n40,2\n");
  auto json = Thund("show clean " + P() + " --format json --limit 1");
  EXPECT_EQ(json.out, "{\"id\":1,\"v\":10}\n");
  auto pq = Thund("show clean " + P() + " --format parquet -o " + ShellQuote(Path("c.parquet")));
  ASSERT_EQ(pq.exit_code, 0) << pq.err;
  EXPECT_DATASET_MATCHES("clean", "SELECT * FROM read_parquet('" + Path("c.parquet") + "')");
  // A view is computed from the stored datasets it reads.
  auto view = Thund("show big " + P() + " --format csv");
  ASSERT_EQ(view.exit_code, 0) << view.err;
  EXPECT_EQ(view.out, "\"id\",\"v\"\n3,30\n");
  auto missing = Thund("show nope " + P());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("dataset 'nope' has no committed data"));
}

TEST_F(CliBatchTest, QueryRunsSqlOverStoredDatasets) {
  ASSERT_EQ(Thund("run " + P()).exit_code, 0);
  auto r = Thund("query " + P() + " " +
                 ShellQuote("SELECT c.id, t.s FROM clean c, total t ORDER BY c.id") +
                 " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "\"id\",\"s\"\n1,40\n3,40\n");
  auto bad = Thund("query " + P() + " " + ShellQuote("SELECT * FROM nowhere"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("nowhere"));
}

TEST_F(CliBatchTest, RunsListsThePastRuns) {
  auto none = Thund("runs " + P());
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_THAT(none.out, HasSubstr("no runs recorded"));
  ASSERT_EQ(Thund("run " + P()).exit_code, 0);
  WriteFile("bad.yaml", "name: bad\nstorage: " + root() + "\n"
                        "datasets:\n  - name: t\n    query: SELECT nope\n");
  EXPECT_EQ(Thund("run " + ShellQuote(Path("bad.yaml"))).exit_code, 1);
  auto r = Thund("runs " + P() + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> runs;
  std::stringstream ss(r.out);
  std::string line;
  while (std::getline(ss, line)) runs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["status"], "failed");  // newest first
  EXPECT_EQ(runs[1]["status"], "completed");
  EXPECT_EQ(runs[1]["computed"], 3);  // clean, total, and the view big
  // The history is plain data: DuckDB reads it directly.
  auto direct = Oracle("SELECT count(*) AS n FROM read_parquet('" + root() +
                       "/_thund/runs/*.parquet')");
  EXPECT_EQ(engine::testing::RowStrings(*direct)[0], "2");
  auto table = Thund("runs --storage " + ShellQuote(root()));
  EXPECT_THAT(table.out, HasSubstr("seconds"));
}

}  // namespace
}  // namespace thund::native::testing
