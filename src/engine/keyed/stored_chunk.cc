#include "engine/keyed/stored_chunk.h"

#include <arrow/io/file.h>
#include <arrow/io/interfaces.h>
#include <parquet/exception.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace thund::engine::keyed {
namespace {

// Appends a length-prefixed field, so that no two forms run together alike.
void AddField(std::string* form, std::string_view bytes) {
  *form += std::to_string(bytes.size());
  *form += ':';
  *form += bytes;
}

void AddNumber(std::string* form, int64_t n) { AddField(form, std::to_string(n)); }

}  // namespace

std::optional<StoredChunk> StoredNonNullChunk(const parquet::FileMetaData& footer, int row_group,
                                              const std::string& column) {
  try {
    if (row_group < 0 || row_group >= footer.num_row_groups()) return std::nullopt;
    const parquet::SchemaDescriptor* schema = footer.schema();
    const int leaf = schema->ColumnIndex(column);  // top-level leaves only: path == name
    if (leaf < 0) return std::nullopt;
    const parquet::ColumnDescriptor* descr = schema->Column(leaf);
    if (descr->max_repetition_level() != 0) return std::nullopt;
    const auto group = footer.RowGroup(row_group);
    const auto chunk = group->ColumnChunk(leaf);
    if (chunk->crypto_metadata() != nullptr) return std::nullopt;
    if (chunk->num_values() != group->num_rows()) return std::nullopt;
    const auto stats = chunk->encoded_statistics();
    const bool no_nulls = descr->max_definition_level() == 0 ||
                          (stats != nullptr && stats->has_null_count && stats->null_count == 0);
    if (!no_nulls) return std::nullopt;

    StoredChunk out;
    out.offset = chunk->data_page_offset();
    if (chunk->has_dictionary_page() && chunk->dictionary_page_offset() > 0 &&
        chunk->dictionary_page_offset() < out.offset) {
      out.offset = chunk->dictionary_page_offset();
    }
    out.length = chunk->total_compressed_size();
    if (out.offset < 0 || out.length <= 0) return std::nullopt;
    std::string& form = out.form;
    AddNumber(&form, static_cast<int64_t>(descr->physical_type()));
    AddNumber(&form, descr->type_length());
    AddNumber(&form, descr->max_definition_level());
    AddNumber(&form, static_cast<int64_t>(chunk->compression()));
    for (const auto e : chunk->encodings()) AddNumber(&form, static_cast<int64_t>(e));
    AddField(&form, "|");
    AddNumber(&form, chunk->num_values());
    AddNumber(&form, out.length);
    AddNumber(&form, chunk->total_uncompressed_size());
    AddNumber(&form, chunk->has_dictionary_page() ? 1 : 0);
    if (stats != nullptr) {
      AddField(&form, stats->has_min ? stats->min() : "-");
      AddField(&form, stats->has_max ? stats->max() : "-");
    }
    return out;
  } catch (const parquet::ParquetException&) {
    return std::nullopt;  // a footer that does not say: decode as usual
  }
}

arrow::Result<bool> SameStoredBytes(arrow::fs::FileSystem& fs, const std::string& a_path,
                                    const StoredChunk& a, const std::string& b_path,
                                    const StoredChunk& b) {
  if (a.length != b.length) return false;
  // Big local chunks are mapped and compared where the page cache holds them:
  // reading would copy both first (~a second per 3 GB on the benchmark VM).
  // Small ones are read: a mapping costs more than the copy (mmap and munmap
  // serialize the threads, and each munmap interrupts the other CPUs).
  constexpr int64_t kMapBytes = int64_t{8} << 20;
  if (fs.type_name() == "local" && a.length >= kMapBytes) {
    ARROW_ASSIGN_OR_RAISE(auto a_map,
                          arrow::io::MemoryMappedFile::Open(a_path, arrow::io::FileMode::READ));
    ARROW_ASSIGN_OR_RAISE(auto b_map,
                          arrow::io::MemoryMappedFile::Open(b_path, arrow::io::FileMode::READ));
    ARROW_ASSIGN_OR_RAISE(auto a_bytes, a_map->ReadAt(a.offset, a.length));
    ARROW_ASSIGN_OR_RAISE(auto b_bytes, b_map->ReadAt(b.offset, b.length));
    if (a_bytes->size() != a.length || b_bytes->size() != b.length) {
      return arrow::Status::IOError("column chunk of '",
                                    a_bytes->size() != a.length ? a_path : b_path,
                                    "' ends before its footer says it does");
    }
    return std::memcmp(a_bytes->data(), b_bytes->data(), static_cast<size_t>(a.length)) == 0;
  }
  ARROW_ASSIGN_OR_RAISE(auto a_file, fs.OpenInputFile(a_path));
  ARROW_ASSIGN_OR_RAISE(auto b_file, fs.OpenInputFile(b_path));
  constexpr int64_t kPiece = int64_t{1} << 20;
  // Reused by the thread's later comparisons (a fresh buffer of this size
  // would be mapped and unmapped by malloc every time).
  thread_local std::vector<uint8_t> a_bytes(kPiece), b_bytes(kPiece);
  for (int64_t at = 0; at < a.length; at += kPiece) {
    const int64_t n = std::min(kPiece, a.length - at);
    ARROW_ASSIGN_OR_RAISE(int64_t got_a, a_file->ReadAt(a.offset + at, n, a_bytes.data()));
    ARROW_ASSIGN_OR_RAISE(int64_t got_b, b_file->ReadAt(b.offset + at, n, b_bytes.data()));
    if (got_a != n || got_b != n) {
      return arrow::Status::IOError("column chunk of '", got_a != n ? a_path : b_path,
                                    "' ends before its footer says it does");
    }
    if (std::memcmp(a_bytes.data(), b_bytes.data(), static_cast<size_t>(n)) != 0) return false;
  }
  return true;
}

}  // namespace thund::engine::keyed
