// One file of a file drop: parse its bytes, and make its columns match the
// stream's (file_drop_source.h).
#pragma once

#include <arrow/buffer.h>
#include <arrow/result.h>
#include <arrow/table.h>

#include <memory>
#include <set>
#include <string>

namespace thund::engine::stream {

enum class DropFormat { kParquet, kCsv, kJson };

struct DropFormatOptions {
  DropFormat format = DropFormat::kParquet;
  bool header = true;    // CSV: the first line names the columns
  char delimiter = ',';  // CSV
};

// Where errors point: the flow and the file.
struct DropFileRef {
  std::string flow;
  std::string path;
};

// Parses `bytes`, the whole content of the file. Returns null (not an error)
// when the content is not a complete file yet: empty; Parquet without the
// trailing magic or with an unreadable footer; CSV/JSON not ending in '\n'.
// `expected` (may be null) gives CSV/JSON columns their types by name (and,
// for CSV without header, their names). Errors are Invalid, naming the flow,
// the file and, for a malformed CSV/JSON row, its line.
// Parquet with `columns` (lower-case names; empty = all): only the file's
// columns named there are read, and `*whole` (when given) is set to the
// file's whole schema, from its footer, for checking the others. Other
// formats read every column and leave `*whole` null.
arrow::Result<std::shared_ptr<arrow::Table>> ParseDropFile(
    const DropFileRef& ref, const std::shared_ptr<arrow::Buffer>& bytes,
    const DropFormatOptions& options, const std::shared_ptr<arrow::Schema>& expected,
    const std::set<std::string>& columns = {}, std::shared_ptr<arrow::Schema>* whole = nullptr);

// True when a column of type `from` may be read as `to`: equal types; null to
// anything; integer widening (int8 -> int16 -> int32 -> int64, uintN to a
// wider uint or int); float32 and integers up to 32 bits to float64; between
// utf8 / large_utf8 / utf8_view, and between binary / large_binary; a
// timestamp to a finer-or-equal unit with the same time zone; a dictionary
// to a type its values may be read as.
bool IsWideningCast(const arrow::DataType& from, const arrow::DataType& to);

// `table` with exactly `expected`'s columns: matched by exact name in any
// order, cast per IsWideningCast. Invalid (naming the flow, the file, the
// expected and found columns, and what to do) when the names differ, a type
// is not a widening of the expected one, or a NULL is in a not-null column.
// `origin` says where `expected` comes from ("declared by dataset 'd'", ...).
arrow::Result<std::shared_ptr<arrow::Table>> ConformDropFile(
    const DropFileRef& ref, const std::shared_ptr<arrow::Table>& table,
    const std::shared_ptr<arrow::Schema>& expected, const std::string& origin);

}  // namespace thund::engine::stream
