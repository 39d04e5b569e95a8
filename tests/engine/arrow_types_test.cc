// Type coverage of the Arrow -> DuckDB -> Arrow bridge: every supported Arrow type,
// nulls in every column, uneven batches (1, 2047, 2048, 2049, 10000 rows, and empty
// ones), independent batches and zero-copy slices of one batch (non-zero offsets).

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/duckdb/duckdb_session.h"
#include "engine/table_compare.h"
#include "engine/typed_data.h"

namespace thund::engine {
namespace {

using testing::CastTo;
using testing::DecodedTable;
using testing::MakeTypedBatches;
using testing::MakeTypedSlices;
using testing::TablesEqualOrdered;
using testing::TypedSchema;

const std::vector<int64_t> kSizes = {1, 2047, 0, 2048, 2049, 10000, 5};

std::unique_ptr<DuckDbSession> OpenSerial() {
  DuckDbSessionOptions options;
  options.threads = 2;
  options.parallel_arrow_scan = false;  // rows come back in registration order
  auto session = DuckDbSession::Open(options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).ValueUnsafe() : nullptr;
}

class ArrowTypesTest : public ::testing::TestWithParam<bool> {
 protected:
  std::vector<std::shared_ptr<arrow::RecordBatch>> Batches() const {
    return GetParam() ? MakeTypedSlices(kSizes) : MakeTypedBatches(kSizes);
  }
};

TEST_P(ArrowTypesTest, EveryColumnRoundTripsUnchanged) {
  auto session = OpenSerial();
  ASSERT_NE(session, nullptr);
  auto batches = Batches();
  THUND_ASSERT_OK(session->RegisterArrow("t", TypedSchema(), batches));
  THUND_ASSERT_OK_AND_ASSIGN(auto result, session->Query("SELECT * FROM t"));
  auto expected = DecodedTable(batches);
  ASSERT_EQ(result->num_rows(), expected->num_rows());
  // DuckDB exports its own types (utf8 for large_utf8, timestamp[us, tz=UTC] for any
  // zoned timestamp, ...); cast back to the registered types, which must be lossless.
  EXPECT_TRUE(TablesEqualOrdered(*expected, *CastTo(result, expected->schema())));
}

TEST_P(ArrowTypesTest, NullCountsMatchArrowPerColumn) {
  auto session = OpenSerial();
  ASSERT_NE(session, nullptr);
  auto batches = Batches();
  THUND_ASSERT_OK(session->RegisterArrow("t", TypedSchema(), batches));
  THUND_ASSERT_OK_AND_ASSIGN(auto table, arrow::Table::FromRecordBatches(TypedSchema(), batches));
  std::string sql = "SELECT ";
  for (int i = 0; i < table->num_columns(); ++i) {
    sql += (i ? ", count(" : "count(") + table->schema()->field(i)->name() + ")";
  }
  THUND_ASSERT_OK_AND_ASSIGN(auto counts, session->Query(sql + " FROM t"));
  ASSERT_EQ(counts->num_rows(), 1);
  for (int i = 0; i < table->num_columns(); ++i) {
    SCOPED_TRACE(table->schema()->field(i)->name());
    // Arrow's own count of non-null values (logical nulls, for dictionary / REE too).
    THUND_ASSERT_OK_AND_ASSIGN(auto want, arrow::compute::Count(table->column(i)));
    THUND_ASSERT_OK_AND_ASSIGN(auto got, counts->column(i)->GetScalar(0));
    EXPECT_EQ(want.scalar()->ToString(), got->ToString());
  }
}

TEST_P(ArrowTypesTest, TypedPredicatesSelectTheSameRowsAsArrowCompute) {
  auto session = OpenSerial();
  ASSERT_NE(session, nullptr);
  auto batches = Batches();
  THUND_ASSERT_OK(session->RegisterArrow("t", TypedSchema(), batches));
  THUND_ASSERT_OK_AND_ASSIGN(auto table, arrow::Table::FromRecordBatches(TypedSchema(), batches));
  struct Case {
    std::string column, sql_literal;
    std::shared_ptr<arrow::Scalar> arrow_literal;
  };
  const std::vector<Case> cases = {
      {"i8", "0", arrow::MakeScalar(int8_t{0})},
      {"u64", "18446744073709000000", arrow::MakeScalar(uint64_t{18446744073709000000ULL})},
      {"f64", "100.5", arrow::MakeScalar(100.5)},
      {"d32", "DATE '1990-01-01'", std::make_shared<arrow::Date32Scalar>(7305)},
      {"ts_ns", "TIMESTAMP_NS '1970-01-01 01:00:00'",
       std::make_shared<arrow::TimestampScalar>(3600000000000LL,
                                                arrow::timestamp(arrow::TimeUnit::NANO))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.column);
    THUND_ASSERT_OK_AND_ASSIGN(auto got, session->Query("SELECT count(*) FROM t WHERE " + c.column +
                                                        " > " + c.sql_literal));
    THUND_ASSERT_OK_AND_ASSIGN(auto mask,
                               arrow::compute::CallFunction(
                                   "greater", {table->GetColumnByName(c.column), c.arrow_literal}));
    THUND_ASSERT_OK_AND_ASSIGN(auto filtered,
                               arrow::compute::Filter(table->GetColumnByName(c.column), mask));
    THUND_ASSERT_OK_AND_ASSIGN(auto got_n, got->column(0)->GetScalar(0));
    EXPECT_EQ(got_n->ToString(), std::to_string(filtered.chunked_array()->length()));
  }
}

INSTANTIATE_TEST_SUITE_P(Layout, ArrowTypesTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "sliced" : "batches"; });

TEST(ArrowTypesEdgeTest, EmptyTableKeepsItsSchemaAndHasNoRows) {
  auto session = OpenSerial();
  ASSERT_NE(session, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(auto empty, arrow::Table::MakeEmpty(TypedSchema()));
  THUND_ASSERT_OK(session->RegisterArrow("e", empty));
  THUND_ASSERT_OK_AND_ASSIGN(auto all, session->Query("SELECT * FROM e"));
  EXPECT_EQ(all->num_rows(), 0);
  EXPECT_EQ(all->num_columns(), TypedSchema()->num_fields());
  THUND_ASSERT_OK_AND_ASSIGN(auto count, session->Query("SELECT count(*) FROM e"));
  EXPECT_EQ((*count->column(0)->GetScalar(0))->ToString(), "0");
}

TEST(ArrowTypesEdgeTest, AllNullColumnsStayNull) {
  auto session = OpenSerial();
  ASSERT_NE(session, nullptr);
  auto schema = arrow::schema({arrow::field("a", arrow::int64()), arrow::field("b", arrow::utf8()),
                               arrow::field("c", arrow::list(arrow::int32()))});
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (const auto& f : schema->fields()) {
    THUND_ASSERT_OK_AND_ASSIGN(auto a, arrow::MakeArrayOfNull(f->type(), 3000));
    arrays.push_back(a);
  }
  THUND_ASSERT_OK(session->RegisterArrow("n", arrow::Table::Make(schema, arrays)));
  THUND_ASSERT_OK_AND_ASSIGN(
      auto got, session->Query("SELECT count(*), count(a), count(b), count(c) FROM n"));
  EXPECT_EQ(testing::RowStrings(*got), std::vector<std::string>{"3000 | 0 | 0 | 0"});
}

TEST(ArrowTypesEdgeTest, UnsupportedTypeIsRejectedNamingTheColumn) {
  auto session = OpenSerial();
  ASSERT_NE(session, nullptr);
  auto schema =
      arrow::schema({arrow::field("ok", arrow::int32()), arrow::field("half", arrow::float16()),
                     arrow::field("big", arrow::decimal256(50, 2))});
  THUND_ASSERT_OK_AND_ASSIGN(auto empty, arrow::Table::MakeEmpty(schema));
  auto st = session->RegisterArrow("bad", empty);
  ASSERT_TRUE(st.IsNotImplemented()) << st.ToString();
  EXPECT_NE(st.message().find("'half' (halffloat)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'big' (decimal256(50, 2))"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("'ok'"), std::string::npos) << st.message();
  EXPECT_FALSE(session->IsRegistered("bad"));
}

TEST(ArrowTypesEdgeTest, SubMicrosecondValuesDuckDbWouldTruncateAreRefused) {
  auto session = OpenSerial();
  ASSERT_NE(session, nullptr);
  auto type = arrow::timestamp(arrow::TimeUnit::NANO, "UTC");
  THUND_ASSERT_OK_AND_ASSIGN(auto exact,
                             arrow::json::ArrayFromJSONString(type, "[1000, null, 5000]"));
  THUND_ASSERT_OK_AND_ASSIGN(auto inexact, arrow::json::ArrayFromJSONString(type, "[1000, 5001]"));
  auto schema = arrow::schema({arrow::field("ts", type)});
  THUND_ASSERT_OK(session->RegisterArrow("fine", arrow::Table::Make(schema, {exact})));
  auto st = session->RegisterArrow("lossy", arrow::Table::Make(schema, {inexact}));
  ASSERT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_NE(st.message().find("column 'ts'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("row 1"), std::string::npos) << st.message();

  auto t64 = arrow::time64(arrow::TimeUnit::NANO);
  THUND_ASSERT_OK_AND_ASSIGN(auto lossy_time, arrow::json::ArrayFromJSONString(t64, "[7]"));
  EXPECT_TRUE(
      session
          ->RegisterArrow("lossy_time",
                          arrow::Table::Make(arrow::schema({arrow::field("t", t64)}), {lossy_time}))
          .IsInvalid());
}

}  // namespace
}  // namespace thund::engine
