// Internal: the streaming part of a native run (Recompute mode).
//
// Every dataset with a streaming flow runs in one trigger loop:
//   per trigger: (1) every source takes its next batch; (2) datasets in
//   dependency order run each flow's step (stream_flow.h) and are re-bound in
//   the session; (3) each dataset that changed commits a new version with its
//   source positions and flow state (stream_state.h); (4) a kTrigger event per
//   flow reports rows in/out, latency and source positions.
// The run's trigger policy comes from the flows' triggers: any
// ProcessingTime(ms) -> a trigger every (smallest) interval until stopped, the
// cap, or every source exhausted; all Once -> one trigger taking everything
// available; otherwise AvailableNow -> triggers until one takes no new input
// or every source is exhausted. RunOptions::max_triggers caps the count;
// RunOptions::stop ends the run after the current trigger (it is committed).
// When every source is bounded and exhausted, the last trigger closes every
// window (watermark = end of input). A file sink in the loop gets one
// epoch-named file per trigger (stream_state.h).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "backend/native/run_context.h"

namespace thund::native {

// Runs `datasets` (each has at least one streaming flow; dependency order) and
// appends one outcome per dataset to `summary` (notes too). Marks each in
// ctx.states for dependents.
void RunStreams(RunContext& ctx, const std::vector<const Dataset*>& datasets,
                RunSummary* summary);

}  // namespace thund::native
