// What a keyed write refuses to run on: a target another keyed write holds
// or that changes under it (target_guard.h), and memory that runs out
// (an injected allocation failure: an error naming the step, never a crash).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/keyed/memory_pool.h"
#include "engine/keyed/target_guard.h"
#include "engine/keyed/zeroed_array.h"
#include "keyed/keyed_test_util.h"
#include "testing/run_command.h"

namespace thund::engine::keyed {
namespace {

using testing::Copy;
using testing::CopyRun;
using testing::Options;
using testing::Oracle;
using testing::ReadTarget;
using testing::ScratchDir;
namespace stdfs = std::filesystem;

class KeyedGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = dir_ / "src";
    dst_ = dir_ / "dst";
    stdfs::create_directories(src_);
    stdfs::create_directories(dst_);
    for (int f = 0; f < 3; ++f) {
      oracle_.Exec("COPY (SELECT i AS id, 'k' || i AS k, 'v' || i AS v FROM range(" +
                   std::to_string(f * 2000) + ", " + std::to_string((f + 1) * 2000) +
                   ") t(i)) TO '" + src_ + "/part-" + std::to_string(f) + ".parquet' " +
                   "(FORMAT parquet, ROW_GROUP_SIZE 500)");
    }
    // An earlier writer's rows: every third id.
    oracle_.Exec("COPY (SELECT * FROM read_parquet('" + src_ + "/*.parquet') WHERE id % 3 = 0) TO '" +
                 dst_ + "/earlier.parquet' (FORMAT parquet)");
  }

  // Runs a copy that calls `during` once its target's keys are loaded.
  CopyRun CopyWith(KeyedCopyOptions o, const std::function<void()>& during) {
    CopyRun run;
    bool called = false;
    run.result = RunKeyedCopy(std::make_shared<arrow::fs::LocalFileSystem>(), o,
                              [&](const KeyedEvent& e) {
                                run.events.push_back(e);
                                if (!called && e.kind == KeyedEvent::Kind::kPlacement) {
                                  called = true;
                                  during();
                                }
                              });
    return run;
  }

  ScratchDir dir_;
  Oracle oracle_;
  std::string src_, dst_;
};

TEST_F(KeyedGuardTest, ASecondKeyedWriteIntoTheSameTargetIsRefused) {
  auto held = TargetGuard::Make(std::make_shared<arrow::fs::LocalFileSystem>(), dst_, "other-run");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  CopyRun refused = Copy(Options(src_, dst_, {"id"}));
  ASSERT_FALSE(refused.result.ok());
  EXPECT_NE(refused.result.status().message().find("is being written by another keyed write"),
            std::string::npos)
      << refused.result.status().ToString();
  EXPECT_NE(refused.result.status().message().find("other-run"), std::string::npos)
      << refused.result.status().ToString();
  // Nothing written, nothing removed.
  EXPECT_EQ(oracle_.Int("SELECT count(*) FROM glob('" + dst_ + "/*.parquet')"), 1);
  held->reset();
  CopyRun ok = Copy(Options(src_, dst_, {"id"}));
  ASSERT_TRUE(ok.result.ok()) << ok.result.status().ToString();
  EXPECT_EQ(oracle_.Diff("SELECT * FROM read_parquet('" + src_ + "/*.parquet')", ReadTarget(dst_)),
            "");
}

TEST_F(KeyedGuardTest, AFileAddedRemovedOrChangedDuringTheWriteStopsItWithAClearError) {
  struct Case {
    const char* what;
    std::function<void(const std::string&)> change;
  };
  const std::string intruder = dir_ / "intruder.parquet";
  oracle_.Exec("COPY (SELECT 99999 AS id, 'k' AS k, 'v' AS v) TO '" + intruder +
               "' (FORMAT parquet)");
  for (const Case& c : std::vector<Case>{
           {"added",
            [&](const std::string& dst) { stdfs::copy_file(intruder, dst + "/late.parquet"); }},
           {"removed", [&](const std::string& dst) { stdfs::remove(dst + "/earlier.parquet"); }},
           {"changed",
            [&](const std::string& dst) {
              std::ofstream(dst + "/earlier.parquet", std::ios::app) << "x";
            }},
       }) {
    SCOPED_TRACE(c.what);
    const std::string dst = dir_ / (std::string("dst-") + c.what);
    stdfs::copy(dst_, dst, stdfs::copy_options::recursive);
    CopyRun run = CopyWith(Options(src_, dst, {"id"}), [&] { c.change(dst); });
    ASSERT_FALSE(run.result.ok());
    const std::string message = run.result.status().message();
    EXPECT_NE(message.find("changed while the keyed write ran"), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("was ") + c.what), std::string::npos) << message;
    EXPECT_TRUE(run.HasEvent(KeyedEvent::Kind::kTargetChanged)) << run.EventsText();
  }
  // Unchanged, the same write succeeds (its own files do not count).
  CopyRun fine = CopyWith(Options(src_, dst_, {"id"}), [] {});
  ASSERT_TRUE(fine.result.ok()) << fine.result.status().ToString();
}

TEST_F(KeyedGuardTest, OutOfMemoryAnywhereIsAnErrorNamingTheStepNeverACrash) {
  // The key set (integer keys, no row index) and the run's own key sets grow
  // through ZeroedArray; fail the n-th allocation, for n until a run passes.
  int failed = 0;
  for (int64_t n = 1; n <= 40; ++n) {
    SCOPED_TRACE(n);
    const std::string dst = dir_ / ("oom-" + std::to_string(n));
    stdfs::copy(dst_, dst, stdfs::copy_options::recursive);
    KeyedCopyOptions o = Options(src_, dst, {"id"});
    o.keyed.threads = 3;
    FailZeroedAllocationAfter(n);
    CopyRun run = Copy(o);
    FailZeroedAllocationAfter(0);
    if (run.result.ok()) {
      // The injected failure came after the last allocation: the rows are right.
      EXPECT_EQ(oracle_.Diff("SELECT * FROM read_parquet('" + src_ + "/*.parquet')",
                             ReadTarget(dst)),
                "");
      break;
    }
    ++failed;
    EXPECT_TRUE(run.result.status().IsOutOfMemory()) << run.result.status().ToString();
    const std::string message = run.result.status().message();
    EXPECT_TRUE(message.find("out of memory while") != std::string::npos ||
                message.find("no memory for") != std::string::npos)
        << message;
  }
  EXPECT_GT(failed, 0);
  // The string key's row index: its table allocation fails on a worker.
  KeyedCopyOptions o = Options(src_, dir_ / "oom-index", {"k"});
  stdfs::create_directories(dir_ / "oom-index");
  oracle_.Exec("COPY (SELECT * FROM read_parquet('" + src_ + "/*.parquet') WHERE id % 2 = 0) TO '" +
               dir_ / "oom-index" + "/earlier.parquet' (FORMAT parquet)");
  FailZeroedAllocationAfter(1);
  CopyRun index = Copy(o);
  FailZeroedAllocationAfter(0);
  ASSERT_FALSE(index.result.ok());
  EXPECT_TRUE(index.result.status().IsOutOfMemory()) << index.result.status().ToString();
}

TEST_F(KeyedGuardTest, ThePlainSwitchesOfThundCopyGiveTheSameRows) {
  using thund::testing::CommandResult;
  using thund::testing::RunCommand;
  using thund::testing::ShellQuote;
  const std::string expected = "SELECT * FROM read_parquet('" + src_ + "/*.parquet')";
  int i = 0;
  for (const std::string flags :
       {"", "--plain", "--no-settle --no-join", "--no-passthrough --no-direct-io",
        "--key-index table --no-memory-pool --no-huge-pages"}) {
    SCOPED_TRACE(flags);
    const std::string dst = dir_ / ("cli-" + std::to_string(i++));
    stdfs::copy(dst_, dst, stdfs::copy_options::recursive);
    CommandResult r = RunCommand(ShellQuote(THUND_BINARY) + " copy " + ShellQuote(src_) + " " +
                                 ShellQuote(dst) + " --checkpoint-keys k --json " + flags);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(oracle_.Diff(expected, ReadTarget(dst)), "");
    auto summary = nlohmann::json::parse(r.out);
    if (flags == "--plain") {
      EXPECT_EQ(summary["files_passed_through"], 0);
      EXPECT_EQ(summary["row_groups_settled"], 0);
      EXPECT_EQ(r.err.find("row index"), std::string::npos) << r.err;
    }
  }
  CommandResult bad = RunCommand(ShellQuote(THUND_BINARY) + " copy " + ShellQuote(src_) + " " +
                                 ShellQuote(dir_ / "x") + " --checkpoint-keys k --key-index btree");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("use 'rows' or 'table'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace thund::engine::keyed
