// File drops: new files per trigger, half-written files left pending, limits,
// ignored names, Restore; content checked against DuckDB reading the files.
#include <arrow/api.h>
#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "engine/duckdb/duckdb_session.h"
#include "engine/io/parquet_io.h"
#include "engine/stream/stream_source.h"
#include "engine/table_compare.h"
#include "stream/file_drop_fixture.h"

namespace thund::engine::stream {
namespace {

using testing::TablesEqualUnordered;
using testing::TempDir;
using testing::WriteText;
namespace fs = std::filesystem;

std::shared_ptr<arrow::Table> IdName(std::vector<int64_t> ids, std::vector<std::string> names) {
  arrow::Int64Builder a;
  arrow::StringBuilder b;
  EXPECT_TRUE(a.AppendValues(ids).ok());
  EXPECT_TRUE(b.AppendValues(names).ok());
  return arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())}),
      {a.Finish().ValueOrDie(), b.Finish().ValueOrDie()});
}

// DuckDB's reading of `sql_table_function` (the oracle).
std::shared_ptr<arrow::Table> Duck(const std::string& from) {
  auto session = DuckDbSession::Open().ValueOrDie();
  auto t = session->Query("SELECT * FROM " + from);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

class FileDropTest : public testing::FileDropFixture {
 protected:
  // The rows of the next trigger (null when there is nothing new).
  std::shared_ptr<arrow::Table> Take(StreamSource& src, TriggerLimit limit = {}) {
    auto got = src.Next(limit);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (!got.ok() || !got->has_value()) return nullptr;
    return (*got)->rows;
  }
};

TEST_F(FileDropTest, TakesFilesAddedBetweenTriggersAndMatchesDuckDb) {
  WriteText(dir_.File("a.csv"), "id,name,score\n1,ann,1.5\n2,bob,2.0\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  EXPECT_EQ(src->schema(), nullptr);
  auto first = Take(*src);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(*Duck("read_csv('" + dir_.File("a.csv") + "')"), *first));
  EXPECT_EQ(Take(*src), nullptr);  // nothing new
  WriteText(dir_.File("b.csv"), "id,name,score\n3,cy,0.25\n");
  WriteText(dir_.File("c.csv"), "id,name,score\n4,di,7\n5,ed,8\n");
  auto second = Take(*src);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(
      *Duck("read_csv(['" + dir_.File("b.csv") + "', '" + dir_.File("c.csv") + "'])"), *second));
  ASSERT_NE(src->schema(), nullptr);
  EXPECT_EQ(src->schema()->ToString(), first->schema()->ToString());
}

TEST_F(FileDropTest, ParquetAndJsonMatchDuckDb) {
  THUND_ASSERT_OK(WriteParquetFile(*IdName({1, 2, 3}, {"a", "b", "c"}), dir_.File("p1.parquet")));
  THUND_ASSERT_OK(WriteParquetFile(*IdName({4}, {"d"}), dir_.File("p2.parquet")));
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("parquet"));
  auto rows = Take(*src);
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(
      TablesEqualUnordered(*Duck("read_parquet('" + dir_.path().string() + "/*.parquet')"), *rows));

  TempDir json_dir;
  WriteText(json_dir.File("e.json"), "{\"id\": 1, \"name\": \"x\"}\n{\"id\": 2, \"name\": null}\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto json, Make("json", {}, json_dir.path().string()));
  auto json_rows = Take(*json);
  ASSERT_NE(json_rows, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(
      *Duck("read_json('" + json_dir.File("e.json") + "', format='newline_delimited')"),
      *json_rows));
}

TEST_F(FileDropTest, HalfWrittenParquetIsSkippedUntilComplete) {
  TempDir scratch;
  THUND_ASSERT_OK(WriteParquetFile(*IdName({1, 2}, {"a", "b"}), scratch.File("full.parquet")));
  const auto size = fs::file_size(scratch.File("full.parquet"));
  std::ifstream in(scratch.File("full.parquet"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  WriteText(dir_.File("x.parquet"), bytes.substr(0, size / 2));
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("parquet"));
  EXPECT_EQ(Take(*src), nullptr);
  EXPECT_EQ(src->Position(), "");
  // Ends with the magic but the footer is cut: still pending, no error.
  WriteText(dir_.File("x.parquet"), bytes.substr(0, 8) + bytes.substr(size - 4));
  EXPECT_EQ(Take(*src), nullptr);
  WriteText(dir_.File("x.parquet"), bytes);
  auto rows = Take(*src);
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(*Duck("read_parquet('" + dir_.File("x.parquet") + "')"), *rows));
}

TEST_F(FileDropTest, CsvOrJsonWithoutTrailingNewlineIsSkippedUntilComplete) {
  WriteText(dir_.File("a.csv"), "id,name\n1,x\n2,y");
  WriteText(dir_.File("b.csv"), "id,name\n3,z\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  auto rows = Take(*src);  // b is complete; a is not
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(*IdName({3}, {"z"}), *rows));
  EXPECT_EQ(Take(*src), nullptr);
  std::ofstream(dir_.File("a.csv"), std::ios::app) << "\n";
  rows = Take(*src);
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(*IdName({1, 2}, {"x", "y"}), *rows));

  TempDir json_dir;
  WriteText(json_dir.File("j.json"), "{\"id\": 1}\n{\"id\": 2");
  THUND_ASSERT_OK_AND_ASSIGN(auto json, Make("json", {}, json_dir.path().string()));
  EXPECT_EQ(Take(*json), nullptr);
  std::ofstream(json_dir.File("j.json"), std::ios::app) << "}\n";
  auto json_rows = Take(*json);
  ASSERT_NE(json_rows, nullptr);
  EXPECT_EQ(json_rows->num_rows(), 2);
}

// Appends a row to a file when it is opened for reading the first time: the
// file changes between the listing and the read.
class GrowingFs : public arrow::fs::LocalFileSystem {
 public:
  arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(
      const std::string& path) override {
    if (!grown_) {
      grown_ = true;
      std::ofstream(path, std::ios::app) << "9,late\n";
    }
    return LocalFileSystem::OpenInputFile(path);
  }
  bool grown_ = false;
};

TEST_F(FileDropTest, FileChangedWhileReadingIsTakenLater) {
  WriteText(dir_.File("a.csv"), "id,name\n1,x\n");
  auto growing = std::make_shared<GrowingFs>();
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv", {}, "", /*file_drop=*/true, growing));
  EXPECT_EQ(Take(*src), nullptr);
  EXPECT_TRUE(growing->grown_);
  auto rows = Take(*src);
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(*IdName({1, 9}, {"x", "late"}), *rows));
}

TEST_F(FileDropTest, IgnoredNamesAreNeverTaken) {
  for (const char* name : {".hidden.csv", "_SUCCESS", "a.csv.tmp", "b.csv.inprogress", "c.csv.crc",
                           "d.csv.partial", "_temporary/e.csv", ".staging/f.csv"}) {
    WriteText(dir_.File(name), "id,name\n7,ignored\n");
  }
  WriteText(dir_.File("sub/real.csv"), "id,name\n1,kept\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv"));
  auto rows = Take(*src);
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(*IdName({1}, {"kept"}), *rows));
  EXPECT_EQ(Take(*src), nullptr);
}

TEST_F(FileDropTest, GlobSelectsMatchingFiles) {
  WriteText(dir_.File("in/a.csv"), "id,name\n1,a\n");
  WriteText(dir_.File("in/b.txt"), "id,name\n2,b\n");
  WriteText(dir_.File("other/c.csv"), "id,name\n3,c\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv", {}, dir_.path().string() + "/in/*.csv"));
  auto rows = Take(*src);
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(*IdName({1}, {"a"}), *rows));
}

TEST_F(FileDropTest, MaxFilesPerTriggerTakesFilesInPathOrder) {
  for (int i = 4; i >= 0; --i) {  // written in reverse: order comes from the paths
    WriteText(dir_.File("f" + std::to_string(i) + ".csv"),
              "id,name\n" + std::to_string(i) + ",n\n");
  }
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv", {{"max_files_per_trigger", "2"}}));
  std::vector<std::vector<int64_t>> ids;
  while (auto rows = Take(*src)) {
    std::vector<int64_t> got;
    for (const auto& c : rows->GetColumnByName("id")->chunks()) {
      auto a = std::static_pointer_cast<arrow::Int64Array>(c);
      for (int64_t i = 0; i < a->length(); ++i) got.push_back(a->Value(i));
    }
    ids.push_back(got);
  }
  EXPECT_EQ(ids, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4}}));

  WriteText(dir_.File("g1.csv"), "id,name\n5,n\n");
  WriteText(dir_.File("g2.csv"), "id,name\n6,n\n");
  WriteText(dir_.File("g3.csv"), "id,name\n7,n\n");
  auto all = Take(*src, TriggerLimit{true});  // take_all ignores the cap
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->num_rows(), 3);
}

TEST_F(FileDropTest, YoungFilesWaitForMinFileAge) {
  WriteText(dir_.File("a.csv"), "id,name\n1,x\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv", {{"min_file_age_ms", "3600000"}}));
  EXPECT_EQ(Take(*src), nullptr);
  fs::last_write_time(dir_.File("a.csv"), fs::file_time_type::clock::now() - std::chrono::hours(2));
  auto rows = Take(*src);
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->num_rows(), 1);
}

TEST_F(FileDropTest, RestoreSkipsFilesTakenByAnEarlierRun) {
  WriteText(dir_.File("a.csv"), "id,name\n1,a\n");
  WriteText(dir_.File("b.csv"), "id,name\n2,b\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto first, Make("csv"));
  ASSERT_NE(Take(*first), nullptr);
  const std::string pos = first->Position();
  EXPECT_NE(pos.find(dir_.File("a.csv")), std::string::npos) << pos;
  EXPECT_NE(pos.find("\"mtime_ns\""), std::string::npos) << pos;

  WriteText(dir_.File("c.csv"), "id,name\n3,c\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto second, Make("csv"));
  THUND_ASSERT_OK(second->Restore(pos));
  auto rows = Take(*second);
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(*IdName({3}, {"c"}), *rows));
  EXPECT_EQ(second->Position().find(dir_.File("a.csv")), pos.find(dir_.File("a.csv")));

  // The schema of the first run carries over: a file with other columns fails.
  WriteText(dir_.File("d.csv"), "other\nx\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto third, Make("csv"));
  THUND_ASSERT_OK(third->Restore(pos));
  auto bad = third->Next({true});
  ASSERT_TRUE(bad.status().IsInvalid());
  EXPECT_NE(bad.status().message().find("d.csv"), std::string::npos);
  EXPECT_NE(bad.status().message().find(dir_.File("a.csv")), std::string::npos)
      << bad.status().message();
}

TEST_F(FileDropTest, CsvHeaderAndDelimiterOptions) {
  WriteText(dir_.File("a.csv"), "1;x\n2;y\n");
  THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv", {{"header", "false"}, {"delimiter", ";"}}));
  auto rows = Take(*src);
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(TablesEqualUnordered(*Duck("read_csv('" + dir_.File("a.csv") +
                                         "', header=false, delim=';', "
                                         "names=['f0', 'f1'])"),
                                   *rows));
}

TEST_F(FileDropTest, RelativePathIsFromTheWorkingDirectory) {
  WriteText(dir_.File("a.csv"), "id,name\n1,a\n");
  const std::string relative = fs::relative(dir_.path(), fs::current_path()).string();
  ASSERT_FALSE(fs::path(relative).is_absolute());
  for (auto filesystem : std::vector<std::shared_ptr<arrow::fs::FileSystem>>{
           nullptr, std::make_shared<arrow::fs::LocalFileSystem>()}) {
    THUND_ASSERT_OK_AND_ASSIGN(auto src, Make("csv", {}, relative, /*file_drop=*/true, filesystem));
    auto rows = Take(*src);
    ASSERT_NE(rows, nullptr);
    EXPECT_TRUE(TablesEqualUnordered(*IdName({1}, {"a"}), *rows));
    EXPECT_NE(src->Position().find(dir_.File("a.csv")), std::string::npos) << src->Position();
  }
}

}  // namespace
}  // namespace thund::engine::stream
