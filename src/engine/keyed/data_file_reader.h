// DataFileReader: one Parquet, CSV or JSON file read in "units" with column
// projection. A Parquet unit is one row group and only the requested columns
// are decoded (so loading keys reads just the key columns, and a row group
// whose keys are all skipped never has its other columns read). A CSV or JSON
// file is one unit, parsed once when opened.
//
// Thread-safety: one reader per thread; different readers are independent.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/type.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyed/file_format.h"

namespace parquet {
class FileMetaData;
}

namespace thund::engine::keyed {

struct DataReadOptions {
  // CSV/JSON: columns whose type is given instead of inferred (by exact name;
  // names absent from the file are ignored). Keys are read with the written
  // type so that e.g. "007" stays a string.
  std::map<std::string, std::shared_ptr<arrow::DataType>> column_types;
  // CSV/JSON: read only these columns (by exact name) when set. A missing one
  // is an Invalid error listing the file's columns.
  std::optional<std::vector<std::string>> only_columns;
};

// True for the Arrow types a Parquet reader gives a flat BYTE_ARRAY column
// (strings and binaries): a top-level Parquet field of such a type is one that
// DataFileReader::ScansStrings accepts, so a schema alone can tell.
bool IsByteArrayStringType(const arrow::DataType& type);

class DataFileReader {
 public:
  // Opens `file` (Parquet: reads the footer; CSV/JSON: parses the whole file).
  // Errors name the file.
  static arrow::Result<std::unique_ptr<DataFileReader>> Open(
      std::shared_ptr<arrow::fs::FileSystem> fs, const DataFile& file,
      const DataReadOptions& options = {});
  virtual ~DataFileReader() = default;

  virtual const std::shared_ptr<arrow::Schema>& schema() const = 0;
  virtual int num_units() const = 0;
  virtual int64_t unit_rows(int unit) const = 0;
  virtual int64_t num_rows() const = 0;

  // Reads unit `unit`: the top-level columns `columns` in that order, or every
  // column when `columns` is null. Errors name the file (and row group).
  virtual arrow::Result<std::shared_ptr<arrow::RecordBatch>> ReadUnit(
      int unit, const std::vector<int>* columns) = 0;

  // Zero-copy scan of one string/binary column (top-level field `field`) of
  // unit `unit`: calls fn(values, is_null, n) for successive runs of at most
  // `max_rows` rows (and at most one Parquet page), in order. `values` point into the decoder's
  // page buffers and are valid only during the call (is_null[i] = 1 leaves values[i] empty).
  // Parquet files with a flat BYTE_ARRAY column only: else NotImplemented (use ReadUnit).
  using StringChunkFn = std::function<arrow::Status(const std::string_view* values,
                                                    const uint8_t* is_null, int64_t n)>;
  virtual arrow::Status ScanStringColumn(int unit, int field, int64_t max_rows,
                                         const StringChunkFn& fn) {
    return arrow::Status::NotImplemented("zero-copy string scan");
  }
  // True when ScanStringColumn works for top-level field `field`.
  virtual bool ScansStrings(int field) const { return false; }

  // A Parquet file's footer (read when it was opened); null for CSV/JSON.
  virtual std::shared_ptr<parquet::FileMetaData> parquet_footer() const { return nullptr; }

  const DataFile& file() const { return file_; }

 protected:
  explicit DataFileReader(DataFile file) : file_(std::move(file)) {}
  DataFile file_;
};

}  // namespace thund::engine::keyed
