// RegisterArrow / Unregister: naming, replacement, failure atomicity and lifetime.

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "engine/duckdb/duckdb_session.h"
#include "engine/idkv_data.h"
#include "engine/table_compare.h"

namespace thund::engine {
namespace {

using testing::IdKvSchema;
using testing::MakeIdKvBatches;
using testing::RowStrings;

std::unique_ptr<DuckDbSession> Open() {
  DuckDbSessionOptions options;
  options.threads = 2;
  auto session = DuckDbSession::Open(options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).ValueUnsafe() : nullptr;
}

std::shared_ptr<arrow::Table> Ints(const std::string& name, const std::string& json) {
  return arrow::Table::Make(arrow::schema({arrow::field(name, arrow::int64())}),
                            {*arrow::json::ArrayFromJSONString(arrow::int64(), json)});
}

std::vector<std::string> Rows(DuckDbSession& s, const std::string& sql) {
  auto t = s.Query(sql);
  EXPECT_TRUE(t.ok()) << sql << ": " << t.status().ToString();
  return t.ok() ? RowStrings(**t) : std::vector<std::string>{};
}

TEST(ArrowRegistrationTest, NamesAreListedAndCaseInsensitive) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  THUND_ASSERT_OK(s->RegisterArrow("Orders", Ints("a", "[1]")));
  THUND_ASSERT_OK(s->RegisterArrow("items", Ints("a", "[2]")));
  EXPECT_EQ(s->RegisteredNames(), (std::vector<std::string>{"Orders", "items"}));
  EXPECT_TRUE(s->IsRegistered("ORDERS"));
  EXPECT_EQ(Rows(*s, "SELECT a FROM orders"), std::vector<std::string>{"1"});
  // Same name to SQL: replaces.
  THUND_ASSERT_OK(s->RegisterArrow("orders", Ints("b", "[3, 4]")));
  EXPECT_EQ(s->RegisteredNames(), (std::vector<std::string>{"items", "orders"}));
  EXPECT_EQ(Rows(*s, "SELECT b FROM Orders ORDER BY b"), (std::vector<std::string>{"3", "4"}));
}

TEST(ArrowRegistrationTest, AwkwardNamesAreQuotedCorrectly) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  const std::string name = "my \"odd\" table's name; DROP";
  THUND_ASSERT_OK(s->RegisterArrow(name, Ints("select", "[5]")));
  EXPECT_EQ(Rows(*s, "SELECT \"select\" FROM \"my \"\"odd\"\" table's name; DROP\""),
            std::vector<std::string>{"5"});
  THUND_ASSERT_OK(s->Unregister(name));
  EXPECT_FALSE(s->IsRegistered(name));
}

TEST(ArrowRegistrationTest, ReplacingWithANewSchemaChangesTheView) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  THUND_ASSERT_OK(s->RegisterArrow("t", Ints("a", "[1]")));
  THUND_ASSERT_OK(s->RegisterArrow("t", IdKvSchema(), MakeIdKvBatches({3})));
  EXPECT_EQ(Rows(*s, "SELECT id FROM t ORDER BY id"), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_FALSE(s->Query("SELECT a FROM t").ok());
}

TEST(ArrowRegistrationTest, UnregisterDropsTheViewAndUnknownNamesAreKeyErrors) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  THUND_ASSERT_OK(s->RegisterArrow("t", Ints("a", "[1]")));
  THUND_ASSERT_OK(s->Unregister("T"));
  EXPECT_TRUE(s->RegisteredNames().empty());
  auto gone = s->Query("SELECT * FROM t");
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.status().message().find("does not exist"), std::string::npos);
  EXPECT_TRUE(s->Unregister("t").IsKeyError());
}

TEST(ArrowRegistrationTest, ScanningAnUnknownNameSaysWhatIsRegistered) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  THUND_ASSERT_OK(s->RegisterArrow("alpha", Ints("a", "[1]")));
  auto r = s->Query("SELECT * FROM thund_arrow_scan('beta')");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no Arrow table named 'beta'"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("registered: alpha"), std::string::npos);
}

TEST(ArrowRegistrationTest, FailedRegistrationKeepsThePreviousData) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  THUND_ASSERT_OK(s->RegisterArrow("t", Ints("a", "[1, 2]")));
  auto bad = arrow::schema({arrow::field("h", arrow::float16())});
  THUND_ASSERT_OK_AND_ASSIGN(auto empty_bad, arrow::Table::MakeEmpty(bad));
  EXPECT_FALSE(s->RegisterArrow("t", empty_bad).ok());
  EXPECT_EQ(Rows(*s, "SELECT a FROM t ORDER BY a"), (std::vector<std::string>{"1", "2"}));
}

TEST(ArrowRegistrationTest, NameTakenByADuckDbTableIsRefused) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  THUND_ASSERT_OK(s->Execute("CREATE TEMP TABLE clash AS SELECT 42 AS x"));
  auto st = s->RegisterArrow("clash", Ints("a", "[1]"));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot register Arrow table 'clash'"), std::string::npos)
      << st.ToString();
  EXPECT_FALSE(s->IsRegistered("clash"));
  EXPECT_EQ(Rows(*s, "SELECT x FROM clash"), std::vector<std::string>{"42"});
}

TEST(ArrowRegistrationTest, BadInputsAreRejectedWithAReason) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->RegisterArrow("", Ints("a", "[1]")).IsInvalid());
  EXPECT_TRUE(s->RegisterArrow("t", std::shared_ptr<arrow::Table>()).IsInvalid());
  auto no_columns = arrow::Table::Make(arrow::schema(arrow::FieldVector{}),
                                       std::vector<std::shared_ptr<arrow::Array>>{}, 3);
  EXPECT_TRUE(s->RegisterArrow("t", no_columns).IsInvalid());
  auto dup = arrow::Table::Make(
      arrow::schema({arrow::field("Key", arrow::int64()), arrow::field("key", arrow::int64())}),
      {*arrow::json::ArrayFromJSONString(arrow::int64(), "[1]"),
       *arrow::json::ArrayFromJSONString(arrow::int64(), "[2]")});
  auto st = s->RegisterArrow("t", dup);
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("'Key' and 'key'"), std::string::npos) << st.ToString();
  auto batches = MakeIdKvBatches({2});
  EXPECT_TRUE(s->RegisterArrow("t", arrow::schema({arrow::field("x", arrow::int8())}), batches)
                  .IsInvalid());
  EXPECT_TRUE(s->RegisteredNames().empty());
}

TEST(ArrowRegistrationTest, RegistersFromARecordBatchReaderAndChunkedTables) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  THUND_ASSERT_OK_AND_ASSIGN(
      auto reader, arrow::RecordBatchReader::Make(MakeIdKvBatches({10, 0, 5}), IdKvSchema()));
  THUND_ASSERT_OK(s->RegisterArrow("r", *reader));
  EXPECT_EQ(Rows(*s, "SELECT count(*), max(id) FROM r"), std::vector<std::string>{"15 | 14"});
  // A table whose columns are chunked differently from each other.
  auto a = std::make_shared<arrow::ChunkedArray>(
      arrow::ArrayVector{*arrow::json::ArrayFromJSONString(arrow::int64(), "[1, 2, 3]"),
                         *arrow::json::ArrayFromJSONString(arrow::int64(), "[4]")});
  auto b = std::make_shared<arrow::ChunkedArray>(
      arrow::ArrayVector{*arrow::json::ArrayFromJSONString(arrow::utf8(), R"(["a"])"),
                         *arrow::json::ArrayFromJSONString(arrow::utf8(), R"(["b", "c", "d"])")});
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("n", arrow::int64()), arrow::field("s", arrow::utf8())}), {a, b});
  THUND_ASSERT_OK(s->RegisterArrow("c", table));
  EXPECT_EQ(Rows(*s, "SELECT n, s FROM c ORDER BY n"),
            (std::vector<std::string>{"1 | a", "2 | b", "3 | c", "4 | d"}));
}

TEST(ArrowRegistrationTest, DataLivesExactlyAsLongAsItIsRegistered) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  std::weak_ptr<arrow::Buffer> buffer;
  {
    auto table = Ints("a", "[7, 8, 9]");
    buffer = table->column(0)->chunk(0)->data()->buffers[1];
    THUND_ASSERT_OK(s->RegisterArrow("t", table));
  }
  // The caller dropped its reference: the session keeps the data alive.
  ASSERT_FALSE(buffer.expired());
  EXPECT_EQ(Rows(*s, "SELECT sum(a) FROM t"), std::vector<std::string>{"24"});
  EXPECT_FALSE(buffer.expired());
  THUND_ASSERT_OK(s->Unregister("t"));
  EXPECT_TRUE(buffer.expired());

  {
    auto table = Ints("a", "[1]");
    buffer = table->column(0)->chunk(0)->data()->buffers[1];
    THUND_ASSERT_OK(s->RegisterArrow("t", table));
  }
  s.reset();
  EXPECT_TRUE(buffer.expired());
}

TEST(ArrowRegistrationTest, SessionsAreIndependent) {
  auto s1 = Open();
  auto s2 = Open();
  ASSERT_NE(s1, nullptr);
  ASSERT_NE(s2, nullptr);
  THUND_ASSERT_OK(s1->RegisterArrow("t", Ints("a", "[1]")));
  THUND_ASSERT_OK(s2->RegisterArrow("t", Ints("a", "[2]")));
  EXPECT_EQ(Rows(*s1, "SELECT a FROM t"), std::vector<std::string>{"1"});
  EXPECT_EQ(Rows(*s2, "SELECT a FROM t"), std::vector<std::string>{"2"});
  s1.reset();
  EXPECT_EQ(Rows(*s2, "SELECT a FROM t"), std::vector<std::string>{"2"});
}

TEST(ArrowRegistrationTest, ArrowDataCanBeMaterializedIntoDuckDbTables) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  THUND_ASSERT_OK(s->RegisterArrow("src", IdKvSchema(), MakeIdKvBatches({3000, 1000})));
  THUND_ASSERT_OK(s->Execute("CREATE TABLE copy AS SELECT * FROM src WHERE id % 2 = 0"));
  THUND_ASSERT_OK(s->Unregister("src"));
  // The copy owns its data: the Arrow buffers are gone, the rows remain.
  EXPECT_EQ(Rows(*s, "SELECT count(*), sum(id) FROM copy"),
            std::vector<std::string>{"2000 | 3998000"});
}

}  // namespace
}  // namespace thund::engine

namespace thund::engine {
namespace {

// Registering again under one name, releasing and unregistering give the same
// answers whether views are reused (the fast path) or re-created each time.
TEST(ArrowRegistrationTest, ReusedViewsAnswerAsRecreatedOnes) {
  std::vector<std::vector<std::string>> answers[2];
  for (int reuse = 0; reuse < 2; ++reuse) {
    DuckDbSessionOptions options;
    options.threads = 2;
    options.reuse_arrow_views = reuse == 1;
    auto opened = DuckDbSession::Open(options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    DuckDbSession& s = **opened;
    auto& out = answers[reuse];
    ASSERT_TRUE(s.RegisterArrow("t", Ints("a", "[1, 2]")).ok());
    EXPECT_FALSE(s.ReusesView("t", *arrow::schema({arrow::field("b", arrow::int64())})));
    EXPECT_EQ(s.ReusesView("t", *arrow::schema({arrow::field("a", arrow::int64())})), reuse == 1);
    out.push_back(Rows(s, "SELECT sum(a) FROM t"));
    ASSERT_TRUE(s.RegisterArrow("T", Ints("a", "[5, 6, 7]")).ok());  // same schema
    out.push_back(Rows(s, "SELECT sum(a) FROM t"));
    ASSERT_TRUE(s.RegisterArrow("t", Ints("b", "[10]")).ok());  // another schema
    out.push_back(Rows(s, "SELECT * FROM t"));
    ASSERT_TRUE(s.Release("t").ok());
    auto released = s.Query("SELECT count(*) FROM t");
    // Reused: the view stays and scans no rows; re-created: the name is gone.
    EXPECT_EQ(released.ok(), reuse == 1);
    out.push_back(released.ok() ? RowStrings(**released) : std::vector<std::string>{"gone"});
    ASSERT_TRUE(s.RegisterArrow("t", Ints("b", "[3]")).ok());
    out.push_back(Rows(s, "SELECT b FROM t"));
    ASSERT_TRUE(s.Unregister("t").ok());
    EXPECT_FALSE(s.Query("SELECT * FROM t").ok());
    EXPECT_FALSE(s.ReusesView("t", *arrow::schema({arrow::field("b", arrow::int64())})));
  }
  ASSERT_EQ(answers[0].size(), answers[1].size());
  for (size_t i = 0; i < answers[0].size(); ++i) {
    if (i == 3) continue;  // after Release: no rows (reused) / no table (re-created)
    EXPECT_EQ(answers[0][i], answers[1][i]) << "answer " << i;
  }
  EXPECT_EQ(answers[1][3], std::vector<std::string>{"0"});
  EXPECT_EQ(answers[1][1], std::vector<std::string>{"18"});
}

}  // namespace
}  // namespace thund::engine

namespace thund::engine {
namespace {

// An array whose validity bitmap is cut to the byte, as producers outside
// Arrow's allocator hand them over (DuckDB reads bitmaps in 64-bit words; the
// registration pads them, so ASan builds see no read past the end). NULLs
// and values, nested ones included, come through unchanged.
TEST(ArrowRegistrationTest, ValidityBitmapsCutToTheByteAreReadExactly) {
  auto exact_bitmap = [](const std::vector<bool>& valid) {
    auto buf = *arrow::AllocateBuffer(static_cast<int64_t>((valid.size() + 7) / 8));
    std::memset(buf->mutable_data(), 0, static_cast<size_t>(buf->size()));
    for (size_t i = 0; i < valid.size(); ++i) {
      if (valid[i]) arrow::bit_util::SetBit(buf->mutable_data(), static_cast<int64_t>(i));
    }
    // A slice of the allocation: exactly ceil(n / 8) bytes long.
    return std::shared_ptr<arrow::Buffer>(
        arrow::SliceBuffer(std::shared_ptr<arrow::Buffer>(std::move(buf)), 0,
                           static_cast<int64_t>((valid.size() + 7) / 8)));
  };
  auto values = *arrow::json::ArrayFromJSONString(arrow::int64(), "[1, 2, 3, 4, 5]");
  auto ints = arrow::ArrayData::Make(arrow::int64(), 5,
                                     {exact_bitmap({true, false, true, true, false}),
                                      values->data()->buffers[1]},
                                     2);
  auto child = *arrow::json::ArrayFromJSONString(arrow::utf8(), R"(["a", "b", "c", "d", "e"])");
  auto child_data = child->data()->Copy();
  child_data->buffers[0] = exact_bitmap({true, true, false, true, true});
  child_data->null_count = 1;
  auto st_type = arrow::struct_({arrow::field("s", arrow::utf8())});
  auto st = arrow::ArrayData::Make(st_type, 5, {exact_bitmap({true, true, true, false, true})},
                                   {child_data}, 1);
  auto schema = arrow::schema({arrow::field("i", arrow::int64()), arrow::field("st", st_type)});
  auto batch = arrow::RecordBatch::Make(schema, 5, {ints, st});
  ASSERT_TRUE(batch->ValidateFull().ok());
  auto s = Open();
  ASSERT_TRUE(s->RegisterArrow("cut", schema, {batch}).ok());
  auto rows = Rows(*s, "SELECT i, st.s FROM cut");
  std::sort(rows.begin(), rows.end());
  std::vector<std::string> want = {"1 | a", "∅ | b", "3 | ∅", "4 | ∅", "∅ | e"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(rows, want);
}

}  // namespace
}  // namespace thund::engine
