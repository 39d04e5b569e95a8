// The DESIGN.md §5 bug class: Arrow data fed to DuckDB must give the same answers as
// the same rows loaded natively, for column subsets, filters, group-bys and joins.
// Oracle: the rows inserted through SQL VALUES (idkv_data.h), queried by DuckDB.

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "engine/duckdb/duckdb_session.h"
#include "engine/idkv_data.h"
#include "engine/table_compare.h"

namespace thund::engine {
namespace {

using testing::IdKvCreateSql;
using testing::IdKvSchema;
using testing::MakeIdKvBatches;
using testing::MakeIdKvRow;
using testing::TablesEqualOrdered;
using testing::TablesEqualUnordered;

// Uneven batch sizes around DuckDB's 2048-row vector: slices must never cross or drop
// a row at a batch or vector boundary.
const std::vector<int64_t> kTSizes = {1, 2047, 2048, 2049, 10000, 3, 4100};
const std::vector<int64_t> kUSizes = {777, 3000, 1, 2222};
constexpr int64_t kUOffset = 5000;

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

std::string Replace(std::string sql, const std::string& t, const std::string& u) {
  for (auto [from, to] : {std::pair<std::string, std::string>{"{T}", t}, {"{U}", u}}) {
    for (size_t p = sql.find(from); p != std::string::npos; p = sql.find(from, p)) {
      sql.replace(p, from.size(), to);
    }
  }
  return sql;
}

class ArrowScanOracleTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    DuckDbSessionOptions options;
    options.threads = 2;
    options.parallel_arrow_scan = GetParam();
    THUND_ASSERT_OK_AND_ASSIGN(session_, DuckDbSession::Open(options));
    THUND_ASSERT_OK(session_->RegisterArrow("t", IdKvSchema(), MakeIdKvBatches(kTSizes)));
    THUND_ASSERT_OK(session_->RegisterArrow("u", IdKvSchema(), MakeIdKvBatches(kUSizes, kUOffset)));
  }

  // The oracle: the same rows loaded natively from SQL VALUES (slow to parse, so
  // only the tests that compare against it pay for it).
  void CreateNativeTables() {
    THUND_ASSERT_OK(session_->Execute(IdKvCreateSql("native_t", Sum(kTSizes))));
    THUND_ASSERT_OK(session_->Execute(IdKvCreateSql("native_u", Sum(kUSizes), kUOffset)));
  }

  std::shared_ptr<arrow::Table> Run(const std::string& sql) {
    auto result = session_->Query(sql);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
    return result.ok() ? *result : nullptr;
  }

  std::unique_ptr<DuckDbSession> session_;
};

TEST_P(ArrowScanOracleTest, ColumnSubsetWithFilterReturnsThatColumnsValues) {
  // The exact query that duckdb_arrow_scan gets wrong (it returns id's values).
  auto got = Run("SELECT v FROM t WHERE id < 10");
  ASSERT_NE(got, nullptr);
  arrow::DoubleBuilder expected;
  for (int64_t id = 0; id < 10; ++id) {
    auto v = MakeIdKvRow(id).v;
    ASSERT_TRUE((v ? expected.Append(*v) : expected.AppendNull()).ok());
  }
  auto want = arrow::Table::Make(arrow::schema({arrow::field("v", arrow::float64())}),
                                 {*expected.Finish()});
  EXPECT_TRUE(TablesEqualUnordered(*want, *got));
}

TEST_P(ArrowScanOracleTest, FilteredCountCountsOnlyMatchingRows) {
  auto got = Run("SELECT count(*) AS n FROM t WHERE id < 10");
  ASSERT_NE(got, nullptr);
  ASSERT_EQ(got->num_rows(), 1);
  EXPECT_EQ(std::static_pointer_cast<arrow::Int64Scalar>(*got->column(0)->GetScalar(0))->value, 10);
}

TEST_P(ArrowScanOracleTest, RowsAtSliceBoundariesAreNeitherLostNorDuplicated) {
  auto got = Run("SELECT id FROM t WHERE id BETWEEN 2040 AND 2060 OR id BETWEEN 6140 AND 6150");
  ASSERT_NE(got, nullptr);
  arrow::Int64Builder expected;
  for (int64_t id = 2040; id <= 2060; ++id) ASSERT_TRUE(expected.Append(id).ok());
  for (int64_t id = 6140; id <= 6150; ++id) ASSERT_TRUE(expected.Append(id).ok());
  auto want =
      arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64())}), {*expected.Finish()});
  EXPECT_TRUE(TablesEqualUnordered(*want, *got));
}

TEST_P(ArrowScanOracleTest, QueriesMatchNativelyLoadedRows) {
  const std::vector<std::string> queries = {
      "SELECT v FROM {T} WHERE id < 10",
      "SELECT count(*) FROM {T} WHERE id < 10",
      "SELECT count(*), count(k), count(v) FROM {T}",
      "SELECT * FROM {T}",
      "SELECT v, id FROM {T} WHERE id % 1000 = 7",
      "SELECT k FROM {T} WHERE v > 100 AND v < 120",
      "SELECT id FROM {T} WHERE k IS NULL",
      "SELECT id, k FROM {T} WHERE v IS NULL AND id > 3000",
      "SELECT k, count(*), sum(v), min(id), max(id), avg(v) FROM {T} GROUP BY k",
      "SELECT DISTINCT k FROM {T}",
      "SELECT k, v FROM {T} WHERE k IN ('k1', 'k12') AND id BETWEEN 2000 AND 2100",
      "SELECT id, sum(v) OVER (PARTITION BY k ORDER BY id) FROM {T} WHERE id < 5000",
      "SELECT a.id, b.v, b.k FROM {T} a JOIN {U} b ON a.id = b.id + 1 WHERE a.k = 'k5'",
      "SELECT a.k, count(*) FROM {T} a LEFT JOIN {U} b ON a.id = b.id GROUP BY a.k",
      "SELECT count(*) FROM {T} a, {U} b WHERE a.id = b.id AND a.v = b.v",
      "SELECT a.id, b.k FROM {T} a JOIN {T} b ON a.id = b.id * 2 WHERE b.v > 200",
      "SELECT id FROM {U} WHERE id NOT IN (SELECT id FROM {T})",
      "SELECT * FROM {T} ORDER BY id LIMIT 7 OFFSET 2045",
  };
  ASSERT_NO_FATAL_FAILURE(CreateNativeTables());
  for (const auto& q : queries) {
    SCOPED_TRACE(q);
    auto arrow_fed = Run(Replace(q, "t", "u"));
    auto native = Run(Replace(q, "native_t", "native_u"));
    ASSERT_NE(arrow_fed, nullptr);
    ASSERT_NE(native, nullptr);
    EXPECT_TRUE(TablesEqualUnordered(*native, *arrow_fed));
  }
}

TEST_P(ArrowScanOracleTest, SelectStarReturnsEveryRegisteredRow) {
  auto got = Run("SELECT * FROM t");
  ASSERT_NE(got, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(auto original,
                             arrow::Table::FromRecordBatches(MakeIdKvBatches(kTSizes)));
  if (GetParam()) {
    EXPECT_TRUE(TablesEqualUnordered(*original, *got));
  } else {
    // A single-threaded scan produces the rows in registration order.
    EXPECT_TRUE(TablesEqualOrdered(*original, *got));
  }
}

// Many DuckDB workers pulling slices from the shared cursor: every slice is scanned
// exactly once. Oracle: per-key counts and sums computed from the generator in C++
// (the values are multiples of 0.25, so double sums are exact).
TEST(ArrowScanParallelTest, ManyWorkersScanEverySliceExactlyOnce) {
  DuckDbSessionOptions options;
  options.threads = 8;
  THUND_ASSERT_OK_AND_ASSIGN(auto session, DuckDbSession::Open(options));
  const std::vector<int64_t> sizes = {100000, 1, 77777, 2048, 50001};
  THUND_ASSERT_OK(session->RegisterArrow("t", IdKvSchema(), MakeIdKvBatches(sizes)));
  std::map<std::string, std::pair<int64_t, double>> want;  // k -> (count(*), sum(v))
  for (int64_t id = 0; id < Sum(sizes); ++id) {
    const auto row = MakeIdKvRow(id);
    auto& [n, sum] = want[row.k ? *row.k : "∅"];
    ++n;
    if (row.v) sum += *row.v;
  }
  for (int rep = 0; rep < 3; ++rep) {
    THUND_ASSERT_OK_AND_ASSIGN(auto got,
                               session->Query("SELECT k, count(*), sum(v) FROM t GROUP BY k"));
    std::vector<std::string> want_rows;
    for (const auto& [k, agg] : want) {
      want_rows.push_back(k + " | " + std::to_string(agg.first) + " | " +
                          arrow::DoubleScalar(agg.second).ToString());
    }
    auto got_rows = testing::RowStrings(*got);
    std::sort(got_rows.begin(), got_rows.end());
    std::sort(want_rows.begin(), want_rows.end());
    EXPECT_EQ(got_rows, want_rows);
  }
}

INSTANTIATE_TEST_SUITE_P(ScanThreads, ArrowScanOracleTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "parallel" : "serial"; });

}  // namespace
}  // namespace thund::engine
