#include "engine/duckdb/duckdb_result_reader.h"

#include <arrow/c/bridge.h>
#include <arrow/type.h>

#include <string>
#include <vector>

#include "engine/duckdb/duckdb_status.h"

namespace thund::engine::duckdb_internal {
namespace {

arrow::Status ResultError(duckdb_result* result, std::string_view context) {
  const char* msg = duckdb_result_error(result);
  return DuckDbError(duckdb_result_error_type(result), msg == nullptr ? "" : msg, context);
}

}  // namespace

arrow::Result<std::shared_ptr<DuckDbResultReader>> DuckDbResultReader::OpenMaterialized(
    std::shared_ptr<SessionCore> core, std::string_view sql) {
  std::shared_ptr<DuckDbResultReader> reader(new DuckDbResultReader(std::move(core)));
  const std::string text(sql);
  if (duckdb_query(reader->core_->connection.get(), text.c_str(), reader->result_.out()) !=
      DuckDBSuccess) {
    return ResultError(reader->result_.get(), "SQL failed");
  }
  ARROW_RETURN_NOT_OK(reader->InitSchema());
  return reader;
}

arrow::Result<std::shared_ptr<DuckDbResultReader>> DuckDbResultReader::OpenStreaming(
    std::shared_ptr<SessionCore> core, std::string_view sql) {
  std::shared_ptr<DuckDbResultReader> reader(new DuckDbResultReader(std::move(core)));
  const std::string text(sql);
  if (duckdb_prepare(reader->core_->connection.get(), text.c_str(), reader->prepared_.out()) !=
      DuckDBSuccess) {
    const char* msg = duckdb_prepare_error(reader->prepared_.get());
    // The C API gives no error class for a failed prepare.
    return DuckDbError(DUCKDB_ERROR_INVALID, msg == nullptr ? "" : msg, "SQL failed");
  }
  if (duckdb_pending_prepared_streaming(reader->prepared_.get(), reader->pending_.out()) !=
      DuckDBSuccess) {
    const char* msg = duckdb_pending_error(reader->pending_.get());
    return DuckDbError(DUCKDB_ERROR_INVALID, msg == nullptr ? "" : msg, "SQL failed");
  }
  if (duckdb_execute_pending(reader->pending_.get(), reader->result_.out()) != DuckDBSuccess) {
    return ResultError(reader->result_.get(), "SQL failed");
  }
  ARROW_RETURN_NOT_OK(reader->InitSchema());
  reader->core_->open_stream.store(reader.get());
  return reader;
}

DuckDbResultReader::~DuckDbResultReader() { ReleaseConnection(); }

void DuckDbResultReader::ReleaseConnection() {
  const void* self = this;
  core_->open_stream.compare_exchange_strong(self, nullptr);
}

arrow::Status DuckDbResultReader::InitSchema() {
  duckdb_result* result = result_.get();
  arrow_options_ = ArrowOptionsHandle(duckdb_result_get_arrow_options(result));
  const idx_t n = duckdb_column_count(result);
  std::vector<LogicalTypeHandle> owned_types;
  std::vector<duckdb_logical_type> types;
  std::vector<const char*> names;
  for (idx_t i = 0; i < n; ++i) {
    owned_types.emplace_back(duckdb_column_logical_type(result, i));
    types.push_back(owned_types.back().get());
    names.push_back(duckdb_column_name(result, i));
  }
  OwnedArrowSchema c_schema;
  ARROW_RETURN_NOT_OK(ConsumeErrorData(
      duckdb_to_arrow_schema(arrow_options_.get(), types.data(), names.data(), n, &c_schema.c),
      "converting a DuckDB result schema to Arrow"));
  ARROW_ASSIGN_OR_RAISE(schema_, arrow::ImportSchema(&c_schema.c));
  return arrow::Status::OK();
}

arrow::Status DuckDbResultReader::ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) {
  *batch = nullptr;
  while (!done_) {
    DataChunkHandle chunk(duckdb_fetch_chunk(*result_.get()));
    if (!chunk) {
      done_ = true;
      ReleaseConnection();
      if (duckdb_result_error(result_.get()) != nullptr) {
        return ResultError(result_.get(), "reading a DuckDB result");
      }
      break;
    }
    if (duckdb_data_chunk_get_size(chunk.get()) == 0) continue;
    OwnedArrowArray c_array;
    ARROW_RETURN_NOT_OK(
        ConsumeErrorData(duckdb_data_chunk_to_arrow(arrow_options_.get(), chunk.get(), &c_array.c),
                         "converting a DuckDB result chunk to Arrow"));
    ARROW_ASSIGN_OR_RAISE(*batch, arrow::ImportRecordBatch(&c_array.c, schema_));
    return arrow::Status::OK();
  }
  return arrow::Status::OK();
}

arrow::Status DuckDbResultReader::Close() {
  done_ = true;
  ReleaseConnection();
  result_.reset();
  pending_.reset();
  prepared_.reset();
  return arrow::Status::OK();
}

}  // namespace thund::engine::duckdb_internal
