// Interruption of `thund run` with keyed_write: real SIGKILLs of the CLI at
// random points of a large write (a sink from a pipeline file, a stored table
// from SQL), then reruns until one completes. The result must hold every
// source row exactly once, checked by an independent DuckDB over the sources.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include <arrow/array.h>

#include "batch_fixture.h"
#include "engine/duckdb/sql_quote.h"
#include "testing/run_command.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;

using ::thund::testing::Spawn;

// Committed data files (names not starting with '_' or '.') in `dir`.
int CountCommitted(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    n += e.is_regular_file() && name[0] != '_' && name[0] != '.';
  }
  return n;
}

class KeyedKillTest : public BatchFixture {
 protected:
  // `rows` rows with unique ids in `files` Parquet files under src/.
  void MakeSource(int64_t rows, int files) {
    std::filesystem::create_directories(Path("src"));
    const int64_t per = rows / files;
    for (int f = 0; f < files; ++f) {
      Oracle("COPY (SELECT i AS id, 'https://site' || (i % 997) || '.example/p/' || i AS url, "
             "i % 1000 AS bucket FROM range(" + std::to_string(f * per) + ", " +
             std::to_string((f + 1) * per) + ") t(i)) TO " +
             QuoteString(Path("src/part-" + std::to_string(100 + f) + ".parquet")) +
             " (FORMAT parquet)");
    }
  }

  // Starts `args`, waits for `files` more committed files in `watch` plus
  // `extra_ms`, then SIGKILLs it. True when it died of the kill.
  bool RunAndKill(const std::vector<std::string>& args, const std::string& watch, int files,
                  int extra_ms) {
    const int before = CountCommitted(watch);
    pid_t pid = Spawn(args, Path("thund.log"));
    if (pid < 0) return false;
    int status = 0;
    while (CountCommitted(watch) < before + files) {
      if (waitpid(pid, &status, WNOHANG) == pid) return false;  // finished first
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(extra_ms));
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }

  // `kills` killed runs, then one run to completion. Returns how many were killed.
  int KillThenFinish(const std::vector<std::string>& args, const std::string& watch, int kills,
                     int total_files) {
    const uint64_t seed = std::random_device{}();
    std::cout << "[ seed ] " << seed << "\n";
    std::mt19937_64 rng(seed);
    int killed = 0;
    for (int k = 0; k < kills; ++k) {
      const int left = std::max(2, total_files - CountCommitted(watch));
      const int files = 1 + static_cast<int>(rng() % static_cast<uint64_t>(std::max(1, left / 3)));
      const int extra_ms = static_cast<int>(rng() % 40);
      const bool was_killed = RunAndKill(args, watch, files, extra_ms);
      killed += was_killed;
      std::cout << "[ kill " << k << " ] after " << files << " new files + " << extra_ms
                << " ms: " << (was_killed ? "killed" : "finished first") << "\n";
    }
    pid_t pid = Spawn(args, Path("final.log"));
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the final run failed:\n" << std::ifstream(Path("final.log")).rdbuf();
    return killed;
  }

  // Rows in `actual` not in the sources and vice versa (multisets), and
  // repeated ids; "" when `actual` holds every source row exactly once.
  std::string Compare(const std::string& actual) {
    const std::string src = "SELECT id, url, bucket FROM read_parquet(" +
                            QuoteString(Path("src") + "/*.parquet") + ")";
    auto t = Oracle("SELECT (SELECT count(*) FROM ((" + src + ") EXCEPT ALL (" + actual +
                    "))), (SELECT count(*) FROM ((" + actual + ") EXCEPT ALL (" + src +
                    "))), (SELECT count(*) - count(DISTINCT id) FROM (" + actual + "))");
    if (!t) return "oracle failed";
    auto v = [&](int c) {
      return std::static_pointer_cast<arrow::Int64Array>(t->column(c)->chunk(0))->Value(0);
    };
    if (v(0) == 0 && v(1) == 0 && v(2) == 0) return "";
    return std::to_string(v(0)) + " rows missing, " + std::to_string(v(1)) + " extra, " +
           std::to_string(v(2)) + " repeated ids";
  }
};

TEST_F(KeyedKillTest, SinkFromPipelineFileKilledAtRandomPointsHoldsEachRowOnce) {
  const int64_t rows = 1200000;
  const int rows_per_file = 20000;
  MakeSource(rows, 12);
  WriteFile("p.yaml", "name: killsink\n"
                      "storage: " + root() + "\n"
                      "datasets:\n"
                      "  - name: out\n"
                      "    kind: sink\n"
                      "    storage: {location: " + Path("out") + ", options: {rows_per_file: '" +
                          std::to_string(rows_per_file) + "'}}\n"
                      "    keyed_write: {keys: [id], threads: 2}\n"
                      "flows:\n"
                      "  - target: out\n"
                      "    source: {kind: files, path: " + Path("src") + ", format: parquet}\n");
  const std::vector<std::string> args = {THUND_BINARY, "run", Path("p.yaml"), "--threads", "2"};
  const int killed = KillThenFinish(args, Path("out"), 4, static_cast<int>(rows / rows_per_file));
  EXPECT_GE(killed, 1) << "no run was actually killed mid-write";
  EXPECT_EQ(Compare("SELECT id, url, bucket FROM read_parquet(" +
                    QuoteString(Path("out") + "/*.parquet") + ")"),
            "");
}

TEST_F(KeyedKillTest, TableFromSqlKilledAtRandomPointsHoldsEachRowOnce) {
  const int64_t rows = 1200000;
  const int rows_per_file = 20000;
  MakeSource(rows, 12);
  // A transform that keeps the key: filtered right after the stored source.
  WriteFile("p.sql",
            "CREATE TABLE raw AS SELECT * FROM read_parquet(" +
                QuoteString(Path("src") + "/*.parquet") + ");\n"
                "CREATE TABLE out OPTIONS ('rows_per_file' = '" + std::to_string(rows_per_file) +
                "') WITH (keyed_write.keys = (id), keyed_write.threads = 2) AS\n"
                "SELECT id, url, bucket FROM raw WHERE bucket >= 0;\n");
  const std::vector<std::string> args = {THUND_BINARY, "run", Path("p.sql"), "--storage", root(),
                                         "--threads", "2"};
  const int killed =
      KillThenFinish(args, root() + "/out/_keyed_staging", 4, static_cast<int>(rows / rows_per_file));
  EXPECT_GE(killed, 1) << "no run was actually killed mid-write";
  EXPECT_EQ(Compare("SELECT id, url, bucket FROM read_parquet(" +
                    QuoteString(root() + "/out/current/*.parquet") + ")"),
            "");
  // Once complete, a rerun finds nothing to do and the data is unchanged.
  pid_t pid = Spawn(args, Path("again.log"));
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(Compare("SELECT id, url, bucket FROM read_parquet(" +
                    QuoteString(root() + "/out/current/*.parquet") + ")"),
            "");
}

}  // namespace
}  // namespace thund::native::testing
