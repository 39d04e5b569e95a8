// Internal: AUTO CDC in the incremental mode (IncrementalOperator::kCdc), one
// trigger at a time, with state per key instead of the whole change log.
//
// Definition: after every trigger the target holds exactly what Recompute
// mode gives (engine/stream/cdc_apply.h over every change row seen so far,
// in arrival order). A key's target rows depend only on that key's changes,
// so a trigger re-applies only the keys its changes touch:
//  1. The trigger's change rows (the flow's query over its new input rows)
//     get arrival ordinals above every ordinal in the state, in row order.
//     Rows with a NULL key column or NULL sequence are ignored and counted;
//     the count is state, since Recompute reports the total so far.
//  2. Touched keys = the keys of the valid new rows. MakeCdcQuery runs over
//     the log rows of the touched keys plus the new rows; its result replaces
//     the target rows of the touched keys (keys match NULL-safely), the rows
//     of other keys stay as they are. A change that arrives out of sequence
//     order thus rewrites only its key's history.
//  3. The log keeps per touched key what a later change can still need:
//     SCD1 the winning change (highest (sequence, arrival)), a delete kept as
//     a tombstone, since a later change with a lower sequence still loses to
//     it; SCD2 every change, but of equal (key, sequence) only the last
//     arrival (the others never take effect again).
// No row is late: AUTO CDC has no watermark. PrepareIncrementalCdc leaves the
// flow's inputs without an event-time clock, so the Stepper drops nothing.
//
// State: IncrementalFlow::cdc_log (the change columns plus kCdcArrival) and
// IncrementalFlow::cdc_ignored, committed with the target's version like the
// other operators' state. Bound: SCD1 one log row per key ever seen, SCD2 one
// per (key, sequence value) ever seen (as the target keeps every version).
// Per trigger: queries over the new rows and the touched keys' log rows, plus
// one anti join each over the log and the target (the target is rewritten
// whole at the commit, as every CDC target is).
//
// Expectations of the target apply to the rows this trigger produced (the
// touched keys); violation counts are for those rows only.
//
// Not thread-safe: runs on the trigger loop's thread, in the run's session.
#pragma once

#include <memory>

#include <arrow/status.h>
#include <arrow/table.h>

#include "backend/native/incremental_flow.h"

namespace thund::native {

// The arrival ordinal column of the change log (as Recompute mode names it).
constexpr const char* kCdcArrival = "__thund_arrival";

// Readies `inc`, planned as kCdc for `flow` (REQUIRES: flow.cdc): the
// definition it was built for names the CDC clauses too (state committed for
// other keys, sequence, deletes, columns or SCD type is refused at restore),
// and no input keeps an event-time clock.
void PrepareIncrementalCdc(const Flow& flow, IncrementalFlow* inc);

// One trigger of the flow `f` into `ds`. `changes`: this trigger's change rows
// (null or empty: the target stays as it is). Sets step->ignored_changes to
// the total so far and, when changes arrived, the target (ReplaceRows), the
// log and the count; a failure leaves `f` and its state as they were.
// REQUIRES: f.incremental was planned as kCdc and prepared.
// The flow's AUTO CDC with its delete condition in DuckDB SQL (Recompute
// mode uses it too).
arrow::Result<Cdc> DuckDbCdc(const Flow& flow);

// `changes` with the arrival ordinals from, from + 1, ... in row order, as
// column kCdcArrival (Invalid when the feed already has a column of that
// name).
arrow::Result<std::shared_ptr<arrow::Table>> WithArrival(
    const std::shared_ptr<arrow::Table>& changes, int64_t from);

arrow::Status ApplyIncrementalCdc(RunContext& ctx, DatasetStream& ds, FlowStream& f,
                                  const std::shared_ptr<arrow::Table>& changes, FlowStep* step);

}  // namespace thund::native
