#include "engine/io/parquet_io.h"

#include <functional>

#include <arrow/io/file.h>
#include <arrow/memory_pool.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

namespace thund::engine {

arrow::Status WriteParquetFile(const arrow::Table& table, const std::string& path,
                               const ParquetWriteOptions& options) {
  auto written = [&]() -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::FileOutputStream::Open(path));
    auto properties =
        parquet::WriterProperties::Builder().compression(options.compression)->build();
    auto arrow_properties = parquet::ArrowWriterProperties::Builder().store_schema()->build();
    ARROW_RETURN_NOT_OK(parquet::arrow::WriteTable(table, arrow::default_memory_pool(), sink,
                                                   options.row_group_rows, properties,
                                                   arrow_properties));
    return sink->Close();
  }();
  if (!written.ok()) {
    return written.WithMessage("writing Parquet file '", path, "': ", written.message());
  }
  return arrow::Status::OK();
}

namespace {

arrow::Result<std::shared_ptr<arrow::Table>> ReadWhole(
    const std::string& path,
    const std::function<arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>>()>& open) {
  auto read = [&]() -> arrow::Result<std::shared_ptr<arrow::Table>> {
    ARROW_ASSIGN_OR_RAISE(auto input, open());
    ARROW_ASSIGN_OR_RAISE(auto reader,
                          parquet::arrow::OpenFile(input, arrow::default_memory_pool()));
    return reader->ReadTable();
  }();
  if (!read.ok()) {
    return read.status().WithMessage("reading Parquet file '", path,
                                     "': ", read.status().message());
  }
  return read;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Table>> ReadParquetFile(const std::string& path) {
  return ReadWhole(path, [&]() -> arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> {
    return arrow::io::ReadableFile::Open(path);
  });
}

arrow::Result<std::shared_ptr<arrow::Table>> ReadParquetFile(arrow::fs::FileSystem& fs,
                                                             const std::string& path) {
  return ReadWhole(path, [&] { return fs.OpenInputFile(path); });
}

arrow::Result<std::shared_ptr<arrow::Schema>> ReadParquetSchema(const std::string& path) {
  auto read = [&]() -> arrow::Result<std::shared_ptr<arrow::Schema>> {
    ARROW_ASSIGN_OR_RAISE(auto input, arrow::io::ReadableFile::Open(path));
    ARROW_ASSIGN_OR_RAISE(auto reader,
                          parquet::arrow::OpenFile(input, arrow::default_memory_pool()));
    std::shared_ptr<arrow::Schema> schema;
    ARROW_RETURN_NOT_OK(reader->GetSchema(&schema));
    return schema;
  }();
  if (!read.ok()) {
    return read.status().WithMessage("reading the schema of Parquet file '", path,
                                     "': ", read.status().message());
  }
  return read;
}

}  // namespace thund::engine
