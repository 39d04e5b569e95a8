// Checking and ordering a pipeline.
#pragma once

#include <string>
#include <vector>

#include <arrow/result.h>

#include "thund/diagnostic.h"
#include "thund/ir.h"

namespace thund {

// The datasets a SQL query reads, in first-seen order, as inferred by DuckDB's
// own parser (json_serialize_sql). CTE names, subquery aliases and table
// functions (read_parquet, range, ...) are not dataset references. A
// `STREAM(x)` / `stream(x)` call counts as reading dataset `x`. Qualified names
// keep their qualifier ("db.t").
// Returns an error Status (with DuckDB's message and the character offset if
// known) when the SQL does not parse.
// Thread-safe.
arrow::Result<std::vector<std::string>> InferSqlInputs(const std::string& sql);

// Inputs of one flow: InferSqlInputs(flow.sql) resolved against the pipeline
// (qualified names whose qualifier is the pipeline's database or "live" are
// reduced to the bare name). Empty for source flows.
arrow::Result<std::vector<std::string>> FlowInputs(const Pipeline& p, const Flow& flow);

// Every problem in `p`, not just the first. Each diagnostic names the dataset
// and/or flow at fault, carries their source location when known, and says what
// to do. Errors make the pipeline unrunnable; warnings do not.
Diagnostics Validate(const Pipeline& p);

// Flows in an order where every flow runs after all flows writing the datasets
// it reads. Deterministic: among ready flows, the smallest name goes first.
// Fails (naming the members) if the flow graph has a cycle.
arrow::Result<std::vector<const Flow*>> TopoOrder(const Pipeline& p);

// The capabilities a backend needs to run `flow`, e.g. "batch-sql",
// "streaming", "source:file_drop", "watermark", "window:hopping",
// "output:update", "cdc:scd2", "expectations", "keyed-write". Sorted.
std::vector<std::string> RequiredCapabilities(const Pipeline& p, const Flow& flow);

}  // namespace thund
