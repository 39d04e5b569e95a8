// NativeBackend: runs pipelines on this machine with Arrow + DuckDB.
//
// Batch pipelines run end to end (docs/storage.md): flows in topological
// order, views bound in the run's DuckDB session, tables and materialized
// views committed as Parquet versions under the storage root, sinks written
// as files, expectations, reconciliation, run events and a run history.
// Streaming flows are refused by Check() for now.
//
//   auto backend = NativeBackend::Make();
//   RunOptions options;
//   options.on_event = [](const RunEvent& e) { std::cout << e.ToString() << "\n"; };
//   ARROW_ASSIGN_OR_RAISE(RunSummary summary, backend->Run(pipeline, options));
//
// Thread-safety: immutable; Run() may be called from several threads for
// different storage roots (one run per storage root at a time).
#pragma once

#include <memory>
#include <string>

#include "thund/backend.h"

namespace thund::native {

class NativeBackend : public ExecBackend {
 public:
  static std::shared_ptr<NativeBackend> Make();

  std::string name() const override { return "native"; }
  Capabilities capabilities() const override;
  // One error per (flow, capability) the engine cannot run; a warning per
  // storage knob it ignores (partition_by).
  Diagnostics Check(const Pipeline& p) const override;
  // Errors (the run could not start): the pipeline has validation or Check
  // errors, --refresh/--full-refresh name an unknown dataset, the storage
  // root cannot be created. Everything else is in the summary.
  arrow::Result<RunSummary> Run(const Pipeline& p, const RunOptions& options) override;
};

// The storage root a run uses: `override_root` when not empty, else the
// pipeline's `storage`, else ".thund/<pipeline name>" (relative paths are
// resolved from the working directory).
std::string ResolveStorageRoot(const Pipeline& p, const std::string& override_root);

}  // namespace thund::native
