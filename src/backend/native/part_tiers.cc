#include "backend/native/part_tiers.h"

#include <algorithm>

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

bool NewestMerge(const std::vector<int64_t>& triggers) {
  if (triggers.size() < kPartFanIn) return false;
  return std::all_of(triggers.end() - static_cast<std::ptrdiff_t>(kPartFanIn), triggers.end(),
                     [&](int64_t t) { return t == triggers.back(); });
}

arrow::Status MergeNewestParts(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                               const std::string& dir, const std::string& prefix,
                               const std::string& flow,
                               std::vector<engine::batch::PartFile>* parts) {
  for (int merge = 0;; ++merge) {
    std::vector<int64_t> triggers;
    for (const auto& p : *parts) triggers.push_back(p.triggers);
    if (!NewestMerge(triggers)) return arrow::Status::OK();
    const size_t start = parts->size() - kPartFanIn;
    std::vector<std::shared_ptr<arrow::Table>> tables;
    int64_t held = 0;
    for (size_t i = start; i < parts->size(); ++i) {
      ARROW_ASSIGN_OR_RAISE(auto t, engine::ReadParquetFile(*fs, dir + "/" + (*parts)[i].file));
      tables.push_back(std::move(t));
      held += (*parts)[i].triggers;
    }
    // Parts of one flow may differ in nullability (a source's NOT NULL
    // fields, DuckDB's nullable ones): the merged part takes the looser field.
    arrow::ConcatenateTablesOptions options;
    options.unify_schemas = true;
    ARROW_ASSIGN_OR_RAISE(auto merged, arrow::ConcatenateTables(tables, options));
    ARROW_ASSIGN_OR_RAISE(auto writer,
                          engine::batch::ParquetPartWriter::Open(
                              fs, dir, prefix + "-m" + std::to_string(merge), merged->schema()));
    ARROW_RETURN_NOT_OK(writer->WriteTable(*merged));
    ARROW_ASSIGN_OR_RAISE(auto written, writer->Finish(flow));
    for (size_t i = start; i < parts->size(); ++i) {
      ARROW_RETURN_NOT_OK(fs->DeleteFile(dir + "/" + (*parts)[i].file));
    }
    parts->resize(start);
    for (auto& w : written) w.triggers = held;
    parts->insert(parts->end(), written.begin(), written.end());
    if (written.size() != 1) return arrow::Status::OK();  // (the writer does not split here)
  }
}

}  // namespace thund::native
