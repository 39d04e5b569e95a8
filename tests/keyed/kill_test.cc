// Interruption: a real SIGKILL of a `thund copy` process at several random
// points of a large write, then reruns until one completes. The final target
// must hold exactly the rows of one clean run -- none missing, none twice --
// checked against DuckDB over the source files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <thread>

#include "engine/keyed/file_format.h"
#include "keyed/keyed_test_util.h"
#include "testing/run_command.h"

namespace thund::engine::keyed {
namespace {

using testing::Oracle;
using testing::ReadTarget;
using testing::ScratchDir;

using ::thund::testing::Spawn;

// Committed data files (not temporaries) in `dir`.
int CountCommitted(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (!IsIgnoredName(e.path().filename().string())) ++n;
  }
  return n;
}

int CountTemporaries(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (IsIgnoredName(e.path().filename().string())) ++n;
  }
  return n;
}

struct KillStats {
  int killed = 0;            // processes that died of our SIGKILL
  int temporaries_seen = 0;  // partial files found right after a kill
};

// Starts `args`, waits until `files` more committed files appear (plus a random
// sub-file delay), SIGKILLs it. Returns true when the process was killed (false:
// it finished first).
bool RunAndKill(const std::vector<std::string>& args, const std::string& dst, int files,
                int extra_ms, const std::string& log) {
  const int before = CountCommitted(dst);
  pid_t pid = Spawn(args, log);
  if (pid < 0) return false;
  int status = 0;
  while (CountCommitted(dst) < before + files) {
    if (waitpid(pid, &status, WNOHANG) == pid) return false;  // finished (or failed) early
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(extra_ms));
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

class KillTest : public ::testing::Test {
 protected:
  // `rows` rows in `files` Parquet files; ids unique unless `dup_every` > 0, in
  // which case every dup_every-th row repeats an earlier id.
  std::string MakeSource(int64_t rows, int files, int dup_every) {
    const std::string src = dir_ / "src";
    std::filesystem::create_directories(src);
    const int64_t per = rows / files;
    const std::string id =
        dup_every > 0 ? "CASE WHEN i % " + std::to_string(dup_every) + " = 7 THEN i // 3 ELSE i END"
                      : "i";
    for (int f = 0; f < files; ++f) {
      oracle_.Exec("COPY (SELECT " + id +
                   " AS id, 'https://site' || (i % 997) || '.example/p/' || i AS url, "
                   "i * 0.25 AS amount, 'payload ' || (i % 13) AS note FROM range(" +
                   std::to_string(f * per) + ", " + std::to_string((f + 1) * per) + ") t(i)) TO '" +
                   src + "/part-" + std::to_string(1000 + f) +
                   ".parquet' (FORMAT parquet, ROW_GROUP_SIZE 50000)");
    }
    return src;
  }

  // Kills `kills` runs at random points, then runs to completion.
  KillStats KillAndFinish(const std::vector<std::string>& args, const std::string& dst, int kills,
                          int total_files, uint64_t seed) {
    std::mt19937_64 rng(seed);
    KillStats stats;
    const std::string log = dir_ / "thund.log";
    for (int k = 0; k < kills; ++k) {
      const int done = CountCommitted(dst);
      const int left = std::max(2, total_files - done);
      const int files = 1 + static_cast<int>(rng() % static_cast<uint64_t>(std::max(1, left / 3)));
      const int extra_ms = static_cast<int>(rng() % 40);
      const bool killed = RunAndKill(args, dst, files, extra_ms, log);
      stats.killed += killed ? 1 : 0;
      stats.temporaries_seen += CountTemporaries(dst);
      std::cout << "[ kill " << k << " ] after " << files << " new files + " << extra_ms
                << " ms: " << (killed ? "killed" : "finished first") << ", committed "
                << CountCommitted(dst) << ", partial " << CountTemporaries(dst) << "\n";
      // What is visible is always readable: partial files are hidden.
      EXPECT_GE(
          oracle_.Int("SELECT count(*) FROM " +
                      std::string(args.back() == "json" ? "read_json('" + dst + "/*.json')"
                                                        : "read_parquet('" + dst + "/*.parquet')")),
          0);
    }
    const std::string log_final = dir_ / "final.log";
    pid_t pid = Spawn(args, log_final);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the final run failed:\n"
                                                               << std::ifstream(log_final).rdbuf();
    EXPECT_EQ(CountTemporaries(dst), 0);  // the final run cleaned up
    return stats;
  }

  ScratchDir dir_;
  Oracle oracle_;
};

TEST_F(KillTest, SigkillAtRandomPointsThenRerunWritesEachRowExactlyOnce) {
  const int64_t rows = 3000000;
  const std::string src = MakeSource(rows, 30, /*dup_every=*/0);
  const std::string dst = dir_ / "dst";
  const int rows_per_file = 40000;
  // The (row-wise) transform makes every row go through decode, filter and
  // encode into 75 new files, rather than whole-file copies.
  const std::vector<std::string> args = {THUND_BINARY,
                                         "copy",
                                         src,
                                         dst,
                                         "--checkpoint-keys",
                                         "id",
                                         "--transform",
                                         "SELECT * FROM src",
                                         "--rows-per-file",
                                         std::to_string(rows_per_file),
                                         "--threads",
                                         "2",
                                         "-q",
                                         "--format",
                                         "parquet"};
  const uint64_t seed = std::random_device{}();
  std::cout << "[ seed ] " << seed << "\n";
  KillStats stats = KillAndFinish(args, dst, 4, static_cast<int>(rows / rows_per_file), seed);
  EXPECT_GE(stats.killed, 1) << "no run was actually killed mid-write";
  EXPECT_EQ(oracle_.Diff("SELECT * FROM read_parquet('" + src + "/*.parquet')", ReadTarget(dst)),
            "");
  EXPECT_EQ(oracle_.Int("SELECT count(*) - count(DISTINCT id) FROM read_parquet('" + dst +
                        "/*.parquet')"),
            0);
}

TEST_F(KillTest, SigkillWhileCopyingWholeFiles) {
  // 60 all-new files committed as copies joined three at a time
  // (unit_writer.h), killed mid-way.
  const int64_t rows = 1200000;
  const std::string src = MakeSource(rows, 60, /*dup_every=*/0);
  const std::string dst = dir_ / "dst";
  const std::vector<std::string> args = {
      THUND_BINARY, "copy",      src, dst,  "--checkpoint-keys", "url",    "--rows-per-file",
      "60000",      "--threads", "2", "-q", "--format",          "parquet"};
  const uint64_t seed = std::random_device{}();
  std::cout << "[ seed ] " << seed << "\n";
  KillStats stats = KillAndFinish(args, dst, 3, 20, seed);
  EXPECT_GE(stats.killed, 1) << "no run was actually killed mid-copy";
  EXPECT_EQ(oracle_.Diff("SELECT * FROM read_parquet('" + src + "/*.parquet')", ReadTarget(dst)),
            "");
}

TEST_F(KillTest, SigkillWithRepeatedKeysKeepsFirstRowsOrAllRowsExactly) {
  const int64_t rows = 1200000;
  const std::string src = MakeSource(rows, 12, /*dup_every=*/50);
  const std::string first_rows =
      "SELECT id, url, amount, note FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY "
      "filename, file_row_number) AS rn FROM read_parquet('" +
      src + "/*.parquet', filename = true, file_row_number = true)) WHERE rn = 1";
  const uint64_t seed = std::random_device{}();
  std::cout << "[ seed ] " << seed << "\n";
  for (const std::string dup : {"first", "all"}) {
    const std::string dst = dir_ / ("dst_" + dup);
    const std::vector<std::string> args = {THUND_BINARY,
                                           "copy",
                                           src,
                                           dst,
                                           "--checkpoint-keys",
                                           "id",
                                           "--duplicates",
                                           dup,
                                           "--rows-per-file",
                                           "20000",
                                           "--threads",
                                           "2",
                                           "-q",
                                           "--format",
                                           "json"};
    KillStats stats =
        KillAndFinish(args, dst, 3, static_cast<int>(rows / 20000), seed + dup.size());
    EXPECT_GE(stats.killed, 1) << dup;
    const std::string actual = "SELECT id, url, amount, note FROM read_json('" + dst +
                               "/*.json', columns = {'id': 'BIGINT', 'url': 'VARCHAR', 'amount': "
                               "'DECIMAL(18,2)', 'note': 'VARCHAR'})";
    const std::string expected =
        dup == "first" ? first_rows
                       : "SELECT id, url, amount, note FROM read_parquet('" + src + "/*.parquet')";
    EXPECT_EQ(oracle_.Diff(expected, actual), "") << dup;
  }
}

}  // namespace
}  // namespace thund::engine::keyed
