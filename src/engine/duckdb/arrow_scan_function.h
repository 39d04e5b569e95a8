// The `thund_arrow_scan(name VARCHAR)` DuckDB table function.
//
// Produces the rows of the Arrow data registered under `name`. Built on the C-API
// table-function interface:
//   bind  - looks `name` up in the registry, declares one result column per Arrow
//           field (types from duckdb_schema_from_arrow), and pins the data for the
//           query's lifetime;
//   init  - reads DuckDB's projection (projection pushdown is supported: only the
//           columns the query uses are converted) and prepares a converter for them;
//   scan  - claims the next slice (<= duckdb_vector_size() rows) from an atomic
//           cursor, converts it with duckdb_data_chunk_from_arrow, and hands the
//           vectors to DuckDB's output chunk with duckdb_vector_reference_vector
//           (no copy of fixed-width or string data).
// No filter is pushed into the scan: DuckDB filters the rows it receives, so a
// filtered query can never see rows of the wrong column or miss a predicate (the
// failure mode of duckdb_arrow_scan, DESIGN.md §5).
//
// Parallelism: when the registry allows it, the scan declares as many threads as it
// has slices and every DuckDB worker pulls slices from the shared cursor; row order
// of an unordered query then follows no rule. With parallel_scan off, slices are
// produced in registration order by one thread.
#pragma once

#include <arrow/status.h>
#include <duckdb.h>

#include <memory>

#include "engine/duckdb/arrow_table_registry.h"

namespace thund::engine::duckdb_internal {

inline constexpr char kArrowScanFunctionName[] = "thund_arrow_scan";

// Registers the function in the database of `connection`. The function refers to
// `registry` weakly: after the registry is destroyed, binding it fails with an error
// instead of touching freed memory.
arrow::Status RegisterArrowScanFunction(duckdb_connection connection,
                                        const std::shared_ptr<ArrowTableRegistry>& registry);

}  // namespace thund::engine::duckdb_internal
