#include "backend/native/merge_sink.h"

#include "backend/native/consumers.h"
#include "backend/native/runner_util.h"
#include "engine/batch/merge_table.h"
#include "engine/batch/schema_conform.h"
#include "engine/fs/atomic_write.h"

namespace thund::native {

using engine::batch::MergeTable;
using engine::batch::VersionManifest;

DatasetOutcome WriteMergeSink(RunContext& ctx, const DatasetTask& task,
                              const std::optional<VersionManifest>& previous,
                              const engine::batch::Fingerprint& fp, const Decision& decision,
                              const engine::batch::SinkTarget& target,
                              const std::string& state_path) {
  const Dataset& d = *task.dataset;
  engine::batch::MergeTableOptions options;
  options.threads = ctx.options->native.threads;
  auto table = MergeTable::Open(target.FileSystemOr(ctx.store->shared_fs()), target.location,
                                d.storage.merge_keys, options);
  if (!table.ok()) return Fail(ctx, task, nullptr, table.status());
  auto expectations = engine::batch::CompileExpectations(d);
  if (!expectations.ok()) return Fail(ctx, task, nullptr, expectations.status());

  DatasetOutcome outcome = Outcome(d, DatasetStatus::kComputed, decision.reason);
  VersionManifest state;
  std::shared_ptr<arrow::Schema> schema = d.schema.declared() ? d.schema.arrow : nullptr;
  CollectConsumer rows;
  std::vector<std::pair<const Flow*, FlowResult>> done;
  for (const Flow* f : task.flows) {
    if (f->once && !task.full_refresh && previous && Contains(previous->once_flows, f->name)) {
      // Its rows were merged by the run that ran it; the table keeps them.
      EmitSkipped(ctx, {task.dataset, {f}, false}, "once flow already ran");
      state.once_flows.push_back(f->name);
      continue;
    }
    FlowRunOptions flow_options;
    flow_options.expectations = *expectations;
    flow_options.target_schema = schema;
    flow_options.declared = d.schema.declared();
    auto result = RunFlow(ctx, *f, d, flow_options, rows);
    if (!result.ok()) return Fail(ctx, task, f, result.status());
    if (!schema) schema = result->schema;
    if (f->once) state.once_flows.push_back(f->name);
    AddCounts(&outcome, *expectations, *result);
    done.emplace_back(f, std::move(*result));
  }
  if (!schema) {
    // Every flow was a once-flow that already ran: nothing new to merge.
    return Outcome(d, DatasetStatus::kUpToDate, "only once flows, which already ran");
  }
  auto merged_rows = arrow::Table::FromRecordBatches(schema, rows.batches());
  if (!merged_rows.ok()) return Fail(ctx, task, nullptr, merged_rows.status());
  const int64_t epoch = table->applied_epoch() + 1;
  auto merged = task.full_refresh ? table->Replace(epoch, *merged_rows, ctx.run_id)
                                  : table->Apply(epoch, *merged_rows, nullptr, ctx.run_id);
  if (!merged.ok()) {
    return Fail(ctx, task, nullptr,
                arrow::Status::Invalid("sink '", d.name, "': ", merged.status().message()));
  }
  for (const auto& note : merged->notes) ctx.notes.push_back(note);
  state.dataset = d.name;
  state.run_id = ctx.run_id;
  state.rows = merged->rows;
  state.files.push_back({"", target.path, merged->rows});
  state.fingerprint = fp;
  state.schema = engine::batch::DescribeSchema(*schema);
  arrow::Status st = ctx.store->fs().CreateDir(ctx.store->layout().MetaDir() + "/sinks", true);
  if (st.ok()) st = engine::WriteFileAtomically(ctx.store->fs(), state_path, state.ToJson());
  const std::string version = engine::batch::VersionName(merged->version);
  if (!st.ok()) {
    ctx.notes.push_back("sink '" + d.name + "': merged into " + target.path + " (" + version +
                        ") but could not record it (the next run merges again, which changes "
                        "nothing for the same rows): " + st.message());
  }
  const std::string message =
      std::string(task.full_refresh ? "replaced " : "merged into ") + target.path + " (" +
      version + ": " + std::to_string(merged->inserted) + " inserted, " +
      std::to_string(merged->updated) + " updated, " + std::to_string(merged->deleted) +
      " deleted, " + std::to_string(merged->rows) + " rows)";
  for (const auto& [flow, result] : done) EmitFinished(ctx, *flow, d, result, message);
  outcome.rows_written = merged->inserted + merged->updated;
  outcome.native->version = version;
  outcome.reason += "; " + message;
  return outcome;
}

}  // namespace thund::native
