// Reading a keyed write's sources: files resolved, one schema per source, and
// work units (a Parquet row group, or a whole CSV/JSON file) read with the
// source-side filter applied as early as possible.
//
// Late materialization: for a unit of a filtered Parquet source, only the key
// columns are decoded first; the other columns are read only when some row
// survives the filter, and only those rows are kept.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/keyed/data_file_reader.h"
#include "engine/keyed/file_format.h"
#include "engine/keyed/keyed_write_filter.h"

namespace thund::engine::keyed {

struct SourceUnit {
  int file = 0;
  int unit = 0;            // Parquet row group; 0 for CSV/JSON
  int64_t first_row = -1;  // Parquet: number of its first row in the source (files in order)
  int64_t rows = -1;       // Parquet: its rows; -1 for CSV/JSON (unknown until read)
};

struct Source {
  std::string name;
  std::vector<DataFile> files;
  std::shared_ptr<arrow::Schema> schema;  // the first file's; others are conformed to it
  std::vector<std::shared_ptr<arrow::Schema>> file_schemas;     // Parquet files' own (else null)
  std::vector<std::shared_ptr<parquet::FileMetaData>> footers;  // Parquet files' (else null)
  std::vector<SourceUnit> units;
  int64_t known_rows = 0;  // rows of Parquet files (CSV/JSON unknown until read)
};

// Lists `path` (file, directory or glob), reads the Parquet footers (on
// `threads` threads) and the first file's schema. Errors name the source.
arrow::Result<Source> OpenSource(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                 const std::string& name, const std::string& path,
                                 std::optional<FileFormat> format, int64_t threads);

struct UnitRows {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;  // conformed to Source::schema
  // Per batch, the number of each of its rows in the source (SourceUnit::
  // first_row + row in the unit), when the source side filtered a numbered
  // (Parquet) unit; else empty.
  std::vector<std::vector<int64_t>> batch_rows;
  int64_t rows_read = 0;
  // Set instead of `batches` when the caller asked to defer fully new units
  // and every row of this unit is new: its key columns alone (as in the file);
  // the other columns were not read.
  std::shared_ptr<arrow::RecordBatch> all_new_keys;
  // With all_new_keys, when the worker encoded the keys to look them up (the
  // zero-copy scan of a single string key): those encodings, by the filter's
  // spec, with `bytes` pointing into all_new_keys' column (so valid while this
  // lives), for KeyedWriteFilter::ClaimRowsEncoded. Else unset.
  std::optional<EncodedKeys> all_new_encoded;
};

// Whether a source key column of this type is scanned straight from the
// Parquet pages (the zero-copy path of ReadSourceUnit).
inline bool ScansKeyFromPages(const arrow::DataType& type) {
  return type.id() == arrow::Type::STRING || type.id() == arrow::Type::BINARY;
}

struct UnitFilter {
  const KeyedWriteFilter* filter = nullptr;  // null: no source-side filter
  std::vector<std::string> key_columns;      // the source's key columns (KeySpec order)
};

// Reads unit `u` of `source`: the rows whose key is not in the target (when
// `filter.filter` is set), in slices of at most `batch_size` rows. With
// `keys_only`, only the key columns are returned (for duplicates=all's pre-pass).
// With `defer_all_new`, a unit whose rows are all new comes back as
// `all_new_keys` (see UnitRows).
arrow::Result<UnitRows> ReadSourceUnit(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                       const Source& source, const SourceUnit& u,
                                       const UnitFilter& filter, int64_t batch_size, bool keys_only,
                                       bool defer_all_new = false);

}  // namespace thund::engine::keyed
