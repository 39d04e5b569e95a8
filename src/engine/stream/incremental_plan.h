// Which incremental operators run a streaming flow's logical plan, or why the
// flow falls back to Recompute mode.
//
// The incremental mode runs three operator shapes (see docs/streaming.md):
//  * kStateless: the plan only filters, projects, unions streams (UNION ALL)
//    and joins one stream with static relations. Each trigger runs the
//    query over the trigger's new rows only: O(new rows), no state.
//  * kPartialAggregate: the outermost SELECT block is a GROUP BY aggregation
//    of decomposable aggregates over a stateless input, optionally grouped by
//    a tumbling or hopping window. DuckDB pre-aggregates each trigger's new
//    rows into partials per (window, group); the operator merges them into
//    its state, one row per open (window, group); closed windows leave it.
//  * kRowsAggregate: the same aggregation where an aggregate is not
//    decomposable (median, string_agg, count(DISTINCT ...)) or the window is a
//    session window: the operator keeps the rows of open windows (of its one
//    streaming input) and aggregates them when asked; rows whose windows all
//    closed leave it. Without a window it keeps every row.
// Anything else falls back, with `fallback` naming the node and the construct.
//
// Pure: reads the plan only. Pointers refer into the plan passed in, which
// must outlive the result.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/stream/dedup_shape.h"
#include "engine/stream/window_local.h"
#include "sql/sql_analysis.h"
#include "thund/ir.h"
#include "thund/plan.h"

namespace thund::engine::stream {

//  * kWindowed: a window-local query (window joins, nested aggregations
//    per window, deduplication or top-N per window; engine/stream/
//    window_local.h). The rows of open windows are kept; when W passes a
//    window's end the whole query runs over the windows that closed.
//  * kStreamJoin: an inner join of two streams under filters and
//    projections; each side keeps its rows for as long as a time bound says
//    (forever without one, or until the flow's state TTL).
//  * kDedup: SELECT DISTINCT, or row_number() = 1 per key, over one stream
//    (engine/stream/dedup_shape.h).
//  * kCdc: AUTO CDC over a stateless change feed; a change log per key
//    (engine/stream/cdc_plan.h, backend/native/incremental_cdc.h).
enum class IncrementalOperator {
  kStateless,
  kPartialAggregate,
  kRowsAggregate,
  kWindowed,
  kStreamJoin,
  kDedup,
  kCdc,
};
const char* Name(IncrementalOperator op);

// What one plan node becomes in the incremental mode, for `thund explain`.
struct NodeOperator {
  const plan::PlanNode* node = nullptr;
  int depth = 0;
  std::string op;     // "stateless filter", "partial aggregate", ...
  std::string state;  // "" = none; else what the operator keeps
};

struct IncrementalPlan {
  bool runnable = false;
  std::string fallback;  // when !runnable: "<Node> <construct>: <why>"
  IncrementalOperator op = IncrementalOperator::kStateless;
  const plan::PlanNode* aggregate = nullptr;  // the aggregation (aggregate ops)
  const plan::PlanNode* window = nullptr;     // its window assignment, or null
  std::vector<std::string> stream_inputs;     // the streaming datasets read
  std::vector<NodeOperator> nodes;            // pre-order
  // kWindowed / kStreamJoin: how long each stream input's rows matter.
  std::vector<RowReach> reach;
  int64_t emit_delay_us = 0;                  // kWindowed
  DedupShape dedup;                           // kDedup
  // kPartialAggregate over an inner join of two streams (no window): `reach`
  // holds the two sides as kStreamJoin keeps them, and each trigger
  // aggregates the join's new rows (new(A) x (kept(B) + new(B)) + kept(A) x
  // new(B)) into the partials.
  bool join_input = false;
  // kPartialAggregate whose SELECT block is a derived table of an outer query
  // (Nexmark q4: an average over per-auction maxima): `inner_block` is that
  // block (its alias names it in the outer FROM) and `aggregate` its
  // aggregation. The outer query reads nothing else of a stream; it runs
  // over the block's whole result whenever that changed (Complete mode) or
  // once at the end of input (Append). Null: the aggregation is outermost.
  const plan::PlanNode* inner_block = nullptr;
};

// `is_stream(name)` tells whether a scanned dataset is a stream in this run
// (a streaming dataset of the trigger loop). `decomposable(block)` is the SQL
// frontend's verdict on the aggregation of the SELECT block `block` (the
// root, or a derived table's block: OK, or NotImplemented naming the
// aggregate that cannot be decomposed); only asked when the plan aggregates.
IncrementalPlan PlanIncremental(
    const plan::PlanNode& root, const std::function<bool(const std::string&)>& is_stream,
    const std::function<arrow::Status(const plan::PlanNode& block)>& decomposable);

// A flow's incremental plan in its pipeline: streams are the pipeline's
// streaming datasets; an input written by a flow that is not append-only
// (update or complete output, AUTO CDC) makes the flow fall back. `agg` is
// the decomposition of a kPartialAggregate. `root` must outlive the result.
struct FlowIncremental {
  IncrementalPlan plan;
  sql::AggregateDecomposition agg;
};
// `hop_panes` offers panes to a hopping window (sql::HopPanes; off = every
// row joins each of its windows before the partial aggregation).
arrow::Result<FlowIncremental> PlanFlowIncremental(const Pipeline& p, const Flow& flow,
                                                   const plan::PlanNode& root,
                                                   const std::string& state_name,
                                                   bool hop_panes = true);

// One line per node: "<indent><Node>  -> <op>[; state: <state>]", or the
// fallback reason.
std::string DescribeIncremental(const IncrementalPlan& p);

}  // namespace thund::engine::stream
