#include "engine/duckdb/arrow_scan_source.h"

#include <arrow/type.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "engine/duckdb/arrow_chunk_converter.h"
#include "engine/duckdb/arrow_precision_check.h"

namespace thund::engine::duckdb_internal {
namespace {

std::string AsciiLower(const std::string& s) {
  std::string out = s;
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

arrow::Status CheckColumnNames(const arrow::Schema& schema) {
  if (schema.num_fields() == 0) {
    return arrow::Status::Invalid("an Arrow table needs at least one column to be queried by SQL");
  }
  std::map<std::string, std::string> seen;
  for (const auto& field : schema.fields()) {
    auto [it, inserted] = seen.emplace(AsciiLower(field->name()), field->name());
    if (!inserted) {
      return arrow::Status::Invalid("Arrow columns '", it->second, "' and '", field->name(),
                                    "' have the same name to SQL (names are case-insensitive); "
                                    "rename one of them");
    }
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<std::shared_ptr<const ArrowScanSource>> ArrowScanSource::Make(
    std::shared_ptr<ConverterConnection> converter, std::shared_ptr<arrow::Schema> schema,
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  ARROW_RETURN_NOT_OK(CheckColumnNames(*schema));
  std::shared_ptr<ArrowScanSource> source(new ArrowScanSource());
  std::vector<int> all(static_cast<size_t>(schema->num_fields()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  ARROW_ASSIGN_OR_RAISE(auto full,
                        ArrowChunkConverter::Make(converter->connection.get(), *schema, all));
  ARROW_ASSIGN_OR_RAISE(source->types_, full->ColumnTypes());

  const auto max_rows = static_cast<int64_t>(duckdb_vector_size());
  for (const auto& batch : batches) {
    if (!batch->schema()->Equals(*schema, /*check_metadata=*/false)) {
      return arrow::Status::Invalid("record batch schema ", batch->schema()->ToString(),
                                    " differs from the registered schema ", schema->ToString());
    }
    if (batch->num_rows() == 0) continue;
    const int index = static_cast<int>(source->batches_.size());
    source->batches_.push_back(batch);
    for (int64_t off = 0; off < batch->num_rows(); off += max_rows) {
      source->slices_.push_back({index, off, std::min(max_rows, batch->num_rows() - off)});
    }
    source->num_rows_ += batch->num_rows();
  }
  ARROW_RETURN_NOT_OK(CheckMicrosecondPrecision(source->batches_));
  source->converter_ = std::move(converter);
  source->schema_ = std::move(schema);
  return std::shared_ptr<const ArrowScanSource>(std::move(source));
}

}  // namespace thund::engine::duckdb_internal
