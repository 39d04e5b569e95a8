// The AUTO CDC operator (IncrementalOperator::kCdc) in a flow's incremental
// plan, for MakeIncrementalFlow and `thund explain`.
//
// An AUTO CDC flow's query is its change feed (`FROM STREAM(t)`, or a query
// over it). In the incremental mode that query must be stateless over its
// streams: each trigger's new change rows are then the query over the
// trigger's new input rows. The CDC operator sits on top of the query, as the
// first node of the plan's list; it has no plan node of its own
// (NodeOperator::node is null, DescribeIncremental names it "AutoCdc").
//
// Pure: edits the plan only.
#pragma once

#include <string>

#include "engine/stream/incremental_plan.h"
#include "thund/ir.h"

namespace thund::engine::stream {

// REQUIRES: `plan` was planned from the query of a flow whose AUTO CDC is
// `cdc`. A runnable stateless plan becomes kCdc (the CDC node first, the
// query's nodes one level deeper). A runnable plan of another operator (the
// feed aggregates) becomes a fallback naming AUTO CDC; a plan that falls back
// already is left as it is.
void PlanCdcOperator(const Cdc& cdc, IncrementalPlan* plan);

// What the CDC operator keeps, as `thund explain` says it.
std::string CdcStateText(const Cdc& cdc);

}  // namespace thund::engine::stream
