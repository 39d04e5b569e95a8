// Internal: computes one dataset from all its flows — a stored dataset as a
// new committed version, a sink as a published file, a view as a name bound
// in the run's DuckDB session — and records its state for dependents.
//
// Each function emits the per-flow events (started/progress/expectation via
// RunFlow, then finished, skipped or failed) and returns the dataset's
// outcome; a failure is an outcome with status "failed", never a Status.
// Implementations: dataset_runner.cc (stored), sink_runner.cc, view_runner.cc.
#pragma once

#include <vector>

#include "backend/native/run_context.h"

namespace thund::native {

struct DatasetTask {
  const Dataset* dataset = nullptr;
  std::vector<const Flow*> flows;  // every flow into the dataset, pipeline order
  bool full_refresh = false;
};

DatasetOutcome MaterializeStored(RunContext& ctx, const DatasetTask& task);
DatasetOutcome WriteSink(RunContext& ctx, const DatasetTask& task);
DatasetOutcome DefineView(RunContext& ctx, const DatasetTask& task);

// Emits kFlowSkipped for every flow of `task` with `why`.
void EmitSkipped(RunContext& ctx, const DatasetTask& task, const std::string& why);

}  // namespace thund::native
