#include "engine/duckdb/arrow_scan_source.h"

#include <arrow/array/data.h>
#include <arrow/buffer.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include <algorithm>
#include <cctype>
#include <cstring>
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

// DuckDB's Arrow conversion reads validity bitmaps in whole 64-bit words
// (GetValidityMask), so a bitmap shorter than its last word is read past its
// end. Arrow's own allocations are padded to 64 bytes; bitmaps made elsewhere
// (exported by DuckDB itself, or by another producer through the C data
// interface) may be cut to the byte. Such bitmaps are copied into padded
// buffers here, once per registration; everything else is left as it is.
arrow::Result<std::shared_ptr<arrow::ArrayData>> PadValidity(
    const std::shared_ptr<arrow::ArrayData>& data, bool* changed) {
  std::shared_ptr<arrow::ArrayData> out = data;
  auto copy = [&] {
    if (out == data) out = std::make_shared<arrow::ArrayData>(*data);
  };
  const auto& validity = data->buffers.empty() ? nullptr : data->buffers[0];
  const int64_t words = (data->offset + data->length + 63) / 64;
  if (validity != nullptr && validity->size() < words * 8) {
    ARROW_ASSIGN_OR_RAISE(auto padded, arrow::AllocateBuffer(words * 8));
    std::memset(padded->mutable_data(), 0, static_cast<size_t>(words * 8));
    std::memcpy(padded->mutable_data(), validity->data(), static_cast<size_t>(validity->size()));
    copy();
    out->buffers[0] = std::shared_ptr<arrow::Buffer>(std::move(padded));
    *changed = true;
  }
  for (size_t i = 0; i < data->child_data.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto child, PadValidity(data->child_data[i], changed));
    if (child != data->child_data[i]) {
      copy();
      out->child_data[i] = std::move(child);
    }
  }
  if (data->dictionary) {
    ARROW_ASSIGN_OR_RAISE(auto dict, PadValidity(data->dictionary, changed));
    if (dict != data->dictionary) {
      copy();
      out->dictionary = std::move(dict);
    }
  }
  return out;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> PadValidity(
    const std::shared_ptr<arrow::RecordBatch>& batch) {
  bool changed = false;
  std::vector<std::shared_ptr<arrow::ArrayData>> columns;
  for (int c = 0; c < batch->num_columns(); ++c) {
    ARROW_ASSIGN_OR_RAISE(auto column, PadValidity(batch->column_data(c), &changed));
    columns.push_back(std::move(column));
  }
  if (!changed) return batch;
  return arrow::RecordBatch::Make(batch->schema(), batch->num_rows(), std::move(columns));
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
    ARROW_ASSIGN_OR_RAISE(auto padded, PadValidity(batch));
    source->batches_.push_back(std::move(padded));
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
