// File drop errors: files whose columns differ, malformed rows, bad options;
// and declared schemas (widening casts, types given to CSV columns).
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/io/parquet_io.h"
#include "engine/stream/stream_source.h"
#include "engine/table_compare.h"
#include "stream/file_drop_fixture.h"

namespace thund::engine::stream {
namespace {

using testing::TempDir;
using testing::WriteText;
namespace fs = std::filesystem;

::testing::AssertionResult Mentions(const arrow::Status& st,
                                    const std::vector<std::string>& pieces) {
  if (st.ok()) return ::testing::AssertionFailure() << "expected an error, got OK";
  for (const auto& p : pieces) {
    if (st.message().find(p) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << p << "' not in: " << st.message();
    }
  }
  return ::testing::AssertionSuccess();
}

class FileDropErrorTest : public testing::FileDropFixture {
 protected:
  arrow::Status NextStatus(StreamSource& src) { return src.Next({true}).status(); }
};

TEST_F(FileDropErrorTest, FileWithOtherColumnsIsAClearErrorAndStaysPending) {
  WriteText(dir_.File("a.csv"), "id,name\n1,x\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  ASSERT_TRUE(src->Next({}).ok());
  const std::string pos = src->Position();
  WriteText(dir_.File("b.csv"), "id,other\n2,y\n");
  auto st = NextStatus(*src);
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_TRUE(Mentions(
      st, {"flow 'ingest'", dir_.File("b.csv"), "expected (id bigint, name string)",
           dir_.File("a.csv"), "found (id bigint, other string)", "column 'name' is missing",
           "column 'other' is not expected", "Move the file", "declare the dataset's schema"}));
  EXPECT_EQ(src->Position(), pos);            // nothing taken
  EXPECT_TRUE(NextStatus(*src).IsInvalid());  // not skipped silently either
}

TEST_F(FileDropErrorTest, AnErrorTakesNoneOfTheTriggersFiles) {
  WriteText(dir_.File("a.csv"), "id,name\n1,x\n");
  WriteText(dir_.File("b.csv"), "id,name\n2,y,extra\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  EXPECT_TRUE(NextStatus(*src).IsInvalid());
  EXPECT_EQ(src->Position(), "");
  EXPECT_EQ(src->schema(), nullptr);
}

TEST_F(FileDropErrorTest, MalformedRowsNameFileAndLine) {
  WriteText(dir_.File("a.csv"), "id,name\n1,a\n2,b,c\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  EXPECT_TRUE(Mentions(NextStatus(*src), {"flow 'ingest'", dir_.File("a.csv"), "line 3",
                                          "expected 2 columns, found 3"}));

  TempDir json_dir;
  WriteText(json_dir.File("j.json"), "{\"id\": 1}\n{\"id\": \n{\"id\": 3}\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto json, Make("json", {}, json_dir.path().string()));
  EXPECT_TRUE(Mentions(NextStatus(*json), {json_dir.File("j.json"), "line 2"}));
}

TEST_F(FileDropErrorTest, ValueNotMatchingADeclaredTypeNamesTheLine) {
  target_.WithSchema(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())}));
  WriteText(dir_.File("a.csv"), "id,name\n1,a\n2,b\nthree,c\n4,d\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  EXPECT_TRUE(Mentions(NextStatus(*src), {dir_.File("a.csv"), "line 4", "column 'id'"}));
}

// Latin-1 bytes in a CSV or JSON drop: an error at the line and column of the
// first one, the row shown with the byte escaped; nothing is taken.
TEST_F(FileDropErrorTest, BytesThatAreNotUtf8NameTheLineAndColumn) {
  WriteText(dir_.File("a.csv"), "id,name\n1,a\n2,caf\xE9\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  EXPECT_TRUE(Mentions(NextStatus(*src),
                       {"flow 'ingest'", dir_.File("a.csv"),
                        "has bytes that are not UTF-8 at line 3, column 6 (2,caf\\xE9)",
                        "save the file as UTF-8"}));
  EXPECT_EQ(src->Position(), "");

  TempDir json_dir;
  WriteText(json_dir.File("j.json"), "{\"id\": 1, \"s\": \"x\"}\n{\"id\": 2, \"s\": \"\xFF\"}\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto json, Make("json", {}, json_dir.path().string()));
  EXPECT_TRUE(Mentions(NextStatus(*json), {json_dir.File("j.json"),
                                           "not UTF-8 at line 2, column 17",
                                           "({\"id\": 2, \"s\": \"\\xFF\"})"}));
}

// Found by fuzz_drop_reader: a row that is a bare `null` crashed Arrow's JSON
// parser (SIGSEGV); every row must be an object, and one that is not is an
// error at its line.
TEST_F(FileDropErrorTest, JsonRowThatIsNotAnObjectNamesTheLine) {
  WriteText(dir_.File("j.json"), "{\"id\": 1}\nnull\n{\"id\": 3}\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("json"));
  EXPECT_TRUE(Mentions(NextStatus(*src), {dir_.File("j.json"),
                                          "malformed row at line 2: a row must be a JSON "
                                          "object (null)"}));
  EXPECT_EQ(src->Position(), "");
}

TEST_F(FileDropErrorTest, DeclaredSchemaTypesCsvColumnsAndWidensParquet) {
  auto declared = arrow::schema(
      {arrow::field("id", arrow::int64(), false), arrow::field("code", arrow::utf8())});
  target_.WithSchema(declared);
  WriteText(dir_.File("a.csv"), "code,id\n007,1\n");  // other column order
  arrow::Int32Builder ids;
  arrow::StringBuilder codes;
  THUND_ASSERT_OK(ids.Append(2));
  THUND_ASSERT_OK(codes.Append("010"));
  auto narrow = arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int32()), arrow::field("code", arrow::utf8())}),
      {ids.Finish().ValueOrDie(), codes.Finish().ValueOrDie()});
  TempDir pq;
  THUND_ASSERT_OK(WriteParquetFile(*narrow, pq.File("n.parquet")));

  THUND_ASSERT_OK_AND_ASSIGN(auto csv, Make("csv"));
  EXPECT_TRUE(csv->schema()->Equals(*declared));
  THUND_ASSERT_OK_AND_ASSIGN(auto rows, csv->Next({}));
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(rows->rows->schema()->Equals(*declared));
  EXPECT_EQ(rows->rows->GetColumnByName("code")->GetScalar(0).ValueOrDie()->ToString(), "007");

  THUND_ASSERT_OK_AND_ASSIGN(auto parquet, Make("parquet", {}, pq.path().string()));
  THUND_ASSERT_OK_AND_ASSIGN(auto widened, parquet->Next({}));
  ASSERT_TRUE(widened.has_value());
  EXPECT_TRUE(widened->rows->schema()->Equals(*declared));
  EXPECT_EQ(widened->rows->GetColumnByName("id")->GetScalar(0).ValueOrDie()->ToString(), "2");

  // A type that is not a widening (string into bigint) is an error.
  target_.WithSchema(
      arrow::schema({arrow::field("id", arrow::utf8()), arrow::field("code", arrow::int64())}));
  THUND_ASSERT_OK_AND_ASSIGN(auto strict, Make("parquet", {}, pq.path().string()));
  EXPECT_TRUE(
      Mentions(NextStatus(*strict), {pq.File("n.parquet"), "declared by dataset 'events'",
                                     "column 'id' is (id int), expected (id string)",
                                     "column 'code' is (code string), expected (code bigint)"}));
}

TEST_F(FileDropErrorTest, NullInANotNullDeclaredColumn) {
  target_.WithSchema(arrow::schema({arrow::field("id", arrow::int64(), false)}));
  WriteText(dir_.File("a.csv"), "id\n1\nNULL\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  EXPECT_TRUE(Mentions(NextStatus(*src), {dir_.File("a.csv"), "NULLs in column 'id'"}));
}

TEST_F(FileDropErrorTest, BadOptionsAndPaths) {
  struct Case {
    std::string format;
    StringMap options;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"", {}, "file drop has no format; use parquet, csv or json"},
      {"csv",
       {{"quote", "'"}},
       "option 'quote' is unknown; valid options: max_files_per_trigger, min_file_age_ms, "
       "header, delimiter"},
      {"parquet",
       {{"header", "true"}},
       "option 'header' is unknown; valid options: max_files_per_trigger, min_file_age_ms"},
      {"csv",
       {{"max_files_per_trigger", "0"}},
       "max_files_per_trigger = '0': must be an integer >= 1"},
      {"csv", {{"max_files_per_trigger", "two"}}, "max_files_per_trigger = 'two'"},
      {"json", {{"min_file_age_ms", "-1"}}, "min_file_age_ms = '-1': must be an integer >= 0"},
      {"csv", {{"header", "yes"}}, "header = 'yes': use true or false"},
      {"csv", {{"delimiter", "ab"}}, "delimiter = 'ab': must be exactly one character"},
      {"csv", {{"bad_rows", "skip"}}, "bad_rows is not supported for file drops"},
  };
  for (const auto& c : cases) {
    auto src = Make(c.format, c.options);
    EXPECT_TRUE(src.status().IsInvalid()) << c.expected;
    EXPECT_TRUE(Mentions(src.status(), {"flow 'ingest'", c.expected}));
  }
  THUND_ASSERT_OK_AND_ASSIGN(auto missing, Make("csv", {}, dir_.File("nope")));
  EXPECT_TRUE(
      Mentions(NextStatus(*missing), {"flow 'ingest'", dir_.File("nope"), "does not exist"}));
  auto batch = Make("csv", {}, "", /*file_drop=*/false);
  EXPECT_TRUE(Mentions(batch.status(), {"flow 'ingest'", "not as a stream"}));
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  EXPECT_TRUE(Mentions(src->Restore("{\"offset\": 3}"), {"flow 'ingest'", "file-drop position"}));
}

TEST_F(FileDropErrorTest, KafkaIsNotSupportedYet) {
  KafkaSource kafka;
  kafka.bootstrap_servers = "localhost:9092";
  kafka.topic = "t";
  flow_ = Flow::FromSource("k", "events", kafka);
  StreamSourceContext ctx;
  ctx.flow = &flow_;
  auto src = MakeStreamSource(*flow_.source, ctx);
  EXPECT_TRUE(src.status().IsNotImplemented());
  EXPECT_TRUE(Mentions(src.status(), {"flow 'k'", "kafka"}));
}

}  // namespace
}  // namespace thund::engine::stream
