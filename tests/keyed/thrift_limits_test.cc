// The Thrift compact codec on hand-built malformed footers: nesting beyond
// the depth limit is an error for every kind of container (never a stack
// overflow), and a footer field the Parquet joiner does not know is refused
// (the files are then decoded and written anew, with an event saying why),
// never copied blind; a list declaring another element type than
// parquet.thrift's is refused too, and the joined footer is checked as
// Arrow's reader sees it.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>
#include <parquet/metadata.h>

#include <cstring>
#include <fstream>

#include "engine/keyed/output_file_writer.h"
#include "engine/keyed/parquet_join.h"
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

std::string Repeat(const std::string& piece, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += piece;
  return out;
}

// `depth` nested values of one container kind, innermost empty, as the value
// of a field of type `type`.
std::string Nested(Type type, size_t depth) {
  switch (type) {
    case Type::kList:  // a list of 1 list ... then an empty list of i32
      return Repeat("\x19", depth - 1) + std::string("\x05", 1);
    case Type::kSet:
      return Repeat("\x1a", depth - 1) + std::string("\x05", 1);
    case Type::kMap:  // a map of 1 entry i32 -> map ... then an empty map
      return Repeat(std::string("\x01\x5b\x02", 3), depth - 1) + std::string("\x00", 1);
    case Type::kStruct:  // field 1 of type struct ... then a stop byte per level
      return Repeat("\x1c", depth - 1) + Repeat(std::string("\x00", 1), depth);
    default:
      return "";
  }
}

TEST(ThriftLimitsTest, EveryContainerKindNestedTooDeepIsAnErrorNotACrash) {
  for (Type type : {Type::kList, Type::kSet, Type::kMap, Type::kStruct}) {
    SCOPED_TRACE(static_cast<int>(type));
    // Just under the limit: read whole.
    const std::string fine = Nested(type, Reader::kMaxDepth - 1);
    Reader ok(fine);
    auto skipped = ok.SkipField(type);
    ASSERT_TRUE(skipped.ok()) << skipped.status().ToString();
    EXPECT_TRUE(ok.done());
    // Far beyond it (a stack overflow without the limit): an error.
    for (size_t depth : {Reader::kMaxDepth + 1, size_t{100000}}) {
      const std::string deep = Nested(type, depth);
      Reader r(deep);
      auto st = r.SkipField(type);
      ASSERT_FALSE(st.ok()) << depth;
      EXPECT_NE(st.status().message().find("nested too deep"), std::string::npos)
          << st.status().ToString();
    }
  }
  // Mixed kinds count together: lists of maps of structs...
  std::string mixed;
  for (size_t i = 0; i < 2000; ++i) mixed += i % 2 ? std::string("\x01\x59\x0c", 3) : "\x1b";
  Reader r(mixed);
  auto st = r.SkipField(Type::kList);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("nested too deep"), std::string::npos)
      << st.status().ToString();
}

// Copies the struct `bytes` (one struct's encoding), recursing into the field
// path `path` (struct fields, or lists of structs), and at its end adds field
// `id` (an i64) before the stop byte. id 0 adds nothing.
std::string AddField(std::string_view bytes, const std::vector<int16_t>& path, int16_t id,
                     size_t* used = nullptr) {
  Reader r(bytes);
  Writer w;
  r.BeginStruct();
  w.BeginStruct();
  int16_t field = 0;
  Type type = Type::kStop;
  while (true) {
    auto more = r.NextField(&field, &type);
    EXPECT_TRUE(more.ok());
    if (!more.ok() || !*more) break;
    if (!path.empty() && field == path[0]) {
      const std::vector<int16_t> rest(path.begin() + 1, path.end());
      w.FieldHeader(field, type);
      if (type == Type::kList) {
        auto header = r.ReadListHeader();
        EXPECT_TRUE(header.ok());
        w.ListHeader(header->size, header->element);
        for (int64_t e = 0; e < header->size; ++e) {
          const size_t at = r.position();
          size_t n = 0;
          w.Raw(AddField(bytes.substr(at), rest, id, &n));
          auto skipped = r.SkipElement(Type::kStruct);
          EXPECT_TRUE(skipped.ok());
          EXPECT_EQ(skipped->size(), n);
        }
      } else {
        const size_t at = r.position();
        size_t n = 0;
        w.Raw(AddField(bytes.substr(at), rest, id, &n));
        EXPECT_TRUE(r.SkipField(type).ok());
      }
      continue;
    }
    auto raw = r.SkipField(type);
    EXPECT_TRUE(raw.ok());
    w.FieldHeader(field, type);
    w.Raw(*raw);
  }
  if (path.empty() && id != 0) {
    w.FieldHeader(id, Type::kI64);
    w.Int(7);
  }
  w.EndStruct();
  if (used != nullptr) *used = r.position();
  return w.Take();
}

class UnknownFieldTest : public ::testing::Test {
 protected:
  std::string WriteWithArrow(const std::string& name, int64_t first, int64_t rows) {
    arrow::Int64Builder ids;
    arrow::StringBuilder urls;
    for (int64_t i = first; i < first + rows; ++i) {
      EXPECT_TRUE(ids.Append(i).ok());
      EXPECT_TRUE(urls.Append("u" + std::to_string(i)).ok());
    }
    auto schema =
        arrow::schema({arrow::field("id", arrow::int64()), arrow::field("url", arrow::utf8())});
    auto table = arrow::Table::Make(schema, {*ids.Finish(), *urls.Finish()});
    const std::string path = dir_ / name;
    auto out = arrow::io::FileOutputStream::Open(path);
    EXPECT_TRUE(out.ok());
    EXPECT_TRUE(
        parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, rows / 2 + 1).ok());
    EXPECT_TRUE((*out)->Close().ok());
    return path;
  }

  static std::string FooterOf(const std::string& bytes) {
    uint32_t length = 0;
    std::memcpy(&length, bytes.data() + bytes.size() - 8, 4);
    return bytes.substr(bytes.size() - 8 - length, length);
  }

  // The file at `path` with its footer replaced by `footer`.
  static void ReplaceFooter(const std::string& path, const std::string& footer) {
    const std::string bytes = ReadBytes(path);
    uint32_t length = 0;
    std::memcpy(&length, bytes.data() + bytes.size() - 8, 4);
    std::string out = bytes.substr(0, bytes.size() - 8 - length) + footer;
    const uint32_t n = static_cast<uint32_t>(footer.size());
    out.append(reinterpret_cast<const char*>(&n), 4);
    out += "PAR1";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << out;
  }

  ScratchDir dir_;
  Oracle oracle_;
};

TEST_F(UnknownFieldTest, AFieldTheJoinerDoesNotKnowIsRefusedAtEveryLevel) {
  const std::string footer = FooterOf(ReadBytes(WriteWithArrow("a.parquet", 0, 100)));
  // The rewriting itself changes nothing when it adds nothing.
  ASSERT_EQ(AddField(footer, {4, 1, 3}, 0), footer);
  ASSERT_TRUE(JoinFooters({JoinPart{footer, 0}, JoinPart{footer, 500}}).ok());
  struct Level {
    std::vector<int16_t> path;
    const char* name;
  };
  for (const Level& level : {Level{{}, "FileMetaData"}, Level{{4}, "RowGroup"},
                             Level{{4, 1}, "ColumnChunk"}, Level{{4, 1, 3}, "ColumnMetaData"}}) {
    SCOPED_TRACE(level.name);
    const std::string odd = AddField(footer, level.path, 40);
    ASSERT_NE(odd, footer);
    // In either file of the join.
    for (bool first : {true, false}) {
      auto joined = first ? JoinFooters({JoinPart{odd, 0}, JoinPart{footer, 500}})
                          : JoinFooters({JoinPart{footer, 0}, JoinPart{odd, 500}});
      ASSERT_FALSE(joined.ok());
      EXPECT_TRUE(joined.status().IsNotImplemented()) << joined.status().ToString();
      EXPECT_NE(joined.status().message().find(std::string("field 40 of ") + level.name),
                std::string::npos)
          << joined.status().ToString();
    }
  }
  // A known field of the wrong type is refused too.
  std::string retyped = footer;
  Reader r(footer);
  r.BeginStruct();
  int16_t id = 0;
  Type type = Type::kStop;
  ASSERT_TRUE(r.NextField(&id, &type).ok());  // field 1 (version, i32): header at byte 0
  ASSERT_EQ(id, 1);
  ASSERT_EQ(type, Type::kI32);
  retyped[0] = static_cast<char>((retyped[0] & 0xf0) | static_cast<int>(Type::kI64));
  auto joined = JoinFooters({JoinPart{retyped, 0}, JoinPart{retyped, 500}});
  ASSERT_FALSE(joined.ok());
  EXPECT_NE(joined.status().message().find("field 1 of FileMetaData has type"), std::string::npos)
      << joined.status().ToString();
}

TEST_F(UnknownFieldTest, FilesWithAnUnknownFieldAreWrittenByThePlainPathWithAnEvent) {
  const std::string a = WriteWithArrow("a.parquet", 0, 300);
  const std::string b = WriteWithArrow("b.parquet", 300, 200);
  ReplaceFooter(b, AddField(FooterOf(ReadBytes(b)), {4, 1, 3}, 40));
  // Arrow's own reader skips the field: the file is a valid Parquet file.
  EXPECT_EQ(oracle_.Int("SELECT count(*) FROM read_parquet('" + b + "')"), 200);
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("url", arrow::utf8())});
  auto writer = OutputFileWriter::Make(std::make_shared<arrow::fs::LocalFileSystem>(),
                                       dir_ / "out", OutputOptions{}, schema);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  std::vector<std::string> why;
  (*writer)->set_on_fallback([&](const std::string& reason) { why.push_back(reason); });
  KEYED_ASSERT_OK((*writer)->CopyFiles({a, b}, 500));
  KEYED_ASSERT_OK((*writer)->Finish());
  ASSERT_EQ(why.size(), 1u);
  EXPECT_NE(why[0].find("field 40 of ColumnMetaData"), std::string::npos) << why[0];
  EXPECT_EQ((*writer)->files_committed(), 1);
  EXPECT_EQ(oracle_.Diff("SELECT * FROM read_parquet(['" + a + "', '" + b + "'])",
                         "SELECT * FROM read_parquet('" + dir_ / "out" + "/*.parquet')"),
            "");
  // The output is a file thund encoded, not a copy of the odd footer.
  EXPECT_EQ(oracle_.Int("SELECT count(*) FROM parquet_metadata('" + dir_ / "out" +
                        "/*.parquet') WHERE row_group_num_rows = 151"),
            0);
}


// The byte offset of the list header of ColumnMetaData.encodings (field 2)
// of the first column of the first row group in `footer`.
size_t EncodingsListAt(const std::string& footer) {
  Reader r(footer);
  int16_t id = 0;
  Type type = Type::kStop;
  auto enter = [&](int16_t want) {  // skips fields up to `want`, leaves r at its value
    while (true) {
      auto more = r.NextField(&id, &type);
      if (!more.ok() || !*more) {
        ADD_FAILURE() << "field " << want << " not found";
        return;
      }
      if (id == want) return;
      EXPECT_TRUE(r.SkipField(type).ok());
    }
  };
  r.BeginStruct();
  enter(4);  // FileMetaData.row_groups
  EXPECT_TRUE(r.ReadListHeader().ok());
  r.BeginStruct();
  enter(1);  // RowGroup.columns
  EXPECT_TRUE(r.ReadListHeader().ok());
  r.BeginStruct();
  enter(3);  // ColumnChunk.meta_data
  r.BeginStruct();
  enter(2);  // ColumnMetaData.encodings
  return r.position();
}

// fuzz_thrift_footer's finding (now fuzz/corpus/thrift_footer/
// list_element_type_mismatch): a list whose header names another element
// type than parquet.thrift's. Thrift's generated readers (Arrow's) read the
// elements as the schema's type anyway; our codec framed them by the header,
// so the two read different fields from the same bytes and the joined footer
// was one Arrow refused. Now such a list is refused before anything is copied.
TEST_F(UnknownFieldTest, AListDeclaringAnotherElementTypeIsRefused) {
  const std::string footer = FooterOf(ReadBytes(WriteWithArrow("a.parquet", 0, 100)));
  const size_t at = EncodingsListAt(footer);
  ASSERT_EQ(static_cast<uint8_t>(footer[at]) & 0x0f, static_cast<int>(Type::kI32));
  // encodings as list<bool>: one byte per element, like the small i32s there,
  // so our codec still frames it; refused all the same.
  std::string odd = footer;
  odd[at] = static_cast<char>((odd[at] & 0xf0) | static_cast<int>(Type::kTrue));
  for (bool first : {true, false}) {
    auto joined = first ? JoinFooters({JoinPart{odd, 0}, JoinPart{footer, 500}})
                        : JoinFooters({JoinPart{footer, 0}, JoinPart{odd, 500}});
    ASSERT_FALSE(joined.ok());
    EXPECT_TRUE(joined.status().IsNotImplemented()) << joined.status().ToString();
    EXPECT_NE(joined.status().message().find("list field 2 of ColumnMetaData declares elements "
                                             "of type 1, not 5"),
              std::string::npos)
        << joined.status().ToString();
  }
  // The fuzzer's input: Arrow reads its footer (four row groups, 50 rows);
  // the join is refused (the plain path), never a footer Arrow refuses.
  const std::string data = ReadBytes(std::string(THUND_SOURCE_DIR) +
                                     "/fuzz/corpus/thrift_footer/list_element_type_mismatch");
  const std::string found = data.substr(1);
  auto md = parquet::FileMetaData::Make(found.data(), static_cast<int64_t>(found.size()));
  EXPECT_EQ(md->num_rows(), 50);
  auto joined = JoinFooters({JoinPart{found, 0}, JoinPart{found, 0}});
  ASSERT_FALSE(joined.ok());
  EXPECT_TRUE(joined.status().IsNotImplemented()) << joined.status().ToString();
  EXPECT_NE(joined.status().message().find("list field 2 of ColumnMetaData"), std::string::npos)
      << joined.status().ToString();
}

// The check WriteJoinedParquet makes with Arrow's reader: a footer it cannot
// parse, or one whose row groups or page offsets are not the parts' moved by
// their shifts, is NotImplemented (the plain path), not an error of the copy.
TEST_F(UnknownFieldTest, TheJoinedFooterIsCheckedAsArrowReadsIt) {
  const std::string a = FooterOf(ReadBytes(WriteWithArrow("a.parquet", 0, 100)));
  const std::string b = FooterOf(ReadBytes(WriteWithArrow("b.parquet", 100, 60)));
  const std::vector<JoinPart> parts = {JoinPart{a, 0}, JoinPart{b, 4000}};
  auto joined = JoinFooters(parts);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  KEYED_ASSERT_OK(CheckJoinedAsArrowReadsIt(parts, *joined));
  // Offsets not moved as the parts say.
  const std::vector<JoinPart> wrong_shift = {JoinPart{a, 0}, JoinPart{b, 4096}};
  arrow::Status moved = CheckJoinedAsArrowReadsIt(wrong_shift, *joined);
  EXPECT_TRUE(moved.IsNotImplemented()) << moved.ToString();
  EXPECT_NE(moved.message().find("elsewhere than its file does"), std::string::npos)
      << moved.ToString();
  // Parts missing or in another order.
  EXPECT_TRUE(CheckJoinedAsArrowReadsIt({JoinPart{b, 0}, JoinPart{a, 4000}}, *joined)
                  .IsNotImplemented());
  // Bytes Arrow cannot parse.
  JoinedFooter garbage = *joined;
  garbage.bytes = garbage.bytes.substr(0, garbage.bytes.size() / 2);
  arrow::Status broken = CheckJoinedAsArrowReadsIt(parts, garbage);
  EXPECT_TRUE(broken.IsNotImplemented()) << broken.ToString();
  EXPECT_NE(broken.message().find("does not parse"), std::string::npos) << broken.ToString();
}

}  // namespace
}  // namespace thund::engine::keyed
