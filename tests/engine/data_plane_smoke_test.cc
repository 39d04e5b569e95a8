// Issue 2's data-plane smoke test, end to end in a few lines: an Arrow RecordBatch
// handed to DuckDB through the Arrow C Data Interface, queried with SQL, the result
// returned as Arrow; and a Parquet file written by Arrow read by DuckDB and the reverse.
// (Exhaustive coverage: arrow_scan_oracle_test, arrow_types_test, parquet_roundtrip_test.)

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include "engine/duckdb/duckdb_session.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/io/parquet_io.h"
#include "engine/table_compare.h"

namespace thund::engine {
namespace {

using testing::RowStrings;

std::shared_ptr<arrow::RecordBatch> Orders() {
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("customer", arrow::utf8()),
                     arrow::field("amount", arrow::float64())});
  return arrow::RecordBatch::Make(
      schema, 5,
      {*arrow::json::ArrayFromJSONString(arrow::int64(), "[1, 2, 3, 4, 5]"),
       *arrow::json::ArrayFromJSONString(arrow::utf8(), R"(["ann", "bob", "ann", null, "bob"])"),
       *arrow::json::ArrayFromJSONString(arrow::float64(), "[10.5, 20, 30, 40, null]")});
}

TEST(DataPlaneSmokeTest, RecordBatchThroughSqlAndBackAsArrow) {
  THUND_ASSERT_OK_AND_ASSIGN(auto session, DuckDbSession::Open());
  THUND_ASSERT_OK(session->RegisterArrow("orders", Orders()->schema(), {Orders()}));
  THUND_ASSERT_OK_AND_ASSIGN(
      auto result, session->Query("SELECT customer, count(*) AS n, sum(amount) AS total "
                                  "FROM orders WHERE id > 1 GROUP BY customer ORDER BY customer"));
  EXPECT_EQ(result->schema()->ToString(), "customer: string\nn: int64\ntotal: double");
  // Rows 2..5: ann {30}, bob {20, null}, null {40}; NULLS LAST is DuckDB's default.
  EXPECT_EQ(RowStrings(*result),
            (std::vector<std::string>{"ann | 1 | 30", "bob | 2 | 20", "∅ | 1 | 40"}));
}

TEST(DataPlaneSmokeTest, ParquetFromArrowToDuckDbAndBack) {
  testing::TempDir dir;
  THUND_ASSERT_OK_AND_ASSIGN(auto session, DuckDbSession::Open());
  THUND_ASSERT_OK_AND_ASSIGN(auto orders, arrow::Table::FromRecordBatches({Orders()}));
  const std::string by_arrow = dir.File("by_arrow.parquet");
  const std::string by_duckdb = dir.File("by_duckdb.parquet");
  THUND_ASSERT_OK(WriteParquetFile(*orders, by_arrow));
  // DuckDB reads Arrow's file and writes its own copy; Arrow reads that copy back.
  THUND_ASSERT_OK(session->Execute("COPY (SELECT * FROM read_parquet(" + QuoteString(by_arrow) +
                                   ") ORDER BY id) TO " + QuoteString(by_duckdb) +
                                   " (FORMAT parquet)"));
  THUND_ASSERT_OK_AND_ASSIGN(auto back, ReadParquetFile(by_duckdb));
  EXPECT_TRUE(testing::TablesEqualOrdered(*orders, *back));
}

}  // namespace
}  // namespace thund::engine
