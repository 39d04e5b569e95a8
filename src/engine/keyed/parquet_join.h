// Joining whole Parquet files into one without decoding them: the pages of
// each file are copied as they are, one file after the other, and a footer
// is written that lists every file's row groups with their offsets moved.
//
// Why: a keyed write passes source files whose rows are all new through
// unchanged (unit_writer.h). A source of many small files would otherwise
// become as many small output files; each costs an inode and a rename, and
// readers pay per file. Joined, they become files of about rows_per_file rows
// at the cost of a copy.
//
// What is kept: every row group, column chunk, page, statistic and bloom
// filter, and the first file's schema, key/value metadata (the Arrow schema)
// and writer name, which every file must share byte for byte. What is
// dropped: the page indexes (their page offsets are absolute; readers do
// without them). Files that cannot be joined so (different schemas or
// metadata, encryption, column data in other files) are NotImplemented, and
// then copied one by one instead.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <arrow/result.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace thund::engine::keyed {

struct JoinPart {
  std::string_view footer;  // the file's serialized FileMetaData
  int64_t shift = 0;        // how far its pages move: new offset - old offset
};

struct JoinedFooter {
  std::string bytes;       // the serialized FileMetaData
  int64_t rows = 0;        // the parts' rows, summed
  int64_t row_groups = 0;  // and row groups
};

// The FileMetaData of one file holding `parts`' row groups in order (row
// counts summed, row groups renumbered). Invalid for a malformed footer;
// NotImplemented when the parts cannot be joined (see above).
arrow::Result<JoinedFooter> JoinFooters(const std::vector<JoinPart>& parts);

// What Parquet readers will see: OK when Arrow's reader parses `joined` and
// finds in it each part's row groups, in order, with the same rows, values,
// sizes and codecs and their page offsets moved by the part's shift;
// NotImplemented (cannot be joined: the plain path) otherwise. This guards
// against any footer our codec frames differently from Thrift's generated
// readers. WriteJoinedParquet calls it before writing anything.
arrow::Status CheckJoinedAsArrowReadsIt(const std::vector<JoinPart>& parts,
                                        const JoinedFooter& joined);

// Where WriteJoinedParquet puts the joined file's bytes, in order.
class JoinSink {
 public:
  virtual ~JoinSink() = default;
  virtual arrow::Status Append(std::string_view bytes) = 0;
  // Appends `length` bytes of `file` read from `offset`.
  virtual arrow::Status AppendFrom(arrow::io::RandomAccessFile& file, int64_t offset,
                                   int64_t length) = 0;
};

// Writes the Parquet files `sources` (paths in `fs`) joined into one through
// `sink`. Every footer is read and joined before anything is written, so a
// NotImplemented (cannot be joined) or Invalid (not Parquet as its footer
// says; names the file) leaves the sink untouched.
arrow::Status WriteJoinedParquet(arrow::fs::FileSystem& fs, const std::vector<std::string>& sources,
                                 JoinSink* sink);

}  // namespace thund::engine::keyed
