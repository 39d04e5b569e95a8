#include "backend/native/dataset_runner.h"

#include <algorithm>
#include <cstdio>

#include "backend/native/consumers.h"
#include "backend/native/copy_flow.h"
#include "backend/native/flow_runner.h"
#include "backend/native/keyed_write.h"
#include "backend/native/reconcile.h"
#include "backend/native/runner_util.h"
#include "engine/batch/bad_rows.h"
#include "engine/batch/schema_conform.h"
#include "engine/fs/atomic_write.h"

namespace thund::native {

using engine::batch::BadRowsMode;
using engine::batch::VersionManifest;

namespace {

// Commits the malformed rows of `d`'s flows as a version of d__dead_letter.
arrow::Status CommitDeadLetters(RunContext& ctx, const Dataset& d,
                                const std::vector<std::pair<std::string, engine::batch::BadRow>>& rows,
                                const engine::batch::Fingerprint& fp) {
  const std::string name = engine::batch::DeadLetterName(d.name);
  std::vector<std::shared_ptr<arrow::Table>> tables;
  for (const auto& [flow, row] : rows) {
    ARROW_ASSIGN_OR_RAISE(auto t, engine::batch::DeadLetterTable(flow, {row}));
    tables.push_back(t);
  }
  ARROW_ASSIGN_OR_RAISE(auto table,
                        tables.empty()
                            ? engine::batch::DeadLetterTable("", {})
                            : arrow::ConcatenateTables(tables));
  ARROW_ASSIGN_OR_RAISE(auto pending, ctx.store->Begin(name));
  auto write = [&]() -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(auto writer, engine::batch::ParquetPartWriter::Open(
                                           ctx.store->shared_fs(), pending.dir, "part-00000",
                                           engine::batch::DeadLetterSchema()));
    ARROW_ASSIGN_OR_RAISE(auto combined, table->CombineChunksToBatch());
    ARROW_RETURN_NOT_OK(writer->Write(combined));
    VersionManifest m;
    ARROW_ASSIGN_OR_RAISE(m.files, writer->Finish(""));
    m.rows = table->num_rows();
    m.run_id = ctx.run_id;
    m.fingerprint = fp;
    m.schema = engine::batch::DescribeSchema(*engine::batch::DeadLetterSchema());
    return ctx.store->Commit(pending, std::move(m), &ctx.notes);
  };
  arrow::Status st = write();
  if (!st.ok()) ctx.store->Abandon(pending);
  return st;
}

}  // namespace

void EmitSkipped(RunContext& ctx, const DatasetTask& task, const std::string& why) {
  for (const Flow* f : task.flows) {
    RunEvent e;
    e.kind = RunEvent::Kind::kFlowSkipped;
    e.flow = f->name;
    e.dataset = task.dataset->name;
    e.message = why;
    ctx.Emit(e);
  }
}

DatasetOutcome MaterializeStored(RunContext& ctx, const DatasetTask& task) {
  const Dataset& d = *task.dataset;
  auto previous = ctx.store->Current(d.name);
  if (!previous.ok()) return Fail(ctx, task, nullptr, previous.status());
  auto fp = ComputeFingerprint(ctx, d, task.flows);
  if (!fp.ok()) return Fail(ctx, task, nullptr, fp.status());
  Decision decision = Decide(*previous, *fp, task.full_refresh);
  auto& state = ctx.states[d.name];
  if (!decision.compute) {
    EmitSkipped(ctx, task, decision.reason);
    state.available = true;
    state.stamp = (*previous)->Stamp();
    DatasetOutcome o = Outcome(d, DatasetStatus::kUpToDate, decision.reason);
    o.native->version = engine::batch::VersionName((*previous)->version);
    return o;
  }
  if (d.keyed_write.enabled()) return MaterializeKeyedStored(ctx, task, *previous, *fp, decision);
  if (d.materialization == Materialization::kIncremental) {
    RunEvent e;
    e.kind = RunEvent::Kind::kFallback;
    e.flow = task.flows.empty() ? d.name : task.flows[0]->name;
    e.dataset = d.name;
    e.message = "incremental materialization is run as a full recompute by the native batch engine";
    ctx.Emit(e);
    ctx.notes.push_back("dataset '" + d.name + "': " + e.message);
  }
  auto expectations = engine::batch::CompileExpectations(d);
  if (!expectations.ok()) return Fail(ctx, task, nullptr, expectations.status());
  auto pending = ctx.store->Begin(d.name);
  if (!pending.ok()) return Fail(ctx, task, nullptr, pending.status());

  DatasetOutcome outcome = Outcome(d, DatasetStatus::kComputed, decision.reason);
  VersionManifest manifest;
  std::shared_ptr<arrow::Schema> target = d.schema.declared() ? d.schema.arrow : nullptr;
  std::vector<std::pair<std::string, engine::batch::BadRow>> dead_letters;
  bool dead_letter_mode = false;
  std::vector<std::pair<const Flow*, FlowResult>> done;
  for (size_t i = 0; i < task.flows.size(); ++i) {
    const Flow& f = *task.flows[i];
    if (f.once && !task.full_refresh && *previous && Contains((*previous)->once_flows, f.name)) {
      int64_t kept = 0;
      arrow::Status st;
      for (const auto& part : (*previous)->files) {
        if (part.flow != f.name || !st.ok()) continue;
        st = ctx.store->fs().CopyFile(
            ctx.store->layout().VersionDir(d.name, (*previous)->version) + "/" + part.file,
            pending->dir + "/" + part.file);
        manifest.files.push_back(part);
        kept += part.rows;
      }
      if (!st.ok()) {
        ctx.store->Abandon(*pending);
        return Fail(ctx, task, &f, st);
      }
      manifest.once_flows.push_back(f.name);
      manifest.rows += kept;
      outcome.rows_written += kept;
      RunEvent e;
      e.kind = RunEvent::Kind::kFlowSkipped;
      e.flow = f.name;
      e.dataset = d.name;
      e.message = "once flow already ran; kept its " + std::to_string(kept) + " rows";
      ctx.Emit(e);
      continue;
    }
    if (CanCopyFlow(ctx, f, d, task.flows.size())) {
      const std::string file = "part-" + Pad(i) + "-00000.parquet";
      auto copied = CopyFlow(ctx, f, d, pending->dir, file);
      if (!copied.ok()) {
        ctx.store->Abandon(*pending);
        return Fail(ctx, task, &f, copied.status());
      }
      target = copied->schema;
      manifest.files.push_back({f.name, file, copied->rows_out});
      manifest.rows += copied->rows_out;
      if (f.once) manifest.once_flows.push_back(f.name);
      AddCounts(&outcome, *expectations, *copied);
      done.emplace_back(&f, std::move(*copied));
      continue;
    }
    PartConsumer consumer(ctx.store->shared_fs(), pending->dir, "part-" + Pad(i));
    FlowRunOptions options;
    options.expectations = *expectations;
    options.target_schema = target;
    options.declared = d.schema.declared();
    auto result = RunFlow(ctx, f, d, options, consumer);
    arrow::Result<std::vector<engine::batch::PartFile>> parts =
        result.ok() ? consumer.Finish(f.name) : result.status();
    if (!parts.ok()) {
      ctx.store->Abandon(*pending);
      return Fail(ctx, task, &f, parts.status());
    }
    if (!target) target = result->schema;
    manifest.files.insert(manifest.files.end(), parts->begin(), parts->end());
    manifest.rows += result->rows_out;
    if (f.once) manifest.once_flows.push_back(f.name);
    if (result->bad_rows_mode == BadRowsMode::kDeadLetter) {
      dead_letter_mode = true;
      for (const auto& r : result->bad_rows) dead_letters.emplace_back(f.name, r);
    }
    AddCounts(&outcome, *expectations, *result);
    done.emplace_back(&f, std::move(*result));
  }
  manifest.run_id = ctx.run_id;
  manifest.fingerprint = *fp;
  if (target) manifest.schema = engine::batch::DescribeSchema(*target);
  arrow::Status committed = ctx.store->Commit(*pending, manifest, &ctx.notes);
  if (!committed.ok()) {
    ctx.store->Abandon(*pending);
    return Fail(ctx, task, nullptr, committed.WithMessage("dataset '", d.name,
                                                          "': commit failed, the previous "
                                                          "version stays current: ",
                                                          committed.message()));
  }
  outcome.rows_written = manifest.rows;
  outcome.native->version = engine::batch::VersionName(pending->version);
  manifest.version = pending->version;
  state.stamp = manifest.Stamp();
  arrow::Status bound = ctx.catalog->BindStored(
      d.name, ctx.store->layout().VersionGlob(d.name, pending->version));
  if (!bound.ok()) return Fail(ctx, task, nullptr, bound);
  state.available = true;
  for (const auto& [flow, result] : done) {
    EmitFinished(ctx, *flow, d, result, "committed " + outcome.native->version);
  }
  if (dead_letter_mode) {
    arrow::Status st = CommitDeadLetters(ctx, d, dead_letters, *fp);
    if (!st.ok()) {
      ctx.notes.push_back("dataset '" + d.name + "': could not store its dead letters: " +
                          st.message());
    } else {
      outcome.reason += "; " + std::to_string(dead_letters.size()) +
                        " malformed rows kept in " + engine::batch::DeadLetterName(d.name);
    }
  }
  return outcome;
}

}  // namespace thund::native
