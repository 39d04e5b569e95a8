#include "engine/duckdb/arrow_chunk_converter.h"

#include <arrow/c/bridge.h>
#include <arrow/type.h>

#include <string>

#include "engine/duckdb/duckdb_status.h"

namespace thund::engine::duckdb_internal {
namespace {

// DuckDB's view of one Arrow schema; fails when DuckDB cannot represent a type.
arrow::Result<ConvertedSchemaHandle> ConvertSchema(duckdb_connection connection,
                                                   const arrow::Schema& schema) {
  OwnedArrowSchema c_schema;
  ARROW_RETURN_NOT_OK(arrow::ExportSchema(schema, &c_schema.c));
  ConvertedSchemaHandle converted;
  // duckdb_schema_from_arrow reads the schema but does not take it; ours releases it.
  ARROW_RETURN_NOT_OK(ConsumeErrorData(
      duckdb_schema_from_arrow(connection, &c_schema.c, converted.out()), "Arrow schema"));
  return converted;
}

// Names every field DuckDB cannot represent, for an actionable error.
arrow::Status ExplainUnsupported(duckdb_connection connection, const arrow::Schema& schema,
                                 const arrow::Status& original) {
  std::string bad;
  for (const auto& field : schema.fields()) {
    if (!ConvertSchema(connection, arrow::Schema({field})).ok()) {
      if (!bad.empty()) bad += ", ";
      bad += "'" + field->name() + "' (" + field->type()->ToString() + ")";
    }
  }
  if (bad.empty()) return original;
  return arrow::Status::NotImplemented(
      "DuckDB cannot scan Arrow column(s) ", bad,
      "; cast them to a supported type (e.g. with arrow::compute::Cast) before registering. ",
      original.message());
}

}  // namespace

arrow::Result<std::unique_ptr<ArrowChunkConverter>> ArrowChunkConverter::Make(
    duckdb_connection connection, const arrow::Schema& schema, std::vector<int> fields) {
  if (fields.empty()) return arrow::Status::Invalid("ArrowChunkConverter needs >= 1 field");
  arrow::FieldVector selected;
  selected.reserve(fields.size());
  for (int f : fields) {
    if (f < 0 || f >= schema.num_fields()) {
      return arrow::Status::IndexError("field ", f, " out of range for ", schema.ToString());
    }
    selected.push_back(schema.field(f));
  }
  auto projected = arrow::schema(std::move(selected));
  auto converted = ConvertSchema(connection, *projected);
  if (!converted.ok()) return ExplainUnsupported(connection, *projected, converted.status());
  return std::unique_ptr<ArrowChunkConverter>(new ArrowChunkConverter(
      connection, std::move(projected), std::move(converted).ValueUnsafe(), std::move(fields)));
}

arrow::Result<DataChunkHandle> ArrowChunkConverter::Convert(const arrow::RecordBatch& batch) const {
  if (static_cast<uint64_t>(batch.num_rows()) > duckdb_vector_size()) {
    return arrow::Status::Invalid("Arrow slice of ", batch.num_rows(),
                                  " rows exceeds DuckDB's vector size ", duckdb_vector_size());
  }
  ARROW_ASSIGN_OR_RAISE(auto selected, batch.SelectColumns(fields_));
  OwnedArrowArray c_array;
  ARROW_RETURN_NOT_OK(arrow::ExportRecordBatch(*selected, &c_array.c));
  DataChunkHandle chunk;
  // On success DuckDB takes ownership of the array (it nulls `release`); on failure
  // c_array still owns it and releases it here.
  ARROW_RETURN_NOT_OK(ConsumeErrorData(
      duckdb_data_chunk_from_arrow(connection_, &c_array.c, converted_.get(), chunk.out()),
      "converting an Arrow batch for DuckDB"));
  if (!chunk) return arrow::Status::UnknownError("duckdb_data_chunk_from_arrow returned no chunk");
  return chunk;
}

arrow::Result<std::vector<LogicalTypeHandle>> ArrowChunkConverter::ColumnTypes() const {
  // The C API has no accessor for a converted schema's types; converting an empty
  // batch yields a chunk whose vectors carry them.
  ARROW_ASSIGN_OR_RAISE(auto empty, arrow::RecordBatch::MakeEmpty(schema_));
  OwnedArrowArray c_array;
  ARROW_RETURN_NOT_OK(arrow::ExportRecordBatch(*empty, &c_array.c));
  DataChunkHandle chunk;
  ARROW_RETURN_NOT_OK(ConsumeErrorData(
      duckdb_data_chunk_from_arrow(connection_, &c_array.c, converted_.get(), chunk.out()),
      "deriving DuckDB column types from an Arrow schema"));
  std::vector<LogicalTypeHandle> types;
  const idx_t n = duckdb_data_chunk_get_column_count(chunk.get());
  if (n != fields_.size()) {
    return arrow::Status::UnknownError("DuckDB converted ", fields_.size(), " Arrow columns into ",
                                       n, " columns");
  }
  for (idx_t i = 0; i < n; ++i) {
    LogicalTypeHandle type(
        duckdb_vector_get_column_type(duckdb_data_chunk_get_vector(chunk.get(), i)));
    if (duckdb_get_type_id(type.get()) == DUCKDB_TYPE_INVALID) {
      return arrow::Status::NotImplemented(
          "DuckDB has no type for Arrow column '", schema_->field(static_cast<int>(i))->name(),
          "' (", schema_->field(static_cast<int>(i))->type()->ToString(), ")");
    }
    types.push_back(std::move(type));
  }
  return types;
}

}  // namespace thund::engine::duckdb_internal
