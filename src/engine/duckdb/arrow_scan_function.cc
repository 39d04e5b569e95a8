#include "engine/duckdb/arrow_scan_function.h"

#include <arrow/type.h>

#include <atomic>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "engine/duckdb/arrow_chunk_converter.h"

namespace thund::engine::duckdb_internal {
namespace {

// Ownership of our state objects passes to DuckDB, which frees them through this.
template <typename T>
void DeleteCallback(void* p) {
  std::unique_ptr<T> owned(static_cast<T*>(p));
}

using WeakRegistry = std::weak_ptr<ArrowTableRegistry>;

struct BindData {
  std::shared_ptr<const ArrowScanSource> source;  // pins the data for the query
  bool parallel = false;
};

struct GlobalState {
  std::shared_ptr<const ArrowScanSource> source;
  // Converts the projected data columns; null when DuckDB asks for no Arrow field
  // (DuckDB 1.4 asks for at least one even for count(*), so this is defensive).
  std::unique_ptr<ArrowChunkConverter> converter;
  // For each output column: its index in the converter's chunk, or -1 for a column
  // DuckDB asked for that is not an Arrow field (a row-id style placeholder, filled
  // with NULLs; not observed with DuckDB 1.4, kept so such a request cannot read
  // out of range).
  std::vector<int> output_source;
  std::atomic<size_t> next_slice{0};
};

std::string RegisteredList(const ArrowTableRegistry& registry) {
  std::string list;
  for (const auto& n : registry.Names()) list += (list.empty() ? "" : ", ") + n;
  return list.empty() ? "none" : list;
}

void Bind(duckdb_bind_info info) {
  try {
    auto registry = static_cast<WeakRegistry*>(duckdb_bind_get_extra_info(info))->lock();
    if (registry == nullptr) {
      duckdb_bind_set_error(info,
                            "thund_arrow_scan: the session that registered Arrow data is closed");
      return;
    }
    ValueHandle param(duckdb_bind_get_parameter(info, 0));
    if (!param || duckdb_is_null_value(param.get())) {
      duckdb_bind_set_error(info, "thund_arrow_scan: the table name must not be NULL");
      return;
    }
    char* raw = duckdb_get_varchar(param.get());
    std::string name(raw == nullptr ? "" : raw);
    duckdb_free(raw);
    auto source = registry->Find(name);
    if (source == nullptr) {
      std::string msg =
          "thund_arrow_scan: no Arrow table named '" + name +
          "' is registered with this session (registered: " + RegisteredList(*registry) + ")";
      duckdb_bind_set_error(info, msg.c_str());
      return;
    }
    const auto& fields = source->schema()->fields();
    for (size_t i = 0; i < fields.size(); ++i) {
      duckdb_bind_add_result_column(info, fields[i]->name().c_str(),
                                    source->column_type(static_cast<int>(i)));
    }
    duckdb_bind_set_cardinality(info, static_cast<idx_t>(source->num_rows()), /*is_exact=*/true);
    auto data = std::make_unique<BindData>(BindData{std::move(source), registry->parallel_scan()});
    duckdb_bind_set_bind_data(info, data.release(), DeleteCallback<BindData>);
  } catch (const std::exception& e) {
    duckdb_bind_set_error(info, e.what());
  }
}

void Init(duckdb_init_info info) {
  try {
    const auto* bind = static_cast<const BindData*>(duckdb_init_get_bind_data(info));
    auto state = std::make_unique<GlobalState>();
    state->source = bind->source;
    const int num_fields = state->source->schema()->num_fields();
    std::vector<int> fields;
    const idx_t n = duckdb_init_get_column_count(info);
    for (idx_t i = 0; i < n; ++i) {
      const idx_t column = duckdb_init_get_column_index(info, i);
      if (column < static_cast<idx_t>(num_fields)) {
        state->output_source.push_back(static_cast<int>(fields.size()));
        fields.push_back(static_cast<int>(column));
      } else {
        state->output_source.push_back(-1);
      }
    }
    if (!fields.empty()) {
      auto converter = ArrowChunkConverter::Make(state->source->converter()->connection.get(),
                                                 *state->source->schema(), std::move(fields));
      if (!converter.ok()) {
        duckdb_init_set_error(info, converter.status().ToString().c_str());
        return;
      }
      state->converter = std::move(converter).ValueUnsafe();
    }
    const size_t slices = state->source->slices().size();
    duckdb_init_set_max_threads(info, bind->parallel && slices > 1 ? slices : 1);
    duckdb_init_set_init_data(info, state.release(), DeleteCallback<GlobalState>);
  } catch (const std::exception& e) {
    duckdb_init_set_error(info, e.what());
  }
}

// Makes `vector` all-NULL for `count` rows (for placeholder columns).
void FillNull(duckdb_vector vector, idx_t count) {
  duckdb_vector_ensure_validity_writable(vector);
  uint64_t* validity = duckdb_vector_get_validity(vector);
  for (idx_t r = 0; r < count; ++r) duckdb_validity_set_row_invalid(validity, r);
}

void Scan(duckdb_function_info info, duckdb_data_chunk output) {
  try {
    auto* state = static_cast<GlobalState*>(duckdb_function_get_init_data(info));
    const auto& slices = state->source->slices();
    const size_t k = state->next_slice.fetch_add(1, std::memory_order_relaxed);
    if (k >= slices.size()) {
      duckdb_data_chunk_set_size(output, 0);
      return;
    }
    const auto& slice = slices[k];
    const auto count = static_cast<idx_t>(slice.length);
    DataChunkHandle chunk;
    if (state->converter != nullptr) {
      auto converted = state->converter->Convert(*state->source->SliceBatch(slice));
      if (!converted.ok()) {
        duckdb_function_set_error(info, converted.status().ToString().c_str());
        return;
      }
      chunk = std::move(converted).ValueUnsafe();
    }
    for (size_t i = 0; i < state->output_source.size(); ++i) {
      duckdb_vector out = duckdb_data_chunk_get_vector(output, static_cast<idx_t>(i));
      const int from = state->output_source[i];
      if (from >= 0) {
        duckdb_vector_reference_vector(out, duckdb_data_chunk_get_vector(chunk.get(), from));
      } else {
        FillNull(out, count);
      }
    }
    duckdb_data_chunk_set_size(output, count);
  } catch (const std::exception& e) {
    duckdb_function_set_error(info, e.what());
  }
}

}  // namespace

arrow::Status RegisterArrowScanFunction(duckdb_connection connection,
                                        const std::shared_ptr<ArrowTableRegistry>& registry) {
  duckdb_table_function function = duckdb_create_table_function();
  duckdb_table_function_set_name(function, kArrowScanFunctionName);
  LogicalTypeHandle varchar(duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR));
  duckdb_table_function_add_parameter(function, varchar.get());
  auto weak = std::make_unique<WeakRegistry>(registry);
  duckdb_table_function_set_extra_info(function, weak.release(), DeleteCallback<WeakRegistry>);
  duckdb_table_function_set_bind(function, Bind);
  duckdb_table_function_set_init(function, Init);
  duckdb_table_function_set_function(function, Scan);
  duckdb_table_function_supports_projection_pushdown(function, true);
  const duckdb_state state = duckdb_register_table_function(connection, function);
  duckdb_destroy_table_function(&function);
  if (state != DuckDBSuccess) {
    return arrow::Status::UnknownError("could not register the ", kArrowScanFunctionName,
                                       " table function with DuckDB");
  }
  return arrow::Status::OK();
}

}  // namespace thund::engine::duckdb_internal
