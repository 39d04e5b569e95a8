// Helper of bench/keyed_write_bench.sh (the keyed-write benchmark, issue 6): the
// DuckDB side of the comparison. Plain main, not a test.
//
//   keyed_write_bench gen ROWS FILES DIR
//       ROWS rows in FILES Parquet files under DIR (part-00000.parquet, ...),
//       deterministic: url (the key, ~64 bytes), id, ts, title, score.
//   keyed_write_bench rewrite SRC_DIR OUT_DIR WHERE
//       the rows of SRC_DIR matching WHERE, written anew by DuckDB as Parquet
//       files in OUT_DIR (a target another writer made: its row groups are
//       not the source's).
//   keyed_write_bench copy SRC_DIR OUT_DIR WHERE THREADS
//       the floor: just the rows of SRC_DIR matching WHERE (the rows the target
//       lacks, known in advance), written as the anti-join writes them.
//   keyed_write_bench antijoin SRC_DIR TARGET_DIR OUT_DIR THREADS
//       the anti-join baseline: SRC rows whose url is not in TARGET, written as
//       Parquet into OUT_DIR by DuckDB (COPY ... PER_THREAD_OUTPUT). Prints
//       "rows=<n> seconds=<s>".
#include <arrow/scalar.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "engine/duckdb/duckdb_session.h"

namespace {

using thund::engine::DuckDbSession;
using thund::engine::DuckDbSessionOptions;

int Fail(const arrow::Status& st) {
  std::fprintf(stderr, "error: %s\n", st.ToString().c_str());
  return 1;
}

// DuckDB spills beside the output (never into the working directory).
std::unique_ptr<DuckDbSession> Open(int threads, const std::string& spill_dir = "") {
  DuckDbSessionOptions o;
  o.threads = threads;
  o.temp_directory = spill_dir;
  auto s = DuckDbSession::Open(o);
  if (!s.ok()) {
    Fail(s.status());
    std::exit(1);
  }
  return std::move(s).ValueUnsafe();
}

// The row generator: a URL-like key unique per i, plus a payload.
std::string Rows(int64_t begin, int64_t end) {
  return "SELECT 'https://www.site' || (i % 9973) || '.example.com/articles/' || (i // 9973) || "
         "'-' || "
         "substr(md5(i::VARCHAR), 1, 12) || '.html' AS url, i AS id, "
         "TIMESTAMP '2024-01-01' + to_seconds(i) AS ts, 'title number ' || (i % 100000) AS title, "
         "(i % 1000) / 10.0 AS score FROM range(" +
         std::to_string(begin) + ", " + std::to_string(end) + ") t(i)";
}

int Gen(int64_t rows, int64_t files, const std::string& dir) {
  std::filesystem::create_directories(dir);
  auto session = Open(0);
  for (int64_t f = 0; f < files; ++f) {
    char name[64];
    std::snprintf(name, sizeof(name), "/part-%05lld.parquet", static_cast<long long>(f));
    const int64_t begin = rows * f / files, end = rows * (f + 1) / files;
    auto st = session->Execute("COPY (" + Rows(begin, end) + ") TO '" + dir + name +
                               "' (FORMAT parquet)");
    if (!st.ok()) return Fail(st);
  }
  return 0;
}

int Rewrite(const std::string& src, const std::string& out, const std::string& where) {
  std::filesystem::create_directories(out);
  auto session = Open(0);
  auto st = session->Execute(
      "COPY (SELECT * FROM read_parquet('" + src + "/*.parquet') WHERE " + where + ") TO '" + out +
      "' (FORMAT parquet, PER_THREAD_OUTPUT true, OVERWRITE_OR_IGNORE true)");
  return st.ok() ? 0 : Fail(st);
}

// Runs `query` into Parquet files under `out` and prints the rows written.
int CopyOut(const std::string& query, const std::string& out, int threads) {
  std::filesystem::create_directories(out);
  auto session = Open(threads, out + ".spill");
  const auto start = std::chrono::steady_clock::now();
  auto st =
      session->Execute("COPY (" + query + ") TO '" + out +
                       "' (FORMAT parquet, PER_THREAD_OUTPUT true, OVERWRITE_OR_IGNORE true)");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::filesystem::remove_all(out + ".spill");
  if (!st.ok()) return Fail(st);
  auto count = session->Query("SELECT count(*) FROM read_parquet('" + out + "/*.parquet')");
  if (!count.ok()) return Fail(count.status());
  auto scalar = (*count)->column(0)->GetScalar(0);
  std::printf("rows=%s seconds=%.3f\n", scalar.ok() ? (*scalar)->ToString().c_str() : "?", seconds);
  return 0;
}

int AntiJoin(const std::string& src, const std::string& target, const std::string& out,
             int threads) {
  return CopyOut("SELECT s.* FROM read_parquet('" + src +
                     "/*.parquet') s ANTI JOIN read_parquet('" + target +
                     "/*.parquet') t USING (url)",
                 out, threads);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "gen" && argc == 5) return Gen(std::atoll(argv[2]), std::atoll(argv[3]), argv[4]);
  if (cmd == "rewrite" && argc == 5) return Rewrite(argv[2], argv[3], argv[4]);
  if (cmd == "copy" && argc == 6) {
    return CopyOut(
        "SELECT * FROM read_parquet('" + std::string(argv[2]) + "/*.parquet') WHERE " + argv[4],
        argv[3], std::atoi(argv[5]));
  }
  if (cmd == "antijoin" && argc == 6)
    return AntiJoin(argv[2], argv[3], argv[4], std::atoi(argv[5]));
  std::fprintf(stderr,
               "usage: keyed_write_bench gen ROWS FILES DIR | even SRC OUT | "
               "copy SRC OUT WHERE THREADS | antijoin SRC TARGET OUT THREADS\n");
  return 2;
}
