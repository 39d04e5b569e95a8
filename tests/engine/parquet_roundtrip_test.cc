// Parquet written by Arrow is read by DuckDB, and Parquet written by DuckDB is read by
// Arrow, with the same values on both sides.

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/duckdb/duckdb_session.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/io/parquet_io.h"
#include "engine/table_compare.h"
#include "engine/typed_data.h"

namespace thund::engine {
namespace {

using testing::CastTo;
using testing::DecodedTable;
using testing::MakeTypedBatches;
using testing::TablesEqualOrdered;
using testing::TempDir;

std::unique_ptr<DuckDbSession> Open() {
  DuckDbSessionOptions options;
  options.threads = 2;
  auto session = DuckDbSession::Open(options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).ValueUnsafe() : nullptr;
}

// Parquet has no month_day_nano interval, and Arrow's writer no run-end encoding.
std::shared_ptr<arrow::Table> ParquetCompatible(const std::shared_ptr<arrow::Table>& t) {
  std::vector<int> keep;
  for (int i = 0; i < t->num_columns(); ++i) {
    const auto& name = t->schema()->field(i)->name();
    if (name != "ival" && name != "ree") keep.push_back(i);
  }
  return *t->SelectColumns(keep);
}

TEST(ParquetRoundTripTest, ArrowWrittenFileReadByDuckDbHasTheSameValues) {
  TempDir dir;
  auto session = Open();
  ASSERT_NE(session, nullptr);
  auto batches = MakeTypedBatches({1, 2047, 2048, 2049, 10000});
  THUND_ASSERT_OK_AND_ASSIGN(auto original, arrow::Table::FromRecordBatches(batches));
  original = ParquetCompatible(original);
  ParquetWriteOptions options;
  options.row_group_rows = 3000;  // several row groups
  const std::string path = dir.File("from_arrow.parquet");
  THUND_ASSERT_OK(WriteParquetFile(*original, path, options));

  THUND_ASSERT_OK_AND_ASSIGN(
      auto read, session->Query("SELECT * FROM read_parquet(" + QuoteString(path) + ")"));
  // DuckDB decodes dictionaries and reads Parquet's logical types into its own; cast
  // back to the written Arrow types (lossless for these values) and compare.
  auto expected = ParquetCompatible(DecodedTable(batches));
  ASSERT_EQ(read->num_rows(), expected->num_rows());
  EXPECT_TRUE(TablesEqualOrdered(*expected, *CastTo(read, expected->schema())));
}

TEST(ParquetRoundTripTest, DuckDbWrittenFileReadByArrowHasTheSameValues) {
  TempDir dir;
  auto session = Open();
  ASSERT_NE(session, nullptr);
  const std::string select =
      "SELECT i AS id, i::INTEGER AS i32, (i % 256)::UTINYINT AS u8, "
      "CASE WHEN i % 7 = 0 THEN NULL ELSE 'name ' || i END AS s, i / 3.0 AS f, "
      "i % 2 = 0 AS flag, DATE '2020-01-01' + i::INTEGER AS d, "
      "TIMESTAMP '2020-01-01' + to_seconds(i) AS ts, (i * 1.25)::DECIMAL(18, 2) AS dec, "
      "[i, i + 1] AS lst, {'a': i, 'b': 'x' || i} AS st, MAP {'k': i} AS mp, "
      "('blob' || i)::BLOB AS bin FROM range(20000) t(i) ORDER BY i";
  const std::string path = dir.File("from_duckdb.parquet");
  THUND_ASSERT_OK(session->Execute("COPY (" + select + ") TO " + QuoteString(path) +
                                   " (FORMAT parquet, ROW_GROUP_SIZE 4096)"));
  ASSERT_TRUE(std::filesystem::exists(path));

  THUND_ASSERT_OK_AND_ASSIGN(auto from_arrow, ReadParquetFile(path));
  THUND_ASSERT_OK_AND_ASSIGN(auto from_duckdb, session->Query(select));
  ASSERT_EQ(from_arrow->num_rows(), 20000);
  // Arrow's reader names list children "element"; align types, then compare values.
  EXPECT_TRUE(TablesEqualOrdered(*from_duckdb, *CastTo(from_arrow, from_duckdb->schema())));
  // And against the generator itself: ids 0..19999 in order.
  auto ids = std::static_pointer_cast<arrow::Int64Array>(
      *arrow::Concatenate(from_arrow->GetColumnByName("id")->chunks()));
  for (int64_t i = 0; i < 20000; ++i) ASSERT_EQ(ids->Value(i), i);
}

TEST(ParquetRoundTripTest, ArrowFileScannedBothWaysAgrees) {
  // The same data through two independent paths into DuckDB: the C Data Interface
  // bridge, and Arrow's Parquet writer + DuckDB's Parquet reader.
  TempDir dir;
  auto session = Open();
  ASSERT_NE(session, nullptr);
  auto batches = MakeTypedBatches({2049, 3000});
  THUND_ASSERT_OK_AND_ASSIGN(auto table, arrow::Table::FromRecordBatches(batches));
  const std::string path = dir.File("both.parquet");
  THUND_ASSERT_OK(WriteParquetFile(*ParquetCompatible(table), path));
  THUND_ASSERT_OK(session->RegisterArrow("bridge", table));
  const std::string cols =
      "i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, flag, s, ls, bin, d32, ts_ms::TIMESTAMP, "
      "ts_us, dec18, dec38, lst, st, mp, dict";
  const std::string where = " WHERE (i16 > 0 OR s LIKE '%5%') AND u16 % 3 <> 1";
  THUND_ASSERT_OK_AND_ASSIGN(auto via_bridge,
                             session->Query("SELECT " + cols + " FROM bridge" + where));
  THUND_ASSERT_OK_AND_ASSIGN(
      auto via_parquet,
      session->Query("SELECT " + cols + " FROM read_parquet(" + QuoteString(path) + ")" + where));
  EXPECT_GT(via_bridge->num_rows(), 1000);
  EXPECT_TRUE(testing::TablesEqualUnordered(*via_parquet, *via_bridge));
}

TEST(ParquetIoTest, ReadingAMissingFileNamesThePath) {
  auto r = ReadParquetFile("/nonexistent/dir/x.parquet");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/dir/x.parquet"), std::string::npos)
      << r.status().ToString();
}

TEST(ParquetIoTest, WritingToAMissingDirectoryNamesThePath) {
  auto table = arrow::Table::Make(arrow::schema({arrow::field("a", arrow::int64())}),
                                  {*arrow::MakeArrayOfNull(arrow::int64(), 1)});
  auto st = WriteParquetFile(*table, "/nonexistent/dir/y.parquet");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent/dir/y.parquet"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace thund::engine
