// Internal: the fast path of a stored dataset's flow — DuckDB writes the part
// file itself (COPY ... TO, on every DuckDB thread) instead of streaming the
// result through Arrow into thund's Parquet writer.
//
// Taken only when nothing has to see the rows on their way: a SQL flow, the
// dataset's only flow, no expectations, no declared schema, no keyed write,
// and the run writes through the local filesystem (with a fault-injecting
// filesystem every write must pass the seam, so the Arrow path is used). The
// part file lands in the uncommitted version dir like any other part, so the
// atomic commit is unchanged: a crash mid-COPY leaves an abandoned dir.
#pragma once

#include <string>

#include "backend/native/flow_runner.h"

namespace thund::native {

bool CanCopyFlow(const RunContext& ctx, const Flow& flow, const Dataset& target,
                 size_t flows_into_target);

// Runs `flow` with COPY into `dir`/`file` (a Parquet file name). Emits
// kFlowStarted; errors name the flow (SQL errors, missing input files).
// FlowResult::schema is the Arrow schema of the rows (as thund would store
// them); rows_in == rows_out == rows written.
arrow::Result<FlowResult> CopyFlow(RunContext& ctx, const Flow& flow, const Dataset& target,
                                   const std::string& dir, const std::string& file);

}  // namespace thund::native
