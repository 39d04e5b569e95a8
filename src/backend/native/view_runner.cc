// Views and temporary views: bound in the run's DuckDB session, never stored.
#include "backend/native/consumers.h"
#include "backend/native/dataset_runner.h"
#include "backend/native/reconcile.h"
#include "backend/native/runner_util.h"

namespace thund::native {

DatasetOutcome DefineView(RunContext& ctx, const DatasetTask& task) {
  const Dataset& d = *task.dataset;
  if (task.flows.size() != 1) {
    return Fail(ctx, task, nullptr,
                arrow::Status::Invalid("view '", d.name, "' needs exactly one flow, it has ",
                                       task.flows.size()));
  }
  const Flow& f = *task.flows[0];
  auto fp = ComputeFingerprint(ctx, d, task.flows);
  if (!fp.ok()) return Fail(ctx, task, &f, fp.status());
  DatasetOutcome outcome =
      Outcome(d, DatasetStatus::kComputed, "view: not stored, defined for this run");
  if (d.expectations.empty() && !f.source) {
    RunEvent started;
    started.kind = RunEvent::Kind::kFlowStarted;
    started.flow = f.name;
    started.dataset = d.name;
    ctx.Emit(started);
    auto sql = TranslateFlowSql(f);
    if (!sql.ok()) return Fail(ctx, task, &f, sql.status());
    arrow::Status st = ctx.catalog->BindView(d.name, *sql);
    if (!st.ok()) return Fail(ctx, task, &f, FlowError(f, st));
    EmitFinished(ctx, f, d, FlowResult{}, "view defined");
  } else {
    auto expectations = engine::batch::CompileExpectations(d);
    if (!expectations.ok()) return Fail(ctx, task, &f, expectations.status());
    CollectConsumer consumer;
    FlowRunOptions options;
    options.expectations = *expectations;
    options.target_schema = d.schema.declared() ? d.schema.arrow : nullptr;
    options.declared = d.schema.declared();
    auto result = RunFlow(ctx, f, d, options, consumer);
    if (!result.ok()) return Fail(ctx, task, &f, result.status());
    arrow::Status st = ctx.catalog->BindArrow(d.name, consumer.schema(), consumer.batches());
    if (!st.ok()) return Fail(ctx, task, &f, st);
    AddCounts(&outcome, *expectations, *result);
    outcome.reason = "view: not stored, computed for this run (it has expectations)";
    EmitFinished(ctx, f, d, *result, "view computed");
  }
  auto& state = ctx.states[d.name];
  state.available = true;
  state.stamp = "view:" + fp->Digest();
  return outcome;
}

}  // namespace thund::native
