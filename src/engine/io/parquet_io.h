// Whole-file Parquet reads and writes with Arrow's Parquet implementation.
//
// Files written here are plain Parquet that DuckDB's read_parquet and pyarrow read
// directly. The Arrow schema is stored in the file metadata (the "ARROW:schema" key),
// so Arrow readers get back Arrow-only details (time zones, large/view types).
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>
#include <arrow/table.h>
#include <arrow/util/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>

namespace thund::engine {

struct ParquetWriteOptions {
  // Rows per row group (Parquet's unit of parallel reading and skipping).
  int64_t row_group_rows = 1 << 20;
  arrow::Compression::type compression = arrow::Compression::SNAPPY;
};

// Writes `table` to the local file `path`, replacing it. Not atomic: a failure may
// leave a partial file (callers that need atomic commits write aside and rename).
arrow::Status WriteParquetFile(const arrow::Table& table, const std::string& path,
                               const ParquetWriteOptions& options = {});

// Reads the whole local file `path` into memory. Errors name the path.
arrow::Result<std::shared_ptr<arrow::Table>> ReadParquetFile(const std::string& path);
// The same through `fs` (a storage root's filesystem: local or S3).
arrow::Result<std::shared_ptr<arrow::Table>> ReadParquetFile(arrow::fs::FileSystem& fs,
                                                             const std::string& path);

// The Arrow schema of the local file `path` (its footer only). Errors name the path.
arrow::Result<std::shared_ptr<arrow::Schema>> ReadParquetSchema(const std::string& path);

}  // namespace thund::engine
