// Internal: an incremental aggregate's partials computed in C++ from one
// trigger's input rows, without a query.
//
// A fast path (NativeRunOptions::direct_partial, `thund run
// --no-direct-partial`); its plain twin is the decomposition's partial_sql
// run by DuckDB. Differential tests: tests/backend/partial_merge_test.cc and
// the incremental property test.
//
// Contract:
//  * The planner allowed it (sql::AggregateDecomposition::direct): the
//    aggregation's window (tumbling, or hopping as panes) sits right on the
//    scan of its one stream, with no WHERE; each grouping key is an input
//    column or the window; each partial is count(*), or count / sum / min /
//    max of an input column.
//  * `rows` are that stream's new rows. Each row falls in one window: the
//    newest that holds it (a tumbling window, or the pane), its start
//    `ts - ((ts - offset) mod slide)` as the dialect computes it; a row with a
//    NULL event time is in none and is left out.
//  * The result has exactly `partial_schema` (the partial query's columns and
//    types, which the caller reads from DuckDB once), one row per group.
//  * NotImplemented when a column is missing or a type is outside the path
//    (an event time that is not a microsecond timestamp; keys the merge does
//    not take): the caller then runs the query.
#pragma once

#include <memory>

#include <arrow/api.h>

#include "backend/native/partial_merge.h"
#include "sql/sql_analysis.h"
#include "thund/plan.h"

namespace thund::native {

// The column of `rows` named `name` (case-insensitive, as SQL resolves it),
// as one array; NotImplemented when there is none.
arrow::Result<std::shared_ptr<arrow::Array>> InputColumn(const arrow::Table& rows,
                                                         const std::string& name);
// `a` in `type` (itself when it has it already).
arrow::Result<std::shared_ptr<arrow::Array>> CastArray(
    const std::shared_ptr<arrow::Array>& a, const std::shared_ptr<arrow::DataType>& type);

// `merger` folds the rows' values per group; it must have been made for
// `partial_schema` (the caller keeps it across triggers).
arrow::Result<std::shared_ptr<arrow::Table>> DirectPartial(
    const std::shared_ptr<arrow::Table>& rows, const sql::AggregateDecomposition& agg,
    const plan::WindowInfo& window, const std::shared_ptr<arrow::Schema>& partial_schema,
    PartialMerger* merger);

}  // namespace thund::native
