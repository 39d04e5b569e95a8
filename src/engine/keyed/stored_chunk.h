// StoredChunk: a Parquet column chunk as it lies in its file (its pages,
// dictionary first, compressed), with a description of everything decoding
// those bytes depends on. Two chunks of equal `form` whose bytes are equal
// decode to the same values, so a key column copied whole from one file to
// another is recognised without decoding either.
//
// Why: a rerun's target holds byte-for-byte copies of the source files the
// first run found all new (keyed_copy passes such files through unchanged).
// Their source row groups are then known to be written by comparing stored
// bytes (UnitSettler::SettleTwins), a memcmp instead of a decode and a lookup
// per key.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace parquet {
class FileMetaData;
}

namespace thund::engine::keyed {

struct StoredChunk {
  int64_t offset = 0;  // of its first page in the file
  int64_t length = 0;  // bytes, page headers included
  // Physical type, levels, codec, encodings, value count, sizes and
  // statistics: what must agree for equal bytes to mean equal values.
  std::string form;
};

// The chunk of top-level column `column` (by name; a leaf) in row group
// `row_group` of the file `footer` describes, when the footer vouches that it
// holds no NULL (a required column, or statistics counting 0 NULLs). nullopt
// otherwise: no such column, nested or encrypted, or NULLs possible.
std::optional<StoredChunk> StoredNonNullChunk(const parquet::FileMetaData& footer, int row_group,
                                              const std::string& column);

// Whether chunk `a` of file `a_path` and chunk `b` of file `b_path` hold the
// same bytes (their forms are the caller's to compare). Reads both a piece at
// a time. IOError when either cannot be read whole.
arrow::Result<bool> SameStoredBytes(arrow::fs::FileSystem& fs, const std::string& a_path,
                                    const StoredChunk& a, const std::string& b_path,
                                    const StoredChunk& b);

}  // namespace thund::engine::keyed
