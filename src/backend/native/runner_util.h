// Internal: small helpers shared by the dataset runners (stored, sink, view).
#pragma once

#include <string>
#include <vector>

#include "backend/native/flow_runner.h"
#include "backend/native/run_context.h"

namespace thund::native {

struct DatasetTask;

// An outcome with `status` and `reason` for `d`, its native part set (zeros).
DatasetOutcome Outcome(const Dataset& d, DatasetStatus status, std::string reason);

// Records a failure of `flow` (null: the dataset as a whole): emits kFlowFailed,
// marks the dataset unavailable to dependents, returns a "failed" outcome.
DatasetOutcome Fail(RunContext& ctx, const DatasetTask& task, const Flow* flow,
                    const arrow::Status& st);

void EmitFinished(RunContext& ctx, const Flow& flow, const Dataset& d, const FlowResult& r,
                  const std::string& message = "");

// Adds a flow's counts (violations, rows, bad rows) to the dataset outcome.
void AddCounts(DatasetOutcome* o, const std::vector<engine::batch::CompiledExpectation>& exps,
               const FlowResult& r);

// "00003" for 3.
std::string Pad(size_t i);

bool Contains(const std::vector<std::string>& v, const std::string& s);

}  // namespace thund::native
