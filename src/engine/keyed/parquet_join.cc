#include "engine/keyed/parquet_join.h"

#include <parquet/exception.h>
#include <parquet/metadata.h>

#include <cstring>
#include <memory>
#include <utility>

#include "engine/keyed/thrift_compact.h"

namespace thund::engine::keyed {
namespace {

using compact::Reader;
using compact::Type;
using compact::Writer;

// Field ids of parquet.thrift's structs that joining reads or changes.
namespace file_meta {
constexpr int16_t kNumRows = 3, kRowGroups = 4, kEncryption = 8, kSigningKey = 9;
}
namespace row_group {
constexpr int16_t kColumns = 1, kFileOffset = 5, kOrdinal = 7;
}
namespace column_chunk {
constexpr int16_t kFilePath = 1, kFileOffset = 2, kMetaData = 3, kOffsetIndexOffset = 4,
                  kColumnIndexLength = 7, kCryptoMetaData = 8, kEncryptedMetaData = 9;
}
namespace column_meta {
constexpr int16_t kDataPageOffset = 9, kIndexPageOffset = 10, kDictionaryPageOffset = 11,
                  kBloomFilterOffset = 14;
}

arrow::Status CannotJoin(const std::string& why) {
  return arrow::Status::NotImplemented("files cannot be joined: ", why);
}

// The fields of the four structs the joiner reads or rewrites (the ones that
// hold file offsets or sit above them), with their types, as parquet.thrift
// (format 2.11) defines them. A field not listed -- added by a newer format
// version, or a malformed footer -- might hold an offset the joiner would not
// move, so the files are not joined (NotImplemented: they are decoded and
// written anew, with an event saying why). Index = field id.
constexpr Type kNone = Type::kStop;
constexpr Type kFileMetaDataFields[] = {kNone,       Type::kI32,  Type::kList,   Type::kI64,
                                        Type::kList, Type::kList, Type::kBinary, Type::kList,
                                        Type::kStruct, Type::kBinary};
constexpr Type kRowGroupFields[] = {kNone,      Type::kList, Type::kI64, Type::kI64,
                                    Type::kList, Type::kI64, Type::kI64, Type::kI16};
constexpr Type kColumnChunkFields[] = {kNone,      Type::kBinary, Type::kI64,    Type::kStruct,
                                       Type::kI64, Type::kI32,    Type::kI64,    Type::kI32,
                                       Type::kStruct, Type::kBinary};
constexpr Type kColumnMetaDataFields[] = {
    kNone,      Type::kI32, Type::kList, Type::kList,   Type::kI32,  Type::kI64,
    Type::kI64, Type::kI64, Type::kList, Type::kI64,    Type::kI64,  Type::kI64,
    Type::kStruct, Type::kList, Type::kI64, Type::kI32, Type::kStruct, Type::kStruct};

// The element types of those structs' list fields, as parquet.thrift says
// (index = field id; kNone: not a list). A list's header names its element
// type, but Thrift's generated readers (Arrow's among them) read the elements
// as the schema's type whatever the header says, while this codec frames
// them by the header: a footer whose header disagrees (a list<i32> declared
// as list<bool>, say) is read as different fields by the two, so the joiner
// would move offsets Arrow does not see as offsets. Refused instead.
constexpr Type kFileMetaDataLists[] = {kNone, kNone, Type::kStruct, kNone,        Type::kStruct,
                                       Type::kStruct, kNone, Type::kStruct, kNone, kNone};
constexpr Type kRowGroupLists[] = {kNone, Type::kStruct, kNone, kNone,
                                   Type::kStruct, kNone, kNone, kNone};
constexpr Type kColumnMetaDataLists[] = {
    kNone, kNone, Type::kI32, Type::kBinary, kNone, kNone, kNone, kNone, Type::kStruct,
    kNone, kNone, kNone,      kNone,         Type::kStruct, kNone, kNone, kNone, kNone};
static_assert(std::size(kFileMetaDataLists) == std::size(kFileMetaDataFields));
static_assert(std::size(kRowGroupLists) == std::size(kRowGroupFields));
static_assert(std::size(kColumnMetaDataLists) == std::size(kColumnMetaDataFields));
constexpr Type kNoLists[] = {kNone};  // ColumnChunk has none

// OK unless field `id` is a list whose encoded value `raw` (header first)
// declares elements of another type than `lists[id]`.
template <size_t N>
arrow::Status CheckListElements(const Type (&lists)[N], const char* what, int16_t id,
                                std::string_view raw) {
  if (id <= 0 || static_cast<size_t>(id) >= N || lists[id] == kNone || raw.empty()) {
    return arrow::Status::OK();
  }
  const Type element = static_cast<Type>(static_cast<uint8_t>(raw[0]) & 0x0f);
  const bool empty = (static_cast<uint8_t>(raw[0]) >> 4) == 0;  // nothing to misread
  if (empty || element == lists[id]) return arrow::Status::OK();
  return CannotJoin(std::string("list field ") + std::to_string(id) + " of " + what +
                    " declares elements of type " + std::to_string(static_cast<int>(element)) +
                    ", not " + std::to_string(static_cast<int>(lists[id])) +
                    " as parquet.thrift says (Parquet readers would read it otherwise)");
}

// OK when field `id` of type `type` is one of `known` (a struct named `what`).
template <size_t N>
arrow::Status CheckKnown(const Type (&known)[N], const char* what, int16_t id, Type type) {
  // Booleans are encoded in the type nibble (kTrue / kFalse); none is listed.
  if (id <= 0 || static_cast<size_t>(id) >= N || known[id] == kNone) {
    return CannotJoin(std::string("a footer holds field ") + std::to_string(id) + " of " + what +
                      ", which thund's Parquet joiner does not know (a newer Parquet format?), "
                      "so it cannot tell whether that field holds a file offset");
  }
  if (known[id] != type) {
    return CannotJoin(std::string("field ") + std::to_string(id) + " of " + what +
                      " has type " + std::to_string(static_cast<int>(type)) + ", not " +
                      std::to_string(static_cast<int>(known[id])) + " as parquet.thrift says");
  }
  return arrow::Status::OK();
}

// A field whose value is an offset into the file: moved by `shift` (offsets
// of 0 or less mean "none" to some writers and stay).
arrow::Status CopyOffset(Reader* r, Writer* w, int64_t shift) {
  ARROW_ASSIGN_OR_RAISE(int64_t v, r->ReadInt());
  w->Int(v > 0 ? v + shift : v);
  return arrow::Status::OK();
}

// Copies field `id` unchanged; a list's element type checked against
// `lists` first (a struct named `what`).
template <size_t N>
arrow::Status CopyField(Reader* r, Writer* w, int16_t id, Type type, const Type (&lists)[N],
                        const char* what) {
  ARROW_ASSIGN_OR_RAISE(std::string_view raw, r->SkipField(type));
  if (type == Type::kList) ARROW_RETURN_NOT_OK(CheckListElements(lists, what, id, raw));
  w->FieldHeader(id, type);
  w->Raw(raw);
  return arrow::Status::OK();
}

// Copies a struct from `r` to `w`, each field through `field(id, type)`,
// which copies, rewrites or drops it.
template <typename Field>
arrow::Status CopyStruct(Reader* r, Writer* w, Field&& field) {
  r->BeginStruct();
  w->BeginStruct();
  int16_t id = 0;
  Type type = Type::kStop;
  while (true) {
    ARROW_ASSIGN_OR_RAISE(bool more, r->NextField(&id, &type));
    if (!more) break;
    ARROW_RETURN_NOT_OK(field(id, type));
  }
  w->EndStruct();
  return arrow::Status::OK();
}

// ColumnMetaData: its page offsets moved.
arrow::Status CopyColumnMeta(Reader* r, Writer* w, int64_t shift) {
  return CopyStruct(r, w, [&](int16_t id, Type type) -> arrow::Status {
    ARROW_RETURN_NOT_OK(CheckKnown(kColumnMetaDataFields, "ColumnMetaData", id, type));
    const bool offset = id == column_meta::kDataPageOffset || id == column_meta::kIndexPageOffset ||
                        id == column_meta::kDictionaryPageOffset ||
                        id == column_meta::kBloomFilterOffset;
    if (!offset || type != Type::kI64) {
      return CopyField(r, w, id, type, kColumnMetaDataLists, "ColumnMetaData");
    }
    w->FieldHeader(id, type);
    return CopyOffset(r, w, shift);
  });
}

// ColumnChunk: offsets moved, page index references dropped.
arrow::Status CopyColumnChunk(Reader* r, Writer* w, int64_t shift) {
  return CopyStruct(r, w, [&](int16_t id, Type type) -> arrow::Status {
    if (id == column_chunk::kCryptoMetaData || id == column_chunk::kEncryptedMetaData) {
      return CannotJoin("a column is encrypted");
    }
    ARROW_RETURN_NOT_OK(CheckKnown(kColumnChunkFields, "ColumnChunk", id, type));
    if (id >= column_chunk::kOffsetIndexOffset && id <= column_chunk::kColumnIndexLength) {
      return r->SkipField(type).status();  // page index: dropped
    }
    if (id == column_chunk::kFilePath && type == Type::kBinary) {
      ARROW_ASSIGN_OR_RAISE(std::string_view raw, r->SkipField(type));
      if (raw.size() > 1) return CannotJoin("a column's data is in another file");
      w->FieldHeader(id, type);
      w->Raw(raw);
      return arrow::Status::OK();
    }
    if (id == column_chunk::kFileOffset && type == Type::kI64) {
      w->FieldHeader(id, type);
      return CopyOffset(r, w, shift);
    }
    if (id == column_chunk::kMetaData && type == Type::kStruct) {
      w->FieldHeader(id, type);
      return CopyColumnMeta(r, w, shift);
    }
    return CopyField(r, w, id, type, kNoLists, "ColumnChunk");
  });
}

// RowGroup: its columns' offsets moved, numbered `ordinal`.
arrow::Status CopyRowGroup(std::string_view bytes, int64_t shift, int64_t ordinal, Writer* w) {
  Reader r(bytes);
  return CopyStruct(&r, w, [&](int16_t id, Type type) -> arrow::Status {
    ARROW_RETURN_NOT_OK(CheckKnown(kRowGroupFields, "RowGroup", id, type));
    if (id == row_group::kColumns && type == Type::kList) {
      ARROW_ASSIGN_OR_RAISE(compact::ListHeader columns, r.ReadListHeader());
      if (columns.element != Type::kStruct) return arrow::Status::Invalid("row group columns");
      w->FieldHeader(id, type);
      w->ListHeader(columns.size, Type::kStruct);
      for (int64_t c = 0; c < columns.size; ++c) {
        ARROW_RETURN_NOT_OK(CopyColumnChunk(&r, w, shift));
      }
      return arrow::Status::OK();
    }
    if (id == row_group::kFileOffset && type == Type::kI64) {
      w->FieldHeader(id, type);
      return CopyOffset(&r, w, shift);
    }
    if (id == row_group::kOrdinal && type == Type::kI16) {
      ARROW_RETURN_NOT_OK(r.ReadInt().status());
      w->FieldHeader(id, type);
      w->Int(ordinal);
      return arrow::Status::OK();
    }
    return CopyField(&r, w, id, type, kRowGroupLists, "RowGroup");
  });
}

// One footer's top-level fields: row counts and row groups apart, the others
// as their encoded bytes (compared between files, copied from the first).
struct Footer {
  struct Field {
    int16_t id;
    Type type;
    std::string_view raw;
  };
  std::vector<Field> others;
  int64_t num_rows = 0;
  std::vector<std::string_view> row_groups;
};

arrow::Result<Footer> ReadFooter(std::string_view bytes) {
  Footer out;
  Reader r(bytes);
  r.BeginStruct();
  int16_t id = 0;
  Type type = Type::kStop;
  while (true) {
    ARROW_ASSIGN_OR_RAISE(bool more, r.NextField(&id, &type));
    if (!more) break;
    if (id == file_meta::kEncryption || id == file_meta::kSigningKey) {
      return CannotJoin("a file is encrypted");
    }
    ARROW_RETURN_NOT_OK(CheckKnown(kFileMetaDataFields, "FileMetaData", id, type));
    if (id == file_meta::kNumRows && type == Type::kI64) {
      ARROW_ASSIGN_OR_RAISE(out.num_rows, r.ReadInt());
    } else if (id == file_meta::kRowGroups && type == Type::kList) {
      ARROW_ASSIGN_OR_RAISE(compact::ListHeader groups, r.ReadListHeader());
      if (groups.element != Type::kStruct) return arrow::Status::Invalid("footer row groups");
      for (int64_t g = 0; g < groups.size; ++g) {
        ARROW_ASSIGN_OR_RAISE(std::string_view raw, r.SkipElement(Type::kStruct));
        out.row_groups.push_back(raw);
      }
    } else {
      ARROW_ASSIGN_OR_RAISE(std::string_view raw, r.SkipField(type));
      if (type == Type::kList) {
        ARROW_RETURN_NOT_OK(CheckListElements(kFileMetaDataLists, "FileMetaData", id, raw));
      }
      out.others.push_back(Footer::Field{id, type, raw});
    }
  }
  if (!r.done()) return arrow::Status::Invalid("footer: bytes after its end");
  return out;
}

bool SameFields(const Footer& a, const Footer& b) {
  if (a.others.size() != b.others.size()) return false;
  for (size_t i = 0; i < a.others.size(); ++i) {
    const auto &x = a.others[i], &y = b.others[i];
    if (x.id != y.id || x.type != y.type || x.raw != y.raw) return false;
  }
  return true;
}

}  // namespace

arrow::Result<JoinedFooter> JoinFooters(const std::vector<JoinPart>& parts) {
  if (parts.empty()) return arrow::Status::Invalid("no files to join");
  std::vector<Footer> footers;
  int64_t rows = 0, groups = 0;
  for (const JoinPart& p : parts) {
    ARROW_ASSIGN_OR_RAISE(Footer f, ReadFooter(p.footer));
    if (!footers.empty() && !SameFields(footers[0], f)) {
      return CannotJoin("their schemas or metadata differ");
    }
    rows += f.num_rows;
    groups += static_cast<int64_t>(f.row_groups.size());
    footers.push_back(std::move(f));
  }
  Writer w;
  w.BeginStruct();
  auto row_groups = [&]() -> arrow::Status {
    w.FieldHeader(file_meta::kRowGroups, Type::kList);
    w.ListHeader(groups, Type::kStruct);
    int64_t ordinal = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      for (std::string_view g : footers[p].row_groups) {
        ARROW_RETURN_NOT_OK(CopyRowGroup(g, parts[p].shift, ordinal++, &w));
      }
    }
    return arrow::Status::OK();
  };
  // Fields in id order, the two rewritten ones in their places.
  bool wrote_rows = false;
  for (const Footer::Field& f : footers[0].others) {
    if (!wrote_rows && f.id > file_meta::kRowGroups) {
      w.FieldHeader(file_meta::kNumRows, Type::kI64);
      w.Int(rows);
      ARROW_RETURN_NOT_OK(row_groups());
      wrote_rows = true;
    }
    w.FieldHeader(f.id, f.type);
    w.Raw(f.raw);
  }
  if (!wrote_rows) {
    w.FieldHeader(file_meta::kNumRows, Type::kI64);
    w.Int(rows);
    ARROW_RETURN_NOT_OK(row_groups());
  }
  w.EndStruct();
  return JoinedFooter{w.Take(), rows, groups};
}

namespace {

// What Arrow's reader sees of one column chunk, its offsets moved by `shift`.
struct ChunkSeen {
  int64_t data_page = 0, dictionary_page = 0, compressed = 0, values = 0;
  bool has_dictionary = false;
  int compression = 0;
  bool operator==(const ChunkSeen&) const = default;
};
struct GroupSeen {
  int64_t rows = 0;
  std::vector<ChunkSeen> chunks;
  bool operator==(const GroupSeen&) const = default;
};

// Every row group of `md` as Arrow's reader sees it (may throw: Arrow reads
// column chunks lazily and checks them then).
void SeeGroups(const parquet::FileMetaData& md, int64_t shift, std::vector<GroupSeen>* out) {
  auto moved = [&](int64_t v) { return v > 0 ? v + shift : v; };
  for (int g = 0; g < md.num_row_groups(); ++g) {
    auto rg = md.RowGroup(g);
    GroupSeen seen;
    seen.rows = rg->num_rows();
    for (int c = 0; c < rg->num_columns(); ++c) {
      auto chunk = rg->ColumnChunk(c);
      ChunkSeen x;
      x.data_page = moved(chunk->data_page_offset());
      x.has_dictionary = chunk->has_dictionary_page();
      x.dictionary_page = x.has_dictionary ? moved(chunk->dictionary_page_offset()) : 0;
      x.compressed = chunk->total_compressed_size();
      x.values = chunk->num_values();
      x.compression = static_cast<int>(chunk->compression());
      seen.chunks.push_back(x);
    }
    out->push_back(std::move(seen));
  }
}

}  // namespace

arrow::Status CheckJoinedAsArrowReadsIt(const std::vector<JoinPart>& parts,
                                        const JoinedFooter& joined) {
  // Every exception of Arrow's reader here is a footer it refuses: the files
  // are then decoded and written anew (where a part's own footer is the one
  // refused, that fails as it would have without joining).
  std::vector<GroupSeen> expected;
  try {
    for (const JoinPart& p : parts) {
      auto in = parquet::FileMetaData::Make(p.footer.data(), static_cast<int64_t>(p.footer.size()));
      SeeGroups(*in, p.shift, &expected);
    }
  } catch (const std::exception& e) {
    return CannotJoin(std::string("a file's footer is not one Arrow's reader reads whole (") +
                      e.what() + ")");
  }
  auto refuse = [](const std::string& what) {
    return CannotJoin("the joined footer " + what + " as Arrow's reader sees it");
  };
  std::vector<GroupSeen> got;
  try {
    const std::string& bytes = joined.bytes;
    auto out = parquet::FileMetaData::Make(bytes.data(), static_cast<int64_t>(bytes.size()));
    if (out->num_rows() != joined.rows || out->num_row_groups() != joined.row_groups) {
      return refuse("has " + std::to_string(out->num_rows()) + " rows in " +
                    std::to_string(out->num_row_groups()) + " row groups, not " +
                    std::to_string(joined.rows) + " in " + std::to_string(joined.row_groups));
    }
    SeeGroups(*out, 0, &got);
  } catch (const std::exception& e) {
    return refuse(std::string("does not parse (") + e.what() + ")");
  }
  if (got.size() != expected.size()) return refuse("has other row groups");
  for (size_t g = 0; g < got.size(); ++g) {
    if (!(got[g] == expected[g])) {
      return refuse("places row group " + std::to_string(g) +
                    " (rows, sizes or page offsets) elsewhere than its file does");
    }
  }
  return arrow::Status::OK();
}

arrow::Status WriteJoinedParquet(arrow::fs::FileSystem& fs, const std::vector<std::string>& sources,
                                 JoinSink* sink) {
  constexpr char kMagic[] = "PAR1";
  struct Part {
    std::shared_ptr<arrow::io::RandomAccessFile> file;
    int64_t pages = 0;  // bytes of pages (and page indexes) after the leading magic
    std::string footer;
  };
  std::vector<Part> parts(sources.size());
  std::vector<JoinPart> joining;
  int64_t at = 4;
  for (size_t i = 0; i < sources.size(); ++i) {
    Part& p = parts[i];
    ARROW_ASSIGN_OR_RAISE(p.file, fs.OpenInputFile(sources[i]));
    ARROW_ASSIGN_OR_RAISE(int64_t size, p.file->GetSize());
    char head[4], tail[8];
    auto not_parquet = [&](const char* what) {
      return arrow::Status::Invalid("'", sources[i],
                                    "' is not a Parquet file as its end says: ", what);
    };
    if (size < 12) return not_parquet("too short");
    ARROW_ASSIGN_OR_RAISE(int64_t got_head, p.file->ReadAt(0, 4, head));
    ARROW_ASSIGN_OR_RAISE(int64_t got_tail, p.file->ReadAt(size - 8, 8, tail));
    if (got_head != 4 || got_tail != 8 || std::memcmp(head, kMagic, 4) != 0) {
      return not_parquet("no leading PAR1");
    }
    if (std::memcmp(tail + 4, kMagic, 4) != 0) return CannotJoin("a footer is encrypted");
    uint32_t length = 0;
    std::memcpy(&length, tail, 4);  // little-endian, as on every platform thund builds for
    if (length == 0 || static_cast<int64_t>(length) > size - 12) return not_parquet("footer size");
    p.footer.resize(length);
    ARROW_ASSIGN_OR_RAISE(int64_t got, p.file->ReadAt(size - 8 - length, length, p.footer.data()));
    if (got != length) return not_parquet("footer cut short");
    p.pages = size - 8 - length - 4;
    joining.push_back(JoinPart{p.footer, at - 4});
    at += p.pages;
  }
  ARROW_ASSIGN_OR_RAISE(JoinedFooter joined_footer, JoinFooters(joining));
  const std::string& footer = joined_footer.bytes;
  ARROW_RETURN_NOT_OK(CheckJoinedAsArrowReadsIt(joining, joined_footer));
  ARROW_RETURN_NOT_OK(sink->Append(std::string_view(kMagic, 4)));
  for (Part& p : parts) ARROW_RETURN_NOT_OK(sink->AppendFrom(*p.file, 4, p.pages));
  ARROW_RETURN_NOT_OK(sink->Append(footer));
  const uint32_t length = static_cast<uint32_t>(footer.size());
  char tail[8];
  std::memcpy(tail, &length, 4);
  std::memcpy(tail + 4, kMagic, 4);
  return sink->Append(std::string_view(tail, 8));
}

}  // namespace thund::engine::keyed
