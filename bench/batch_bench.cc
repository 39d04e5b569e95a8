// Batch throughput of the native engine (NativeBackend::Run, i.e. `thund run`)
// against DuckDB running the same SQL directly on the same files and writing
// the result as Parquet (COPY ... TO). Plain main, not a test.
//
// Each measurement runs in its own child process, so its peak RSS
// (wait4's ru_maxrss) is its own. Prints one line per measurement and appends
// them to bench/results/batch_bench.csv (created with a header if missing):
//   time_utc,workload,engine,threads,input_rows,output_rows,seconds,rows_per_s,peak_rss_mb
// Usage: batch_bench [rows=5000000] [repetitions=3] [data_dir=.bench-data/batch]
//                    [workloads=all (comma-separated names)] [engines=duckdb,thund]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <arrow/array.h>
#include <string>
#include <vector>

#include "backend/native/native_backend.h"
#include "engine/duckdb/duckdb_session.h"

namespace {

namespace fs = std::filesystem;
using thund::engine::DuckDbSession;

struct Workload {
  const char* name;
  std::string sql;  // {DATA} is replaced by the data directory
};

std::string Expand(std::string sql, const std::string& data) {
  for (size_t at; (at = sql.find("{DATA}")) != std::string::npos;) sql.replace(at, 6, data);
  return sql;
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "batch_bench: %s\n", what.c_str());
  return 1;
}

// Generates the input files once (events.parquet, events.csv, dim.parquet).
int Generate(const std::string& data, int64_t rows) {
  fs::create_directories(data);
  const std::string marker = data + "/rows-" + std::to_string(rows);
  if (fs::exists(marker)) return 0;
  auto session = DuckDbSession::Open();
  if (!session.ok()) return Fail(session.status().ToString());
  const std::string gen =
      "SELECT i AS id, (i * 7919) % 1000 AS k, 'name-' || (i % 100) AS s, "
      "(i % 1013) * 0.5 AS v, TIMESTAMP '2024-01-01' + to_seconds(i % 2592000) AS ts "
      "FROM range(" + std::to_string(rows) + ") t(i)";
  for (const std::string& sql :
       {"COPY (" + gen + ") TO '" + data + "/events.parquet' (FORMAT parquet)",
        "COPY (" + gen + ") TO '" + data + "/events.csv' (FORMAT csv, HEADER true)",
        "COPY (SELECT i AS k, 'group-' || (i % 17) AS grp FROM range(1000) t(i)) TO '" + data +
            "/dim.parquet' (FORMAT parquet)"}) {
    auto st = (*session)->Execute(sql);
    if (!st.ok()) return Fail(st.ToString());
  }
  std::ofstream(marker) << rows;
  return 0;
}

struct Measure {
  double seconds = 0;
  int64_t output_rows = 0;
  long peak_rss_kb = 0;
};

// Runs `work` (returns output rows, or -1) in a child process.
template <typename F>
Measure InChild(F work) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto start = std::chrono::steady_clock::now();
    int64_t rows = work();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double msg[2] = {secs, static_cast<double>(rows)};
    if (write(fds[1], msg, sizeof(msg)) != sizeof(msg)) _exit(3);
    _exit(rows < 0 ? 2 : 0);
  }
  close(fds[1]);
  double msg[2] = {-1, -1};
  if (read(fds[0], msg, sizeof(msg)) != sizeof(msg)) msg[0] = -1;
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return {msg[0], static_cast<int64_t>(msg[1]), usage.ru_maxrss};
}

int64_t RunDuckDb(const std::string& sql, const std::string& out_dir) {
  fs::remove_all(out_dir);
  fs::create_directories(out_dir);
  auto session = DuckDbSession::Open();
  if (!session.ok()) return -1;
  auto st = (*session)->Execute("COPY (" + sql + ") TO '" + out_dir + "/out.parquet' (FORMAT parquet)");
  if (!st.ok()) {
    std::fprintf(stderr, "duckdb: %s\n", st.ToString().c_str());
    return -1;
  }
  auto n = (*session)->Query("SELECT count(*) FROM read_parquet('" + out_dir + "/out.parquet')");
  if (!n.ok()) return -1;
  return std::static_pointer_cast<arrow::Int64Array>((*n)->column(0)->chunk(0))->Value(0);
}

int64_t RunThund(const std::string& sql, const std::string& root) {
  fs::remove_all(root);
  thund::Pipeline p("bench");
  p.AddQuery(thund::Dataset::MaterializedView("result"), sql);
  thund::RunOptions options;
  options.storage_root = root;
  auto backend = thund::native::NativeBackend::Make();
  auto summary = backend->Run(p, options);
  if (!summary.ok() || summary->status != thund::RunPhase::kCompleted) {
    std::fprintf(stderr, "thund: %s\n",
                 summary.ok() ? summary->ToString().c_str() : summary.status().ToString().c_str());
    return -1;
  }
  return summary->datasets[0].rows_written;
}

std::string NowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 5000000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string data = fs::absolute(argc > 3 ? argv[3] : ".bench-data/batch").string();
  const std::string only = argc > 4 ? "," + std::string(argv[4]) + "," : ",all,";
  const std::string engines = argc > 5 ? "," + std::string(argv[5]) + "," : ",duckdb,thund,";
  auto listed = [](const std::string& list, const std::string& name) {
    return list == ",all," || list.find("," + name + ",") != std::string::npos;
  };
  if (int rc = Generate(data, rows)) return rc;
  const std::vector<Workload> workloads = {
      {"aggregate_parquet",
       "SELECT k, count(*) AS n, sum(v) AS total, avg(v) AS mean FROM "
       "read_parquet('{DATA}/events.parquet') GROUP BY k"},
      {"filter_project_parquet",
       "SELECT id, k, s, v * 2 AS v2, ts FROM read_parquet('{DATA}/events.parquet') "
       "WHERE id % 10 <> 0"},
      {"join_aggregate_parquet",
       "SELECT d.grp, count(*) AS n, sum(e.v) AS total FROM read_parquet('{DATA}/events.parquet') e "
       "JOIN read_parquet('{DATA}/dim.parquet') d USING (k) GROUP BY d.grp"},
      {"load_csv", "SELECT * FROM read_csv('{DATA}/events.csv')"},
  };
  const std::string csv_path = "bench/results/batch_bench.csv";
  const bool new_file = !fs::exists(csv_path);
  fs::create_directories(fs::path(csv_path).parent_path());
  std::ofstream csv(csv_path, std::ios::app);
  if (new_file) {
    csv << "time_utc,workload,engine,threads,input_rows,output_rows,seconds,rows_per_s,peak_rss_mb\n";
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("%-24s %-7s %10s %9s %14s %9s %9s\n", "workload", "engine", "out_rows", "median_s",
              "rows_per_s", "rss_mb", "overhead");
  for (const auto& w : workloads) {
    if (!listed(only, w.name)) continue;
    const std::string sql = Expand(w.sql, data);
    // Repetitions alternate the engines, so load from other processes on the
    // machine falls on both alike.
    std::map<std::string, std::vector<Measure>> runs;
    for (int r = 0; r < reps; ++r) {
      for (const char* engine : {"duckdb", "thund"}) {
        if (!listed(engines, engine)) continue;
        const std::string out = data + "/out-" + engine;
        Measure m = std::string(engine) == "duckdb"
                        ? InChild([&] { return RunDuckDb(sql, out); })
                        : InChild([&] { return RunThund(sql, out); });
        if (m.seconds <= 0) return Fail(std::string(engine) + " failed on " + w.name);
        runs[engine].push_back(m);
      }
    }
    double duck_median = 0;
    for (const char* engine : {"duckdb", "thund"}) {
      if (!listed(engines, engine)) continue;
      auto& list = runs[engine];
      std::sort(list.begin(), list.end(),
                [](const Measure& a, const Measure& b) { return a.seconds < b.seconds; });
      const Measure& med = list[list.size() / 2];
      long rss = 0;
      for (const auto& m : list) rss = std::max(rss, m.peak_rss_kb);
      const double rps = static_cast<double>(rows) / med.seconds;
      std::string overhead;
      if (std::string(engine) == "duckdb") {
        duck_median = med.seconds;
      } else if (duck_median > 0) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%+.1f%%", (med.seconds / duck_median - 1) * 100);
        overhead = buf;
      }
      std::printf("%-24s %-7s %10lld %9.3f %14.0f %9.1f %9s\n", w.name, engine,
                  static_cast<long long>(med.output_rows), med.seconds, rps, rss / 1024.0,
                  overhead.c_str());
      csv << NowUtc() << "," << w.name << "," << engine << "," << threads << "," << rows << ","
          << med.output_rows << "," << med.seconds << "," << static_cast<int64_t>(rps) << ","
          << rss / 1024.0 << "\n";
    }
  }
  return 0;
}
