// DuckDbSession: options, SQL execution, errors, Arrow results and streaming.

#include "engine/duckdb/duckdb_session.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <string>

#include "engine/duckdb/duckdb_status.h"
#include "engine/table_compare.h"

namespace thund::engine {
namespace {

using testing::RowStrings;
using testing::TablesEqualOrdered;
using testing::TempDir;

std::unique_ptr<DuckDbSession> Open(int threads = 2) {
  DuckDbSessionOptions options;
  options.threads = threads;
  auto session = DuckDbSession::Open(options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).ValueUnsafe() : nullptr;
}

std::string Scalar(const arrow::Table& t, int column, int64_t row = 0) {
  auto s = t.column(column)->GetScalar(row);
  return s.ok() ? (*s)->ToString() : s.status().ToString();
}

TEST(DuckDbSessionTest, OpenAppliesOptions) {
  TempDir dir;
  DuckDbSessionOptions options;
  options.threads = 3;
  options.memory_limit = "512MB";
  options.temp_directory = dir.path().string();
  THUND_ASSERT_OK_AND_ASSIGN(auto session, DuckDbSession::Open(options));
  THUND_ASSERT_OK_AND_ASSIGN(auto got, session->Query("SELECT current_setting('threads')::VARCHAR, "
                                                      "current_setting('temp_directory'), "
                                                      "current_setting('memory_limit')"));
  EXPECT_EQ(Scalar(*got, 0), "3");
  EXPECT_EQ(Scalar(*got, 1), dir.path().string());
  // DuckDB reports the limit in its own units (512MB = 488.2 MiB).
  EXPECT_NE(Scalar(*got, 2).find("488"), std::string::npos) << Scalar(*got, 2);
}

TEST(DuckDbSessionTest, TimeZoneDefaultsToUtcAndIsConfigurable) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  const std::string sql =
      "SELECT current_setting('TimeZone') AS z, TIMESTAMPTZ '2020-01-01 00:30:00+00' AS t, "
      "date_part('hour', TIMESTAMPTZ '2020-01-01 00:30:00+00') AS h";
  THUND_ASSERT_OK_AND_ASSIGN(auto utc, session->Query(sql));
  EXPECT_EQ(Scalar(*utc, 0), "UTC");
  EXPECT_EQ(utc->schema()->field(1)->type()->ToString(), "timestamp[us, tz=UTC]");
  EXPECT_EQ(Scalar(*utc, 2), "0");

  DuckDbSessionOptions options;
  options.time_zone = "America/New_York";
  THUND_ASSERT_OK_AND_ASSIGN(auto ny_session, DuckDbSession::Open(options));
  THUND_ASSERT_OK_AND_ASSIGN(auto ny, ny_session->Query(sql));
  EXPECT_EQ(ny->schema()->field(1)->type()->ToString(), "timestamp[us, tz=America/New_York]");
  EXPECT_EQ(Scalar(*ny, 2), "19");  // 00:30 UTC is 19:30 the day before in New York

  options.time_zone = "Mars/Olympus_Mons";
  auto bad = DuckDbSession::Open(options);
  ASSERT_TRUE(bad.status().IsInvalid()) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("time_zone"), std::string::npos);
}

TEST(DuckDbSessionTest, OpenRejectsBadOptionsNamingThem) {
  DuckDbSessionOptions bad_memory;
  bad_memory.memory_limit = "lots";
  auto r = DuckDbSession::Open(bad_memory);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("memory_limit"), std::string::npos) << r.status().ToString();

  DuckDbSessionOptions bad_threads;
  bad_threads.threads = -1;
  EXPECT_TRUE(DuckDbSession::Open(bad_threads).status().IsInvalid());
}

TEST(DuckDbSessionTest, SqlErrorsCarryDuckDbMessageAndClass) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  auto syntax = session->Query("SELEC 1");
  ASSERT_TRUE(syntax.status().IsInvalid()) << syntax.status().ToString();
  EXPECT_NE(syntax.status().message().find("syntax error"), std::string::npos);
  ASSERT_NE(GetDuckDbErrorDetail(syntax.status()), nullptr);
  EXPECT_EQ(GetDuckDbErrorDetail(syntax.status())->error_type(), DUCKDB_ERROR_PARSER);

  auto missing = session->Execute("SELECT * FROM no_such_table");
  ASSERT_TRUE(missing.IsInvalid());
  EXPECT_NE(missing.message().find("no_such_table does not exist"), std::string::npos)
      << missing.message();
  EXPECT_EQ(GetDuckDbErrorDetail(missing)->error_type(), DUCKDB_ERROR_CATALOG);

  auto conversion = session->Query("SELECT 'abc'::INTEGER");
  ASSERT_TRUE(conversion.status().IsInvalid()) << conversion.status().ToString();
  EXPECT_EQ(GetDuckDbErrorDetail(conversion.status())->error_type(), DUCKDB_ERROR_CONVERSION);
}

TEST(DuckDbSessionTest, QueryReturnsTypedArrow) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(
      auto got, session->Query("SELECT 42::BIGINT AS a, 'héllo' AS b, NULL::INTEGER AS c, "
                               "DATE '2024-01-02' AS d, [1, 2]::INTEGER[] AS e"));
  auto want_schema =
      arrow::schema({arrow::field("a", arrow::int64()), arrow::field("b", arrow::utf8()),
                     arrow::field("c", arrow::int32()), arrow::field("d", arrow::date32()),
                     arrow::field("e", arrow::list(arrow::field("l", arrow::int32())))});
  EXPECT_TRUE(got->schema()->Equals(*want_schema)) << got->schema()->ToString();
  EXPECT_EQ(RowStrings(*got),
            std::vector<std::string>{"42 | héllo | ∅ | 2024-01-02 | list<l: int32>[1, 2]"});
}

TEST(DuckDbSessionTest, QueryOfManyRowsComesBackCompleteInVectorSizedChunks) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(auto got,
                             session->Query("SELECT i FROM range(10000) t(i) ORDER BY i"));
  ASSERT_EQ(got->num_rows(), 10000);
  for (const auto& chunk : got->column(0)->chunks()) EXPECT_LE(chunk->length(), 2048);
  auto ids =
      std::static_pointer_cast<arrow::Int64Array>(*arrow::Concatenate(got->column(0)->chunks()));
  for (int64_t i = 0; i < 10000; ++i) ASSERT_EQ(ids->Value(i), i);
}

TEST(DuckDbSessionTest, EmptyResultKeepsSchema) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(auto got, session->Query("SELECT 1::SMALLINT AS x WHERE false"));
  EXPECT_EQ(got->num_rows(), 0);
  EXPECT_TRUE(got->schema()->Equals(*arrow::schema({arrow::field("x", arrow::int16())})));
}

TEST(DuckDbSessionTest, MultiStatementQueryReturnsTheLastResult) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(
      auto got, session->Query("CREATE TABLE x AS SELECT 7 AS a; INSERT INTO x VALUES (8); "
                               "SELECT a FROM x ORDER BY a"));
  EXPECT_EQ(RowStrings(*got), (std::vector<std::string>{"7", "8"}));
}

TEST(DuckDbSessionTest, StreamingGivesTheSameRowsAsQuery) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  const std::string sql = "SELECT i, i % 7 AS m, 'v' || i AS s FROM range(100000) t(i) ORDER BY i";
  THUND_ASSERT_OK_AND_ASSIGN(auto materialized, session->Query(sql));
  THUND_ASSERT_OK_AND_ASSIGN(auto reader, session->QueryStream(sql));
  THUND_ASSERT_OK_AND_ASSIGN(auto streamed, reader->ToTable());
  EXPECT_TRUE(TablesEqualOrdered(*materialized, *streamed));
}

TEST(DuckDbSessionTest, StreamingErrorRaisedWhileReadingIsReported) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  auto reader = session->QueryStream(
      "SELECT CASE WHEN i = 90000 THEN error('boom at 90000') ELSE i END AS v "
      "FROM range(100000) t(i)");
  arrow::Status st = reader.status();
  if (st.ok()) st = (*reader)->ToTable().status();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("boom at 90000"), std::string::npos) << st.ToString();
}

TEST(DuckDbSessionTest, StreamingRejectsSeveralStatements) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  EXPECT_FALSE(session->QueryStream("SELECT 1; SELECT 2").ok());
}

TEST(DuckDbSessionTest, StreamingReaderOutlivesTheSession) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(auto reader, session->QueryStream("SELECT i FROM range(5000) t(i)"));
  session.reset();
  THUND_ASSERT_OK_AND_ASSIGN(auto table, reader->ToTable());
  EXPECT_EQ(table->num_rows(), 5000);
}

TEST(DuckDbSessionTest, OpenStreamBlocksOtherStatementsInsteadOfLosingRows) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(auto reader, session->QueryStream("SELECT i FROM range(100000) t(i)"));
  std::shared_ptr<arrow::RecordBatch> batch;
  THUND_ASSERT_OK(reader->ReadNext(&batch));
  ASSERT_NE(batch, nullptr);
  int64_t rows = batch->num_rows();
  // Running SQL now would make DuckDB end the stream early; the session refuses.
  auto blocked = session->Execute("SELECT 1");
  EXPECT_TRUE(blocked.IsInvalid()) << blocked.ToString();
  EXPECT_NE(blocked.message().find("streaming query result"), std::string::npos);
  EXPECT_FALSE(session->Query("SELECT 1").ok());
  EXPECT_FALSE(session->QueryStream("SELECT 1").ok());
  // The stream is intact: every row arrives.
  while (true) {
    THUND_ASSERT_OK(reader->ReadNext(&batch));
    if (batch == nullptr) break;
    rows += batch->num_rows();
  }
  EXPECT_EQ(rows, 100000);
  // Exhausted: the session is usable again.
  THUND_ASSERT_OK(session->Execute("SELECT 1"));
}

TEST(DuckDbSessionTest, ClosingOrDroppingAStreamReleasesTheSession) {
  auto session = Open();
  ASSERT_NE(session, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(auto reader, session->QueryStream("SELECT 1"));
  THUND_ASSERT_OK(reader->Close());
  THUND_ASSERT_OK(session->Execute("SELECT 1"));
  THUND_ASSERT_OK_AND_ASSIGN(auto dropped, session->QueryStream("SELECT 2"));
  dropped.reset();
  THUND_ASSERT_OK(session->Execute("SELECT 1"));
}

}  // namespace
}  // namespace thund::engine

namespace thund::engine {
namespace {

TEST(DuckDbSessionQueryInt64, ReturnsTheOneValueAndRefusesAnythingElse) {
  auto session = DuckDbSession::Open();
  ASSERT_TRUE(session.ok());
  auto n = (*session)->QueryInt64("SELECT count(*) FROM range(1234)");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1234);
  auto small = (*session)->QueryInt64("SELECT 7::TINYINT");
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(*small, 7);
  EXPECT_FALSE((*session)->QueryInt64("SELECT NULL::BIGINT").ok());
  EXPECT_FALSE((*session)->QueryInt64("SELECT * FROM range(2)").ok());
  EXPECT_FALSE((*session)->QueryInt64("SELECT 1 WHERE false").ok());
}

}  // namespace
}  // namespace thund::engine
