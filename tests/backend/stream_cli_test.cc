// `thund run` on streaming pipelines, as a user runs it: the demo example
// prints per-trigger progress, --max-triggers caps a run, --events json
// carries source positions, and Ctrl-C (SIGINT) ends a processing-time run
// cleanly after a committed trigger.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/table_compare.h"
#include "testing/run_command.h"

namespace thund::testing {
namespace {

class StreamCliTest : public ::testing::Test {
 protected:
  std::string Thund(const std::string& args) {
    return std::string(THUND_BINARY) + " " + args;
  }
  std::string Store() const { return dir_.File("store"); }
  engine::testing::TempDir dir_;
};

TEST_F(StreamCliTest, DemoPrintsProgressPerTriggerAndResumes) {
  const std::string example = std::string(THUND_SOURCE_DIR) + "/examples/streaming/auctions.sql";
  auto r = RunCommand(Thund("run " + ShellQuote(example) + " --storage " + ShellQuote(Store()) +
                            " --max-triggers 3"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("flow 'bids': trigger 3,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("trigger 4,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bids at offset=7500"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("streaming (recompute)"), std::string::npos) << r.out;
  // The next run continues at the generator's committed offset.
  r = RunCommand(Thund("run " + ShellQuote(example) + " --storage " + ShellQuote(Store()) +
                       " --events json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> offsets;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["event"] == "trigger" && j["flow"] == "bids") {
      offsets.push_back(j["positions"]["bids"].get<std::string>());
    }
  }
  ASSERT_EQ(offsets.size(), 5u) << r.out;
  EXPECT_EQ(offsets.front(), "offset=10000");
  EXPECT_EQ(offsets.back(), "offset=20000");
}

TEST_F(StreamCliTest, CtrlCStopsAProcessingTimeRunAfterACommittedTrigger) {
  const std::string file = dir_.File("ticks.sql");
  std::ofstream(file) << "CREATE STREAMING TABLE ticks WITH (trigger = '50ms') AS SELECT * FROM "
                         "STREAM read_generator(kind => 'keyed_events', rows_per_batch => 10);\n";
  const std::string out = dir_.File("out.txt");
  // Our own child (not a shell's), so that waitpid sees its exit status.
  const pid_t pid = Spawn({THUND_BINARY, "run", file, "--storage", Store()}, out);
  ASSERT_GT(pid, 0);
  // Wait until a few triggers ran, then press Ctrl-C.
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("trigger 3,") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 0) << text;
  EXPECT_NE(text.find("stopped on request"), std::string::npos) << text;
  // Whatever was committed is whole batches of 10 rows.
  auto r = RunCommand(Thund("query " + ShellQuote(file) + " --storage " + ShellQuote(Store()) +
                            " \"SELECT count(*) AS n FROM ticks\" --format csv"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int64_t n = std::stoll(r.out.substr(r.out.find('\n') + 1));
  EXPECT_GE(n, 30);
  EXPECT_EQ(n % 10, 0);
}

}  // namespace
}  // namespace thund::testing
