// Internal: one batch run of a pipeline (NativeBackend::Run).
//
// Order of work: validate and check; open the storage root and a DuckDB
// session; bind every committed dataset; then, per dataset in dependency
// order: skip it when an input is unavailable (naming the upstream), or when
// it is not selected (--refresh / --full-refresh); otherwise define it (views)
// or reconcile and compute it (stored datasets, sinks). Finally append the run
// to the run history.
//
// Selection (spark-pipelines semantics): with no --refresh / --full-refresh
// every dataset is considered; otherwise only the named ones, plus upstream
// stored datasets that were never materialized (they are needed to read
// from). --full-refresh recomputes regardless of fingerprints (and re-runs
// once flows); --full-refresh-all does so for every dataset.
#pragma once

#include <arrow/result.h>

#include "thund/backend.h"

namespace thund::native {

arrow::Result<RunSummary> RunBatch(const ExecBackend& backend, const Pipeline& p,
                                   const RunOptions& options);

}  // namespace thund::native
