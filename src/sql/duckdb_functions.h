// Internal: thund's own scalar functions, registered in every DuckDB database
// thund opens (the run's session, the SQL frontend's parser and binder), so
// the SQL the dialect writes binds and runs everywhere.
//
//   thund_add_micros(ts, us BIGINT)
//     `ts` moved by `us` microseconds, computed on the stored value, with the
//     value and type of `ts + to_microseconds(us)`: TIMESTAMP WITH TIME ZONE
//     stays, other timestamps and DATE give a TIMESTAMP. But a
//     TIMESTAMP WITH TIME ZONE never goes through ICU's calendar (which `+`
//     with an INTERVAL does, about four times slower; window assignment
//     computes several such sums per row). NULL in, NULL out; +-infinity
//     stays; an overflow is an error.
#pragma once

#include <arrow/status.h>
#include <duckdb.h>

namespace thund::sql {

inline constexpr const char* kAddMicrosFunction = "thund_add_micros";

arrow::Status RegisterThundFunctions(duckdb_connection connection);

}  // namespace thund::sql
