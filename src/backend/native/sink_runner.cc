// Sinks: every flow into a sink writes one file per run (engine/batch/sink_writer.h),
// or, with mode merge, upserts into the sink's merge table (merge_sink.h); the
// sink's last successful write is recorded for reconciliation.
#include <optional>

#include "backend/native/consumers.h"
#include "backend/native/dataset_runner.h"
#include "backend/native/keyed_write.h"
#include "backend/native/merge_sink.h"
#include "backend/native/reconcile.h"
#include "backend/native/runner_util.h"
#include "engine/batch/schema_conform.h"
#include "engine/fs/atomic_write.h"

namespace thund::native {

using engine::batch::VersionManifest;

DatasetOutcome WriteSink(RunContext& ctx, const DatasetTask& task) {
  const Dataset& d = *task.dataset;
  const std::string state_path = ctx.store->layout().SinkStatePath(d.name);
  std::optional<VersionManifest> previous;
  if (auto text = engine::ReadWholeFile(ctx.store->fs(), state_path); text.ok()) {
    if (auto m = VersionManifest::Parse(*text, state_path); m.ok()) previous = std::move(*m);
  }
  auto fp = ComputeFingerprint(ctx, d, task.flows);
  if (!fp.ok()) return Fail(ctx, task, nullptr, fp.status());
  Decision decision = Decide(previous, *fp, task.full_refresh);
  if (!decision.compute) {
    EmitSkipped(ctx, task, decision.reason);
    return Outcome(d, DatasetStatus::kUpToDate, decision.reason);
  }
  auto target = engine::batch::ResolveSink(d, ctx.store->layout());
  if (!target.ok()) return Fail(ctx, task, nullptr, target.status());
  if (d.storage.mode == WriteMode::kMerge) {
    return WriteMergeSink(ctx, task, previous, *fp, decision, *target, state_path);
  }
  if (d.keyed_write.enabled()) {
    return WriteKeyedSink(ctx, task, previous, *fp, decision, *target, state_path);
  }
  auto expectations = engine::batch::CompileExpectations(d);
  if (!expectations.ok()) return Fail(ctx, task, nullptr, expectations.status());
  const bool json = target->format == "json";
  SinkConsumer consumer(target->FileSystemOr(ctx.store->shared_fs()), *target, ctx.run_id);
  DatasetOutcome outcome = Outcome(d, DatasetStatus::kComputed, decision.reason);
  VersionManifest state;
  std::shared_ptr<arrow::Schema> schema = d.schema.declared() ? d.schema.arrow : nullptr;
  std::vector<std::pair<const Flow*, FlowResult>> done;
  for (const Flow* f : task.flows) {
    if (f->once && !task.full_refresh && previous && Contains(previous->once_flows, f->name)) {
      EmitSkipped(ctx, {task.dataset, {f}, false}, "once flow already ran");
      state.once_flows.push_back(f->name);
      continue;
    }
    FlowRunOptions options;
    options.expectations = *expectations;
    options.select_list = json ? engine::batch::JsonSelectList() : "*";
    options.conform = !json;
    options.target_schema = schema;
    options.declared = d.schema.declared();
    auto result = RunFlow(ctx, *f, d, options, consumer);
    if (!result.ok()) {
      if (consumer.writer()) consumer.writer()->Abort();
      return Fail(ctx, task, f, result.status());
    }
    if (!schema && !json) schema = result->schema;
    if (f->once) state.once_flows.push_back(f->name);
    AddCounts(&outcome, *expectations, *result);
    done.emplace_back(f, std::move(*result));
  }
  if (!consumer.writer()) {
    // Every flow was a once-flow that already ran: nothing new to publish.
    return Outcome(d, DatasetStatus::kUpToDate, "only once flows, which already ran");
  }
  auto path = consumer.writer()->Commit();
  if (!path.ok()) {
    consumer.writer()->Abort();
    return Fail(ctx, task, nullptr, path.status());
  }
  state.dataset = d.name;
  state.run_id = ctx.run_id;
  state.rows = consumer.writer()->rows();
  state.files.push_back({"", *path, state.rows});
  state.fingerprint = *fp;
  if (schema) state.schema = engine::batch::DescribeSchema(*schema);
  arrow::Status st = ctx.store->fs().CreateDir(ctx.store->layout().MetaDir() + "/sinks", true);
  if (st.ok()) st = engine::WriteFileAtomically(ctx.store->fs(), state_path, state.ToJson());
  if (!st.ok()) {
    ctx.notes.push_back("sink '" + d.name + "': wrote " + *path +
                        " but could not record it (the next run writes it again): " +
                        st.message());
  }
  for (const auto& [flow, result] : done) EmitFinished(ctx, *flow, d, result, "wrote " + *path);
  outcome.rows_written = state.rows;
  outcome.reason += "; wrote " + *path;
  return outcome;
}

}  // namespace thund::native
