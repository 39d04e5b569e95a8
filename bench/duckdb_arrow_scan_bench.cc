// Throughput of the Arrow -> DuckDB bridge (thund_arrow_scan): scans + groups 10M Arrow
// rows registered with DuckDbSession, and the same query over a native DuckDB table for
// reference. Plain main, not a test; prints one line per measurement:
//   duckdb_arrow_scan query=<name> source=<arrow|native> threads=<n> rows=<n>
//       best_ms=<ms> median_ms=<ms> rows_per_s=<best>
// Usage: duckdb_arrow_scan_bench [rows=10000000] [repetitions=5]

#include <arrow/api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/duckdb/duckdb_session.h"

namespace {

using thund::engine::DuckDbSession;
using thund::engine::DuckDbSessionOptions;

// id int64 (0..n-1), k int32 (1000 groups), s utf8 (100 distinct), v double.
arrow::Result<std::shared_ptr<arrow::Table>> MakeTable(int64_t rows) {
  constexpr int64_t kBatch = 64 * 1024;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("k", arrow::int32()),
                     arrow::field("s", arrow::utf8()), arrow::field("v", arrow::float64())});
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back("name-" + std::to_string(i));
  for (int64_t start = 0; start < rows; start += kBatch) {
    const int64_t n = std::min(kBatch, rows - start);
    arrow::Int64Builder id;
    arrow::Int32Builder k;
    arrow::StringBuilder s;
    arrow::DoubleBuilder v;
    ARROW_RETURN_NOT_OK(id.Reserve(n));
    ARROW_RETURN_NOT_OK(k.Reserve(n));
    ARROW_RETURN_NOT_OK(v.Reserve(n));
    for (int64_t i = start; i < start + n; ++i) {
      id.UnsafeAppend(i);
      k.UnsafeAppend(static_cast<int32_t>(i * 7919 % 1000));
      ARROW_RETURN_NOT_OK(s.Append(names[static_cast<size_t>(i % 100)]));
      v.UnsafeAppend(static_cast<double>(i % 1013) * 0.5);
    }
    std::shared_ptr<arrow::Array> a, b, c, d;
    ARROW_RETURN_NOT_OK(id.Finish(&a));
    ARROW_RETURN_NOT_OK(k.Finish(&b));
    ARROW_RETURN_NOT_OK(s.Finish(&c));
    ARROW_RETURN_NOT_OK(v.Finish(&d));
    batches.push_back(arrow::RecordBatch::Make(schema, n, {a, b, c, d}));
  }
  return arrow::Table::FromRecordBatches(schema, batches);
}

struct Query {
  const char* name;
  const char* sql;  // {T} is replaced by the table name
};

std::string Replace(std::string sql, const std::string& table) {
  const size_t at = sql.find("{T}");
  if (at != std::string::npos) sql.replace(at, 3, table);
  return sql;
}

arrow::Status Run(int64_t rows, int reps) {
  ARROW_ASSIGN_OR_RAISE(auto table, MakeTable(rows));
  const std::vector<Query> queries = {
      {"group_by_int", "SELECT k, count(*), sum(v) FROM {T} GROUP BY k"},
      {"group_by_string", "SELECT s, count(*), avg(v) FROM {T} GROUP BY s"},
      {"filter_subset", "SELECT sum(v) FROM {T} WHERE id % 10 = 3"},
  };
  for (int threads : {1, 2}) {
    for (bool parallel : {false, true}) {
      if (threads == 1 && parallel) continue;
      DuckDbSessionOptions options;
      options.threads = threads;
      options.parallel_arrow_scan = parallel;
      ARROW_ASSIGN_OR_RAISE(auto session, DuckDbSession::Open(options));
      ARROW_RETURN_NOT_OK(session->RegisterArrow("t", table));
      const bool with_native = parallel || threads == 1;
      if (with_native)
        ARROW_RETURN_NOT_OK(session->Execute("CREATE TABLE native AS SELECT * FROM t"));
      for (const auto& q : queries) {
        for (const char* source : {"arrow", "native"}) {
          const bool native = std::string(source) == "native";
          if (native && !with_native) continue;
          const std::string sql = Replace(q.sql, native ? "native" : "t");
          std::vector<double> ms;
          for (int r = 0; r < reps; ++r) {
            const auto start = std::chrono::steady_clock::now();
            ARROW_ASSIGN_OR_RAISE(auto result, session->Query(sql));
            const auto end = std::chrono::steady_clock::now();
            if (result->num_rows() == 0) return arrow::Status::Invalid("empty result for ", sql);
            ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
          }
          std::sort(ms.begin(), ms.end());
          std::printf(
              "duckdb_arrow_scan query=%s source=%s threads=%d parallel_scan=%d rows=%lld "
              "best_ms=%.1f median_ms=%.1f rows_per_s=%.3g\n",
              q.name, source, threads, parallel ? 1 : 0, static_cast<long long>(rows), ms.front(),
              ms[ms.size() / 2], static_cast<double>(rows) / (ms.front() / 1000.0));
          std::fflush(stdout);
        }
      }
    }
  }
  return arrow::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  auto st = Run(rows, reps);
  if (!st.ok()) {
    std::fprintf(stderr, "duckdb_arrow_scan_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
