#include "backend/native/part_tiers.h"

#include <arrow/table.h>

#include "engine/batch/parquet_part_writer.h"
#include "engine/io/parquet_io.h"

namespace thund::native {

arrow::Result<bool> MergePartsEnabled(const Pipeline& p) {
  auto it = p.configuration.find("thund.stream.merge_parts");
  if (it == p.configuration.end() || it->second == "true") return true;
  if (it->second == "false") return false;
  return arrow::Status::Invalid("configuration thund.stream.merge_parts = '", it->second,
                                "' is not true or false");
}

size_t NewestToMerge(const std::vector<int64_t>& rows) {
  if (rows.size() < 2) return 0;
  size_t n = 1;
  int64_t newer = rows.back();
  while (n < rows.size() && rows[rows.size() - 1 - n] < 2 * newer) {
    newer += rows[rows.size() - 1 - n];
    ++n;
  }
  return n;
}

arrow::Status MergeNewestParts(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                               const std::string& dir, const std::string& prefix,
                               const std::string& flow,
                               std::vector<engine::batch::PartFile>* parts) {
  std::vector<int64_t> rows;
  for (const auto& p : *parts) rows.push_back(p.rows);
  const size_t n = NewestToMerge(rows);
  if (n < 2) return arrow::Status::OK();
  const size_t start = parts->size() - n;
  std::vector<std::shared_ptr<arrow::Table>> tables;
  for (size_t i = start; i < parts->size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto t, engine::ReadParquetFile(*fs, dir + "/" + (*parts)[i].file));
    tables.push_back(std::move(t));
  }
  // Parts of one flow may differ in nullability (a source's NOT NULL fields,
  // DuckDB's nullable ones): the merged part takes the looser field.
  arrow::ConcatenateTablesOptions options;
  options.unify_schemas = true;
  ARROW_ASSIGN_OR_RAISE(auto merged, arrow::ConcatenateTables(tables, options));
  ARROW_ASSIGN_OR_RAISE(auto writer, engine::batch::ParquetPartWriter::Open(
                                         fs, dir, prefix + "-m", merged->schema()));
  arrow::TableBatchReader reader(*merged);
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) break;
    ARROW_RETURN_NOT_OK(writer->Write(batch));
  }
  ARROW_ASSIGN_OR_RAISE(auto written, writer->Finish(flow));
  for (size_t i = start; i < parts->size(); ++i) {
    ARROW_RETURN_NOT_OK(fs->DeleteFile(dir + "/" + (*parts)[i].file));
  }
  parts->resize(start);
  parts->insert(parts->end(), written.begin(), written.end());
  return arrow::Status::OK();
}

}  // namespace thund::native
