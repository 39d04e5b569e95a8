// `thund copy` as a user runs it: exit codes, messages and the summary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "keyed/keyed_test_util.h"
#include "testing/run_command.h"

namespace thund::engine::keyed {
namespace {

using testing::Oracle;
using testing::ReadTarget;
using testing::ScratchDir;
using thund::testing::CommandResult;
using thund::testing::RunCommand;
using thund::testing::RunThund;
using thund::testing::ShellQuote;

class CliCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = dir_ / "src.parquet";
    dst_ = dir_ / "dst";
    oracle_.Exec("COPY (SELECT i AS id, 'v' || i AS v FROM range(1000) t(i)) TO '" + src_ +
                 "' (FORMAT parquet)");
  }
  CommandResult Thund(const std::string& args) { return RunThund("copy " + args); }
  std::string Paths() const { return ShellQuote(src_) + " " + ShellQuote(dst_); }

  ScratchDir dir_;
  Oracle oracle_;
  std::string src_, dst_;
};

TEST_F(CliCopyTest, CopiesThenSkipsEverythingOnRerun) {
  CommandResult first =
      Thund(Paths() + " --checkpoint-keys id --format json --rows-per-file 300 --json");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto summary = nlohmann::json::parse(first.out);
  EXPECT_EQ(summary["rows_read"], 1000);
  EXPECT_EQ(summary["rows_written"], 1000);
  EXPECT_EQ(summary["files_written"], 4);
  EXPECT_EQ(summary["files_passed_through"], 0);
  EXPECT_NE(first.err.find("does not exist yet: no row is skipped"), std::string::npos)
      << first.err;

  CommandResult second = Thund(Paths() + " --checkpoint-keys id --format json");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("skipped as already written 1000"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("written 0"), std::string::npos) << second.out;
  EXPECT_EQ(oracle_.Diff("SELECT * FROM '" + src_ + "'", ReadTarget(dst_, FileFormat::kJson)), "");

  // Parquet into a new target: the source file is all new and is committed whole.
  CommandResult copied =
      Thund(ShellQuote(src_) + " " + ShellQuote(dir_ / "p") + " --checkpoint-keys id --json");
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  EXPECT_EQ(nlohmann::json::parse(copied.out)["files_passed_through"], 1);
  EXPECT_EQ(oracle_.Diff("SELECT * FROM '" + src_ + "'", ReadTarget(dir_ / "p")), "");
}

TEST_F(CliCopyTest, JoinThroughExtraSources) {
  const std::string names = dir_ / "names.csv";
  oracle_.Exec("COPY (SELECT i AS id, 'n' || i AS name FROM range(0, 1000, 2) t(i)) TO '" + names +
               "' (FORMAT csv, HEADER)");
  CommandResult r = Thund(Paths() + " --checkpoint-keys id --source names=" + ShellQuote(names) +
                          " --transform \"SELECT src.id, v, name FROM src JOIN names USING (id)\"" +
                          " --format json -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // --quiet
  EXPECT_EQ(oracle_.Diff("SELECT s.id, v, name FROM '" + src_ + "' s JOIN read_csv('" + names +
                             "') USING (id)",
                         "SELECT id, v, name FROM read_json('" + dst_ + "/*.json')"),
            "");
}

TEST_F(CliCopyTest, EveryBadOptionIsAUsageErrorWithAMessage) {
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"--checkpoint-keys ''", "the key list is empty"},
           {"--checkpoint-keys id,,v", "key #2 is an empty column name"},
           {"--checkpoint-keys id --buckets 0", "buckets must be > 0"},
           {"--checkpoint-keys id --buckets -3", "buckets must be > 0"},
           {"--checkpoint-keys id --threads 0", "threads must be > 0"},
           {"--checkpoint-keys id --batch-size 0", "batch_size must be > 0"},
           {"--checkpoint-keys id --batch-size -1", "batch_size must be > 0"},
           {"--checkpoint-keys id --duplicates last", "use 'first' or 'all'"},
           {"--checkpoint-keys id --null-keys keep", "use 'error' or 'drop'"},
           {"--checkpoint-keys id --key-match fuzzy", "use 'exact' or 'hash'"},
           {"--checkpoint-keys id --format xml", "use parquet, csv or json"},
           {"--checkpoint-keys id --rows-per-file 0", "--rows-per-file must be > 0"},
           {"--checkpoint-keys id --source bad", "expected NAME=PATH"},
           {"", "--checkpoint-keys is required"},
       }) {
    CommandResult r = Thund(Paths() + " " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(dst_)) << c.args;
  }
}

TEST_F(CliCopyTest, ProblemsFoundWhileRunningExitWithOne) {
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {Paths() + " --checkpoint-keys nope", "key column 'nope' is not a column"},
           {ShellQuote(dir_ / "missing.parquet") + " " + ShellQuote(dst_) + " --checkpoint-keys id",
            "does not exist"},
           {Paths() + " --checkpoint-keys id --transform 'SELEC 1'", "transform:"},
       }) {
    CommandResult r = Thund(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace thund::engine::keyed
