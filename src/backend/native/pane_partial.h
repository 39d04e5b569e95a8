// Internal: window panes (engine/stream/window_panes.h) computed in C++.
//
// A fast path of the window-pane operator (incremental_flow.cc), under the
// same switch as the aggregate's C++ partials (NativeRunOptions::
// direct_partial, `thund run --no-direct-partial`). Its plain twin is
// DuckDB: PanePartialSql for each trigger's new rows, PaneMergeSql and
// PaneBlockSql when windows close. Differential tests:
// tests/backend/window_panes_test.cc (every flow both ways, resumed runs, and
// random rows with NULL keys, values and times).
//
// Contract:
//  * PaneRows: one row per input row that has an event time, in
//    `partial_schema` (PanePartialSql's columns and types, which the caller
//    reads from DuckDB once): the keys, __pane (the start of the pane holding
//    the row, BIGINT microseconds, as PaneFloor computes it) and per aggregate
//    the row's contribution (count: 1 or 0 for a NULL argument; sum, min,
//    max: the value). A PartialMerger made for `partial_schema` with
//    PaneMergeFunctions folds them, and the state, into one row per
//    (keys, pane): the partials PanePartialSql would give, merged.
//  * TumblingWindowRows: for a tumbling window (a window is one pane), the
//    rows of the derived table for the windows whose end E has lo < E <= hi
//    (nullopt: open), from a state holding one row per (keys, pane), under
//    the block's column names and in the types PaneBlockSql gives: window
//    bounds as microsecond timestamps (`time_zone` set: with that zone, which
//    DuckDB reads as TIMESTAMPTZ), counts BIGINT, sum / min / max in the
//    partial's type.
//  * NotImplemented when a column is missing or a type is outside the path
//    (an event time that is not a timestamp; a floating-point sum, whose
//    rounding would depend on the order of the rows; a hopping window for
//    TumblingWindowRows): the caller then runs the queries.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/api.h>

#include "engine/stream/window_panes.h"

namespace thund::native {

// How each aggregate's partial merges: counts and sums add, min and max keep
// theirs.
std::vector<std::string> PaneMergeFunctions(const engine::stream::PaneBlock& b);

arrow::Result<std::shared_ptr<arrow::Table>> PaneRows(
    const std::shared_ptr<arrow::Table>& rows, const engine::stream::PaneBlock& b,
    const std::shared_ptr<arrow::Schema>& partial_schema);

arrow::Result<std::shared_ptr<arrow::Table>> TumblingWindowRows(
    const std::shared_ptr<arrow::Table>& panes, const engine::stream::PaneBlock& b,
    std::optional<int64_t> lo, std::optional<int64_t> hi,
    const std::optional<std::string>& time_zone);

// Which rows of `panes` (column __pane) no window still open needs: a window
// of `size_us` ending at or before `hi` holds them (true: the row leaves).
// Rows with a NULL pane leave too (they are in no window).
arrow::Result<std::shared_ptr<arrow::ChunkedArray>> PanesLeaving(
    const std::shared_ptr<arrow::Table>& panes, int64_t size_us, int64_t hi);

}  // namespace thund::native
