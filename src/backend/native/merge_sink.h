// Internal: sinks with mode merge (StorageSpec::merge_keys). A batch run
// collects the rows of every flow into the sink and upserts them into the
// sink's merge table (engine/batch/merge_table.h) as one epoch, numbered
// applied_epoch() + 1, so each run applies exactly once and running twice
// with the same input leaves the same table. A full refresh replaces the
// table's content with the run's rows instead.
#pragma once

#include <optional>
#include <string>

#include "backend/native/dataset_runner.h"
#include "backend/native/reconcile.h"
#include "engine/batch/sink_writer.h"

namespace thund::native {

DatasetOutcome WriteMergeSink(RunContext& ctx, const DatasetTask& task,
                              const std::optional<engine::batch::VersionManifest>& previous,
                              const engine::batch::Fingerprint& fp, const Decision& decision,
                              const engine::batch::SinkTarget& target,
                              const std::string& state_path);

}  // namespace thund::native
