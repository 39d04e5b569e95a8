// End-to-end tests of the `thund` binary: exit codes, output formats, fmt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "testing/run_command.h"
#include "thund/pipeline_file.h"

namespace thund {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::RunThund;
using testing::ShellQuote;

namespace fs = std::filesystem;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("thund-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  CommandResult Thund(const std::string& args) { return RunThund(args); }

  fs::path dir_;
};

// orders -> totals -> top; orders -> audit. Valid.
constexpr const char* kValid = R"(name: shop
datasets:
  - name: orders
    kind: materialized_view
  - name: totals
    kind: materialized_view
  - name: top
    kind: materialized_view
  - name: audit
    kind: materialized_view
flows:
  - name: top
    target: top
    sql: SELECT * FROM totals ORDER BY total DESC LIMIT 3
  - name: audit
    target: audit
    sql: SELECT count(*) AS n FROM orders
  - name: totals
    target: totals
    sql: SELECT customer, sum(amount) AS total FROM orders GROUP BY customer
  - name: orders
    target: orders
    sql: SELECT * FROM read_csv('orders.csv')
)";

// Two problems: duplicate dataset, flow into unknown target.
constexpr const char* kInvalid = R"(name: broken
datasets:
  - name: a
    kind: materialized_view
  - name: a
    kind: materialized_view
flows:
  - name: a
    target: a
    sql: SELECT 1 AS x
  - name: b
    target: nowhere
    sql: SELECT 2 AS y
)";

TEST_F(CliTest, VersionNamesLinkedLibraries) {
  auto r = Thund("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("thund 0.1.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("arrow 26."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("duckdb v1.4.4"), std::string::npos) << r.out;
}

TEST_F(CliTest, HelpOnEveryCommand) {
  for (const char* cmd : {"", "check ", "plan ", "fmt "}) {
    auto r = Thund(std::string(cmd) + "--help");
    EXPECT_EQ(r.exit_code, 0) << cmd << r.err;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd << r.out;
  }
}

TEST_F(CliTest, WrongUsageExits2WithUsage) {
  for (const char* args : {"", "frobnicate", "check", "check --format xml x.yaml", "plan a b",
                           "fmt --to cobol x.yaml", "fmt --write --check x.yaml"}) {
    auto r = Thund(args);
    EXPECT_EQ(r.exit_code, 2) << "args: " << args << "\n" << r.out << r.err;
    EXPECT_FALSE((r.out + r.err).empty()) << args;
  }
}

TEST_F(CliTest, CheckValidExits0) {
  auto r = Thund("check " + ShellQuote(Write("ok.yaml", kValid)));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok"), std::string::npos);
}

TEST_F(CliTest, CheckInvalidExits1WithEveryProblemAndLocation) {
  std::string path = Write("bad.yaml", kInvalid);
  auto r = Thund("check " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // Both problems, each at its line in the file.
  EXPECT_NE(r.err.find(path + ":5:"), std::string::npos) << r.err;   // second 'a'
  EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(path + ":11:"), std::string::npos) << r.err;  // flow b
}

TEST_F(CliTest, CheckJsonListsDiagnostics) {
  std::string path = Write("bad.yaml", kInvalid);
  auto r = Thund("check --format json " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["diagnostics"].is_array());
  ASSERT_GE(j["diagnostics"].size(), 2u);
  EXPECT_EQ(j["errors"].get<int>(), static_cast<int>(j["diagnostics"].size()) - j["warnings"].get<int>());
  bool saw_dup = false, saw_target = false;
  for (const auto& d : j["diagnostics"]) {
    for (const char* key : {"severity", "message", "hint", "file", "line", "column", "dataset", "flow"}) {
      EXPECT_TRUE(d.contains(key)) << key << " missing in " << d.dump();
    }
    EXPECT_EQ(d["file"], path);
    if (d["dataset"] == "a" && d["line"] == 5) saw_dup = true;
    if (d["flow"] == "b" && d["line"] == 11) saw_target = true;
  }
  EXPECT_TRUE(saw_dup) << r.out;
  EXPECT_TRUE(saw_target) << r.out;
}

TEST_F(CliTest, CheckMissingFileAndSyntaxError) {
  auto r = Thund("check " + ShellQuote((dir_ / "nope.yaml").string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nope.yaml"), std::string::npos) << r.err;

  std::string path = Write("syntax.yaml", "name: x\ndatasets:\n  - name: [unclosed\n");
  r = Thund("check " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(path + ":"), std::string::npos) << r.err;
}

TEST_F(CliTest, PlanRespectsDependencies) {
  auto r = Thund("plan --format json " + ShellQuote(Write("ok.yaml", kValid)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::map<std::string, int> step;
  for (const auto& f : j["flows"]) step[f["flow"]] = f["step"];
  ASSERT_EQ(step.size(), 4u);
  EXPECT_LT(step["orders"], step["totals"]);
  EXPECT_LT(step["totals"], step["top"]);
  EXPECT_LT(step["orders"], step["audit"]);
  // Ties are broken by name: after orders both audit and totals are ready.
  EXPECT_LT(step["audit"], step["totals"]);
  for (const auto& f : j["flows"]) {
    EXPECT_EQ(f["type"], "batch");
    EXPECT_FALSE(f["capabilities"].empty());
  }

  auto human = Thund("plan " + ShellQuote(Write("ok2.yaml", kValid)));
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_LT(human.out.find("orders ->"), human.out.find("totals ->")) << human.out;
}

TEST_F(CliTest, PlanOfInvalidPipelineExits1) {
  auto r = Thund("plan " + ShellQuote(Write("bad.yaml", kInvalid)));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;
}

TEST_F(CliTest, FmtIsCanonicalAndIdempotent) {
  std::string path = Write("ok.yaml", kValid);
  auto once = Thund("fmt " + ShellQuote(path));
  ASSERT_EQ(once.exit_code, 0) << once.err;
  // Same pipeline as the input.
  ParseResult a = ParsePipelineFile(kValid, "a");
  ParseResult b = ParsePipelineFile(once.out, "b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.pipeline, b.pipeline);
  // Formatting the formatted text changes nothing.
  std::string path2 = Write("canonical.yaml", once.out);
  auto twice = Thund("fmt " + ShellQuote(path2));
  EXPECT_EQ(twice.out, once.out);
  EXPECT_EQ(Thund("fmt --check " + ShellQuote(path2)).exit_code, 0);
  // The hand-written input is not canonical (flows out of order is fine, but
  // keys differ in layout); --write makes it so.
  if (once.out != kValid) {
    EXPECT_EQ(Thund("fmt --check " + ShellQuote(path)).exit_code, 1);
    EXPECT_EQ(Thund("fmt --write " + ShellQuote(path)).exit_code, 0);
    EXPECT_EQ(testing::ReadAll(path), once.out);
  }
}

TEST_F(CliTest, FmtRefusesBrokenFile) {
  auto r = Thund("fmt " + ShellQuote(Write("bad.yaml", "name: x\nflows: 3\n")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("flows"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace thund

namespace thund {
namespace {

// The SQL surface through the CLI: SDP projects, .sql files, conversions.
class CliSqlTest : public CliTest {};

const std::string kSdp = std::string(THUND_SOURCE_DIR) + "/tests/data/sdp";

TEST_F(CliSqlTest, ChecksAndPlansSdpProjects) {
  for (const auto& entry : fs::directory_iterator(kSdp + "/positive/projects")) {
    auto r = Thund("check " + ShellQuote(entry.path().string()));
    EXPECT_EQ(r.exit_code, 0) << entry.path() << "\n" << r.err;
    auto plan = Thund("plan --format json " + ShellQuote(entry.path().string()));
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_FALSE(nlohmann::json::parse(plan.out)["flows"].empty());
  }
}

TEST_F(CliSqlTest, SqlErrorPointsAtLineAndColumnWithCaret) {
  std::string path = kSdp + "/negative/flow_without_by_name.sql";
  auto r = Thund("check " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(path + ":3:32"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("BY NAME"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("^"), std::string::npos) << r.err;
}

TEST_F(CliSqlTest, FmtConvertsBetweenSurfacesLosslessly) {
  std::string yaml_path = Write("ok.yaml", kValid);
  auto sql = Thund("fmt --to sql " + ShellQuote(yaml_path));
  ASSERT_EQ(sql.exit_code, 0) << sql.err;
  std::string sql_path = Write("ok.sql", sql.out);
  // .sql files format to SQL by default, idempotently.
  auto again = Thund("fmt " + ShellQuote(sql_path));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, sql.out);
  // Back to YAML: the same pipeline as the original file.
  auto yaml = Thund("fmt --to yaml " + ShellQuote(sql_path));
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  ParseResult a = ParsePipelineFile(kValid, "a");
  ParseResult b = ParsePipelineFile(yaml.out, "b");
  ASSERT_TRUE(a.ok() && b.ok()) << yaml.out;
  EXPECT_EQ(a.pipeline, b.pipeline);
}

}  // namespace
}  // namespace thund

namespace thund {
namespace {

class ExplainCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("thund-explain-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  testing::CommandResult Thund(const std::string& args) {
    return testing::RunCommand(testing::ShellQuote(THUND_BINARY) + " " + args);
  }
  std::filesystem::path dir_;
};

constexpr const char* kExplainSql = R"sql(
CREATE MATERIALIZED VIEW orders (id BIGINT, customer STRING, amount DOUBLE) AS
SELECT 1 AS id, 'ada' AS customer, 2.5 AS amount;
CREATE MATERIALIZED VIEW totals AS
SELECT customer, sum(amount) AS total FROM orders GROUP BY customer;
CREATE STREAMING TABLE events AS SELECT * FROM STREAM read_files('/tmp/none', format => 'csv');
)sql";

TEST_F(ExplainCliTest, ShowsEachFlowsPlanWithSchemasFromItsInputs) {
  const std::string path = Write("p.sql", kExplainSql);
  auto r = Thund("explain " + testing::ShellQuote(path) + " totals");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The plan of totals, bound over orders' declared schema.
  EXPECT_NE((r.out + r.err).find("flow totals -> totals (batch)"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("Aggregate keys=[customer] aggs=[sum(amount) AS total]"),
            std::string::npos)
      << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("-> (customer string, total double)"), std::string::npos) << r.out << r.err;
  EXPECT_EQ((r.out + r.err).find("flow orders"), std::string::npos) << r.out << r.err;  // only the one asked

  auto j = Thund("explain " + testing::ShellQuote(path) + " --format json");
  ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
  auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["flows"].size(), 3u);
  bool saw_totals = false;
  for (const auto& f : doc["flows"]) {
    if (f["flow"] != "totals") continue;
    saw_totals = true;
    EXPECT_EQ(f["plan"]["kind"], "Project");
    EXPECT_EQ(f["plan"]["schema"][1]["name"], "total");
    EXPECT_EQ(f["plan"]["schema"][1]["type"], "double");
  }
  EXPECT_TRUE(saw_totals);

  auto missing = Thund("explain " + testing::ShellQuote(path) + " nope");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE((missing.out + missing.err).find("no flow 'nope'"), std::string::npos) << missing.out << missing.err;
}

TEST_F(ExplainCliTest, ShowsTheIncrementalOperatorAndStateOfEachNodeOrWhyAFlowFallsBack) {
  const std::string path = Write("s.sql", R"sql(
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid');
CREATE STREAMING TABLE per_window WITH (mode = 'incremental') AS
SELECT auction, window.end AS we, count(*) AS n FROM STREAM(bids)
WATERMARK date_time DELAY OF INTERVAL 2 SECONDS GROUP BY auction, window(date_time, '10 seconds');
CREATE STREAMING TABLE medians WITH (output_mode = 'update') AS
SELECT channel, median(price) AS m FROM STREAM(bids) GROUP BY channel;
CREATE STREAMING TABLE distinct_bidders AS SELECT DISTINCT ON (bidder) bidder FROM STREAM(bids);
)sql");
  auto r = Thund("explain " + testing::ShellQuote(path) + " per_window");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("incremental mode"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Aggregate  -> partial aggregate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("state: one row of partials per (window, group)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Scan bids  -> stream scan"), std::string::npos) << r.out;
  // Flows that set no mode: Recompute, unless the run's mode says otherwise.
  auto plain = Thund("explain " + testing::ShellQuote(path) + " medians");
  EXPECT_NE(plain.out.find("Recompute mode"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("incremental operators"), std::string::npos) << plain.out;
  auto inc = Thund("explain " + testing::ShellQuote(path) + " --streaming-mode incremental");
  ASSERT_EQ(inc.exit_code, 0) << inc.out << inc.err;
  EXPECT_NE(inc.out.find("rows aggregate"), std::string::npos) << inc.out;
  EXPECT_NE(inc.out.find("state: every input row"), std::string::npos) << inc.out;
  EXPECT_NE(inc.out.find("falls back to Recompute: Distinct"), std::string::npos) << inc.out;
  auto bad = Thund("explain " + testing::ShellQuote(path) + " --streaming-mode fast");
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
}

// Whether a windowed flow keeps per-pane partials or raw rows: explain says
// what the run then does (both ask native::ChooseWindowPanes).
TEST_F(ExplainCliTest, SaysWhetherAWindowedFlowKeepsPanesAsTheRunDoes) {
  const std::string path = Write("panes.sql", R"sql(
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 3, rows_per_batch => 500, total_rows => 3000, events_per_second => 300);
CREATE STREAMING TABLE hot WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT a.auction, a.num FROM (
  SELECT auction, count(*) AS num, window_start AS ws, window_end AS we
  FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '6' SECONDS)
  GROUP BY auction, window_start, window_end) AS a
JOIN (SELECT max(c.num) AS top, c.ws, c.we FROM (
  SELECT count(*) AS num, window_start AS ws, window_end AS we
  FROM HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS, INTERVAL '6' SECONDS)
  GROUP BY auction, window_start, window_end) AS c GROUP BY c.ws, c.we) AS m
ON a.ws = m.ws AND a.we = m.we AND a.num >= m.top;
CREATE STREAMING TABLE means WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT x.auction, x.ws, x.mean, y.n FROM (
  SELECT auction, window_start AS ws, avg(price) AS mean
  FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '4' SECONDS)
  GROUP BY auction, window_start, window_end) AS x
JOIN (SELECT window_start AS ws, count(*) AS n
  FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '4' SECONDS)
  GROUP BY window_start, window_end) AS y ON x.ws = y.ws;
)sql");
  auto hot = Thund("explain " + testing::ShellQuote(path) + " hot");
  ASSERT_EQ(hot.exit_code, 0) << hot.out << hot.err;
  EXPECT_NE(hot.out.find("window panes, kept instead of the raw rows: per-pane partials of bids"),
            std::string::npos)
      << hot.out;
  EXPECT_NE(hot.out.find("panes of 2000 ms, windows of 6000 ms every 2000 ms"), std::string::npos)
      << hot.out;
  EXPECT_NE(hot.out.find("1 derived table(s) share them"), std::string::npos) << hot.out;
  auto means = Thund("explain " + testing::ShellQuote(path) + " means");
  ASSERT_EQ(means.exit_code, 0) << means.out << means.err;
  EXPECT_NE(means.out.find("no window panes (the raw rows are kept): Aggregate: aggregate "
                           "avg(price)"),
            std::string::npos)
      << means.out;
  // The run agrees, flow by flow.
  auto run = Thund("run " + testing::ShellQuote(path) + " --storage " +
                   testing::ShellQuote((dir_ / "store").string()));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto line_of = [&](const std::string& flow) {
    const size_t at = run.out.find("flow '" + flow + "': done");
    return at == std::string::npos ? std::string() : run.out.substr(at, run.out.find('\n', at) - at);
  };
  EXPECT_NE(line_of("hot").find("windowed (window panes) operator"), std::string::npos) << run.out;
  EXPECT_NE(line_of("means").find("windowed operator"), std::string::npos) << run.out;
}

TEST_F(ExplainCliTest, FunctionChecksBelongToTheBackendThatRunsTheFlow) {
  // initcap is Spark's; DuckDB has no function of that name.
  const std::string path = Write(
      "p.sql", "CREATE MATERIALIZED VIEW h AS SELECT initcap('ada lovelace') AS title;\n");
  auto native = Thund("check " + testing::ShellQuote(path));
  EXPECT_EQ(native.exit_code, 1) << native.out << native.err;
  EXPECT_NE((native.out + native.err).find("initcap"), std::string::npos) << native.out << native.err;
  auto spark = Thund("check " + testing::ShellQuote(path) + " --backend spark");
  EXPECT_EQ(spark.exit_code, 0) << spark.out << spark.err;
  // Graph rules still hold for Spark.
  const std::string bad = Write("bad.sql", "CREATE MATERIALIZED VIEW h AS SELECT * FROM nowhere;\n");
  EXPECT_EQ(Thund("check " + testing::ShellQuote(bad) + " --backend spark").exit_code, 1);
}

}  // namespace
}  // namespace thund
