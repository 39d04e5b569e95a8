// Joining Parquet files with their pages unchanged (parquet_join.h) and the
// Thrift compact reader/writer under it (thrift_compact.h). Joined files are
// read back by DuckDB, the oracle, and by thund's own reader; malformed
// footers are errors, never crashes.
#include "engine/keyed/parquet_join.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>

#include <fstream>
#include <iterator>

#include "engine/keyed/data_file_reader.h"
#include "engine/keyed/direct_file.h"
#include "engine/keyed/output_file_writer.h"
#include "engine/keyed/thrift_compact.h"
#include "keyed/keyed_test_util.h"

namespace thund::engine::keyed {
namespace {

using compact::Reader;
using compact::Type;
using compact::Writer;
using testing::Oracle;
using testing::ReadBytes;
using testing::ScratchDir;

std::string FooterOf(const std::string& bytes) {
  uint32_t length = 0;
  std::memcpy(&length, bytes.data() + bytes.size() - 8, 4);
  return bytes.substr(bytes.size() - 8 - length, length);
}

// A struct with a field of every type, ids that skip and go back, a nested
// struct, a long list, a map and bools both as fields and as list elements.
std::string EveryType() {
  Writer w;
  w.BeginStruct();
  w.FieldHeader(1, Type::kTrue);
  w.FieldHeader(2, Type::kFalse);
  w.FieldHeader(3, Type::kByte);
  w.Raw(std::string(1, '\x7f'));
  w.FieldHeader(4, Type::kI16);
  w.Int(-300);
  w.FieldHeader(25, Type::kI32);  // a jump of more than 15
  w.Int(1 << 30);
  w.FieldHeader(6, Type::kI64);  // back down
  w.Int(-(int64_t{1} << 60));
  w.FieldHeader(7, Type::kDouble);
  w.Raw(std::string(8, '\x01'));
  w.FieldHeader(8, Type::kBinary);
  w.Raw(
      std::string("\x03"
                  "abc",
                  4));  // length (a plain varint), bytes
  w.FieldHeader(9, Type::kList);
  w.ListHeader(20, Type::kI32);
  for (int i = 0; i < 20; ++i) w.Int(i * 1000);
  w.FieldHeader(10, Type::kList);
  w.ListHeader(2, Type::kTrue);
  w.Raw(std::string("\x01\x02", 2));
  w.FieldHeader(11, Type::kMap);
  w.Raw(std::string("\x01\x88", 2));  // one entry, binary -> binary
  w.Raw(std::string("\x01k\x01v", 4));
  w.FieldHeader(12, Type::kStruct);
  w.BeginStruct();
  w.FieldHeader(1, Type::kI64);
  w.Int(42);
  w.FieldHeader(300, Type::kSet);
  w.ListHeader(0, Type::kStruct);
  w.EndStruct();
  w.EndStruct();
  return w.Take();
}

TEST(ThriftCompactTest, CopyingEveryFieldGivesTheSameBytes) {
  const std::string bytes = EveryType();
  Reader r(bytes);
  Writer w;
  r.BeginStruct();
  w.BeginStruct();
  int16_t id = 0;
  Type type = Type::kStop;
  std::vector<int16_t> ids;
  while (true) {
    auto more = r.NextField(&id, &type);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) break;
    ids.push_back(id);
    auto raw = r.SkipField(type);
    ASSERT_TRUE(raw.ok()) << raw.status().ToString();
    w.FieldHeader(id, type);
    w.Raw(*raw);
  }
  w.EndStruct();
  EXPECT_TRUE(r.done());
  EXPECT_EQ(ids, (std::vector<int16_t>{1, 2, 3, 4, 25, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(w.bytes(), bytes);
}

TEST(ThriftCompactTest, EveryTruncationIsAnErrorNamingTheOffset) {
  const std::string bytes = EveryType();
  for (size_t n = 0; n < bytes.size(); ++n) {
    Reader r(std::string_view(bytes).substr(0, n));
    auto all = r.SkipElement(Type::kStruct);
    ASSERT_FALSE(all.ok()) << "prefix of " << n << " bytes";
    EXPECT_NE(all.status().message().find("at byte"), std::string::npos) << all.status().ToString();
  }
  Reader whole(bytes);
  EXPECT_TRUE(whole.SkipElement(Type::kStruct).ok());
}

class ParquetJoinTest : public ::testing::Test {
 protected:
  // Writes `rows` rows from `first` with Arrow: 3 row groups, statistics,
  // dictionary pages and (with `page_index`) page indexes.
  std::string WriteWithArrow(const std::string& name, int64_t first, int64_t rows,
                             bool page_index = true) {
    arrow::Int64Builder ids;
    arrow::StringBuilder urls;
    for (int64_t i = first; i < first + rows; ++i) {
      EXPECT_TRUE(ids.Append(i).ok());
      EXPECT_TRUE(urls.Append("https://h" + std::to_string(i % 7) + "/" + std::to_string(i)).ok());
    }
    auto schema =
        arrow::schema({arrow::field("id", arrow::int64()), arrow::field("url", arrow::utf8())});
    auto table = arrow::Table::Make(schema, {*ids.Finish(), *urls.Finish()});
    parquet::WriterProperties::Builder props;
    props.compression(arrow::Compression::SNAPPY);
    if (page_index) props.enable_write_page_index();
    const std::string path = dir_ / name;
    auto out = arrow::io::FileOutputStream::Open(path);
    EXPECT_TRUE(out.ok());
    EXPECT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, rows / 3 + 1,
                                           props.build())
                    .ok());
    EXPECT_TRUE((*out)->Close().ok());
    return path;
  }

  arrow::Status Join(const std::vector<std::string>& sources, const std::string& path) {
    ARROW_ASSIGN_OR_RAISE(auto out, DirectFile::Create(path));
    arrow::Status st = WriteJoinedParquet(fs_, sources, out.get());
    arrow::Status closed = out->Close();
    return st.ok() ? closed : st;
  }

  std::string ReadAll(const std::vector<std::string>& files) {
    std::string list;
    for (const auto& f : files) list += (list.empty() ? "'" : ", '") + f + "'";
    return "SELECT * FROM read_parquet([" + list + "])";
  }

  ScratchDir dir_;
  Oracle oracle_;
  arrow::fs::LocalFileSystem fs_;
};

TEST_F(ParquetJoinTest, JoinedArrowFilesReadAsTheirRowsWithTheirRowGroupsAndStatistics) {
  const std::vector<std::string> parts = {WriteWithArrow("a.parquet", 0, 3000),
                                          WriteWithArrow("b.parquet", 3000, 4500),
                                          WriteWithArrow("c.parquet", 7500, 10)};
  const std::string joined = dir_ / "joined.parquet";
  KEYED_ASSERT_OK(Join(parts, joined));
  EXPECT_EQ(oracle_.Diff(ReadAll(parts), ReadAll({joined})), "");
  const std::string chunks =
      "SELECT row_group_num_rows, path_in_schema, total_compressed_size, stats_min, stats_max "
      "FROM parquet_metadata(";
  EXPECT_EQ(oracle_.Diff(chunks + "['" + parts[0] + "', '" + parts[1] + "', '" + parts[2] + "'])",
                         chunks + "'" + joined + "')"),
            "");
  // thund's reader too, row group by row group, from the moved offsets.
  auto reader = DataFileReader::Open(std::make_shared<arrow::fs::LocalFileSystem>(),
                                     DataFile{joined, FileFormat::kParquet});
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->num_units(), 9);
  int64_t rows = 0;
  for (int u = 0; u < (*reader)->num_units(); ++u) {
    auto batch = (*reader)->ReadUnit(u, nullptr);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    rows += (*batch)->num_rows();
  }
  EXPECT_EQ(rows, 7510);
  // The page indexes (absolute page offsets) are dropped; the sources had them.
  auto source = DataFileReader::Open(std::make_shared<arrow::fs::LocalFileSystem>(),
                                     DataFile{parts[0], FileFormat::kParquet});
  ASSERT_TRUE(source.ok());
  EXPECT_TRUE((*source)
                  ->parquet_footer()
                  ->RowGroup(0)
                  ->ColumnChunk(0)
                  ->GetColumnIndexLocation()
                  .has_value());
  const auto footer = (*reader)->parquet_footer();
  for (int g = 0; g < footer->num_row_groups(); ++g) {
    for (int c = 0; c < footer->num_columns(); ++c) {
      EXPECT_FALSE(footer->RowGroup(g)->ColumnChunk(c)->GetColumnIndexLocation().has_value());
      EXPECT_FALSE(footer->RowGroup(g)->ColumnChunk(c)->GetOffsetIndexLocation().has_value());
    }
  }
}

TEST_F(ParquetJoinTest, FilesThatDifferCannotBeJoinedAndNothingIsWritten) {
  const std::string arrow_file = WriteWithArrow("a.parquet", 0, 100);
  const std::string duck = dir_ / "d.parquet";
  oracle_.Exec("COPY (SELECT i AS id, 'u' || i AS url FROM range(100, 200) t(i)) TO '" + duck +
               "' (FORMAT parquet)");
  const std::string joined = dir_ / "joined.parquet";
  const arrow::Status st = Join({arrow_file, duck}, joined);
  EXPECT_TRUE(st.IsNotImplemented()) << st.ToString();
  EXPECT_EQ(std::filesystem::file_size(joined), 0u);

  // The output writer then decodes them into one file instead.
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("url", arrow::utf8())});
  auto writer = OutputFileWriter::Make(std::make_shared<arrow::fs::LocalFileSystem>(), dir_ / "out",
                                       OutputOptions{}, schema);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  KEYED_ASSERT_OK((*writer)->CopyFiles({arrow_file, duck}, 200));
  KEYED_ASSERT_OK((*writer)->Finish());
  EXPECT_EQ((*writer)->files_committed(), 1);
  EXPECT_EQ(oracle_.Diff(ReadAll({arrow_file, duck}),
                         "SELECT * FROM read_parquet('" + dir_ / "out" + "/*.parquet')"),
            "");
}

TEST_F(ParquetJoinTest, MalformedFootersAreErrorsNotCrashes) {
  const std::string bytes = ReadBytes(WriteWithArrow("a.parquet", 0, 300, /*page_index=*/false));
  const std::string footer = FooterOf(bytes);
  ASSERT_TRUE(JoinFooters({JoinPart{footer, 0}, JoinPart{footer, 1000}}).ok());
  for (size_t n : {size_t{0}, size_t{1}, footer.size() / 3, footer.size() / 2, footer.size() - 1}) {
    auto joined =
        JoinFooters({JoinPart{footer, 0}, JoinPart{std::string_view(footer).substr(0, n), 9}});
    EXPECT_FALSE(joined.ok()) << "footer cut to " << n << " bytes";
  }
  std::string garbage = footer;
  for (size_t i = 0; i < garbage.size(); i += 7) garbage[i] = '\xff';
  EXPECT_FALSE(JoinFooters({JoinPart{garbage, 0}}).ok());
  // A file that is no Parquet at all, named in the error.
  const std::string text = dir_ / "text.parquet";
  std::ofstream(text) << "this is not parquet at all";
  auto out = DirectFile::Create(dir_ / "x.parquet");
  ASSERT_TRUE(out.ok());
  const arrow::Status st = WriteJoinedParquet(fs_, {text}, out->get());
  EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_NE(st.message().find(text), std::string::npos) << st.ToString();
  KEYED_ASSERT_OK((*out)->Close());
}

}  // namespace
}  // namespace thund::engine::keyed
