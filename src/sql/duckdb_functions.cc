#include "sql/duckdb_functions.h"

#include <cstdint>
#include <limits>

namespace thund::sql {
namespace {

constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max();
constexpr int64_t kNegativeInfinity = -std::numeric_limits<int64_t>::max();

// Input values of type In count `in_unit` microseconds each (a DATE: a day);
// TIMESTAMP_NS values (`nanos`) are nanoseconds, truncated to microseconds as
// DuckDB casts them. The result is microseconds (TIMESTAMP / TIMESTAMPTZ).
template <typename In, int64_t in_unit, bool nanos>
void AddMicros(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  const idx_t n = duckdb_data_chunk_get_size(input);
  duckdb_vector ts = duckdb_data_chunk_get_vector(input, 0);
  duckdb_vector us = duckdb_data_chunk_get_vector(input, 1);
  // The C API hands scalar functions flat vectors.
  const auto* ts_data = static_cast<const In*>(duckdb_vector_get_data(ts));
  const auto* us_data = static_cast<const int64_t*>(duckdb_vector_get_data(us));
  uint64_t* ts_valid = duckdb_vector_get_validity(ts);
  uint64_t* us_valid = duckdb_vector_get_validity(us);
  auto* out = static_cast<int64_t*>(duckdb_vector_get_data(output));
  uint64_t* out_valid = nullptr;
  constexpr In kInf = std::numeric_limits<In>::max();
  for (idx_t i = 0; i < n; ++i) {
    if (!duckdb_validity_row_is_valid(ts_valid, i) || !duckdb_validity_row_is_valid(us_valid, i)) {
      if (!out_valid) {
        duckdb_vector_ensure_validity_writable(output);
        out_valid = duckdb_vector_get_validity(output);
      }
      duckdb_validity_set_row_invalid(out_valid, i);
      continue;
    }
    const In v = ts_data[i];
    if (v == kInf || v == -kInf) {  // +-infinity stays
      out[i] = v == kInf ? kInfinity : kNegativeInfinity;
      continue;
    }
    int64_t base = 0, sum = 0;
    const bool overflow =
        __builtin_mul_overflow(nanos ? static_cast<int64_t>(v) / 1000 : static_cast<int64_t>(v),
                               in_unit, &base) ||
        __builtin_add_overflow(base, us_data[i], &sum) || sum == kInfinity ||
        sum == kNegativeInfinity;
    if (overflow) {
      duckdb_scalar_function_set_error(info, "thund_add_micros: timestamp out of range");
      return;
    }
    out[i] = sum;
  }
}

arrow::Status AddOverload(duckdb_scalar_function_set set, duckdb_type in, duckdb_type result,
                          duckdb_scalar_function_t fn) {
  duckdb_scalar_function f = duckdb_create_scalar_function();
  duckdb_scalar_function_set_name(f, kAddMicrosFunction);
  duckdb_logical_type ts = duckdb_create_logical_type(in);
  duckdb_logical_type bigint = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
  duckdb_logical_type out = duckdb_create_logical_type(result);
  duckdb_scalar_function_add_parameter(f, ts);
  duckdb_scalar_function_add_parameter(f, bigint);
  duckdb_scalar_function_set_return_type(f, out);
  duckdb_scalar_function_set_function(f, fn);
  const duckdb_state st = duckdb_add_scalar_function_to_set(set, f);
  duckdb_destroy_logical_type(&ts);
  duckdb_destroy_logical_type(&bigint);
  duckdb_destroy_logical_type(&out);
  duckdb_destroy_scalar_function(&f);
  if (st != DuckDBSuccess) {
    return arrow::Status::UnknownError("cannot add a thund_add_micros overload");
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Status RegisterThundFunctions(duckdb_connection connection) {
  duckdb_scalar_function_set set = duckdb_create_scalar_function_set(kAddMicrosFunction);
  // The result types `ts + INTERVAL` has: TIMESTAMPTZ stays, the others give
  // a TIMESTAMP.
  struct Overload {
    duckdb_type in, result;
    duckdb_scalar_function_t fn;
  };
  const Overload overloads[] = {
      {DUCKDB_TYPE_TIMESTAMP, DUCKDB_TYPE_TIMESTAMP, AddMicros<int64_t, 1, false>},
      {DUCKDB_TYPE_TIMESTAMP_TZ, DUCKDB_TYPE_TIMESTAMP_TZ, AddMicros<int64_t, 1, false>},
      {DUCKDB_TYPE_TIMESTAMP_NS, DUCKDB_TYPE_TIMESTAMP, AddMicros<int64_t, 1, true>},
      {DUCKDB_TYPE_TIMESTAMP_MS, DUCKDB_TYPE_TIMESTAMP, AddMicros<int64_t, 1000, false>},
      {DUCKDB_TYPE_TIMESTAMP_S, DUCKDB_TYPE_TIMESTAMP, AddMicros<int64_t, 1000000, false>},
      {DUCKDB_TYPE_DATE, DUCKDB_TYPE_TIMESTAMP, AddMicros<int32_t, 86400000000, false>},
  };
  arrow::Status st;
  for (const auto& o : overloads) {
    if (st.ok()) st = AddOverload(set, o.in, o.result, o.fn);
  }
  if (st.ok() && duckdb_register_scalar_function_set(connection, set) != DuckDBSuccess) {
    st = arrow::Status::UnknownError("DuckDB refused thund's scalar functions");
  }
  duckdb_destroy_scalar_function_set(&set);
  return st;
}

}  // namespace thund::sql
