#include "backend/native/batch_run.h"

#include <algorithm>
#include <future>
#include <map>
#include <set>

#include <arrow/filesystem/localfs.h>
#include <nlohmann/json.hpp>

#include "backend/native/dataset_runner.h"
#include "backend/native/native_backend.h"
#include "backend/native/run_context.h"
#include "backend/native/runner_util.h"
#include "backend/native/stream_run.h"
#include "engine/batch/run_history.h"
#include "engine/duckdb/object_storage.h"
#include "engine/fs/filesystem_uri.h"
#include "engine/checkpoint/storage_lock.h"
#include "thund/validate.h"
#include "thund/json_text.h"

namespace thund::native {
namespace {

using engine::batch::DatasetStore;
using engine::batch::StorageLayout;

arrow::Status CheckNames(const Pipeline& p, const std::set<std::string>& names,
                         const char* flag) {
  for (const auto& n : names) {
    if (!p.FindDataset(n)) {
      std::string known;
      for (const auto& d : p.datasets) known += (known.empty() ? "" : ", ") + d.name;
      return arrow::Status::Invalid(flag, " names '", n, "', which is not a dataset of pipeline '",
                                    p.name, "' (datasets: ", known, ")");
    }
  }
  return arrow::Status::OK();
}

std::string ErrorsText(const Diagnostics& diags) {
  std::string out;
  for (const auto& d : diags) {
    if (d.severity == Severity::kError) out += "\n  " + d.ToString();
  }
  return out;
}

// Datasets in an order where each comes after every dataset its flows read.
std::vector<const Dataset*> DatasetOrder(const Pipeline& p, const std::vector<const Flow*>& flows) {
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < flows.size(); ++i) position[flows[i]->target] = i;
  std::vector<const Dataset*> out;
  for (const auto& d : p.datasets) out.push_back(&d);
  std::stable_sort(out.begin(), out.end(), [&](const Dataset* a, const Dataset* b) {
    auto pa = position.count(a->name) ? position[a->name] : 0;
    auto pb = position.count(b->name) ? position[b->name] : 0;
    return pa < pb;
  });
  return out;
}

std::vector<std::string> InputsOf(const Pipeline& p, const std::vector<const Flow*>& flows) {
  std::vector<std::string> out;
  for (const Flow* f : flows) {
    auto inputs = FlowInputs(p, *f);
    if (!inputs.ok()) continue;
    for (const auto& in : *inputs) {
      if (p.FindDataset(in) && std::find(out.begin(), out.end(), in) == out.end()) {
        out.push_back(in);
      }
    }
  }
  return out;
}

// Datasets at least one streaming flow writes.
std::set<std::string> StreamingDatasets(const Pipeline& p) {
  std::set<std::string> out;
  for (const auto& f : p.flows) {
    if (!IsStreamingFlow(p, f)) continue;
    out.insert(f.target);
    // Its late-rows table is written in the same trigger loop.
    if (f.streaming && !f.streaming->late_rows.empty()) out.insert(f.streaming->late_rows);
  }
  return out;
}

// Datasets that read (transitively) one of `roots`, excluding the roots.
std::set<std::string> DownstreamOf(const Pipeline& p, const std::set<std::string>& roots) {
  std::set<std::string> reached(roots.begin(), roots.end());
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& f : p.flows) {
      if (reached.count(f.target)) continue;
      auto inputs = FlowInputs(p, f);
      if (!inputs.ok()) continue;
      for (const auto& in : *inputs) {
        if (reached.count(in)) {
          reached.insert(f.target);
          grew = true;
          break;
        }
      }
    }
  }
  std::set<std::string> out;
  for (const auto& n : reached) {
    if (!roots.count(n)) out.insert(n);
  }
  return out;
}

nlohmann::json OutcomesJson(const RunSummary& s) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : s.datasets) {
    const NativeDatasetOutcome n = d.native.value_or(NativeDatasetOutcome{});
    list.push_back({{"dataset", d.dataset},
                    {"status", Name(d.status)},
                    {"reason", d.reason},
                    {"rows_written", d.rows_written},
                    {"rows_in", n.rows_in},
                    {"bad_rows", n.bad_rows},
                    {"version", n.version},
                    {"expectations", d.expectation_violations}});
    if (n.keyed) {
      list.back()["keyed"] = {{"rows_read", n.keyed->rows_read},
                              {"skipped_existing", n.keyed->rows_skipped_existing},
                              {"skipped_duplicate", n.keyed->rows_skipped_duplicate},
                              {"null_key", n.keyed->rows_null_key},
                              {"placement", n.keyed->placement}};
    }
  }
  return list;
}

}  // namespace

arrow::Result<RunSummary> RunBatch(const ExecBackend& backend, const Pipeline& p,
                                   const RunOptions& options) {
  RunSummary summary;
  summary.pipeline = p.name;
  summary.mode = "batch";
  summary.started_ms = NowMs();
  summary.run_id = engine::batch::NewRunId(summary.started_ms);

  // Opening DuckDB (~10 ms: it loads its built-in extensions) does not depend on
  // validation, which starts the SQL parser's own DuckDB: open both at once.
  engine::DuckDbSessionOptions session_options;
  session_options.reuse_arrow_views = options.native.reuse_arrow_views;
  session_options.threads = options.native.threads;
  auto opening = std::async(std::launch::async, [session_options] {
    return engine::DuckDbSession::Open(session_options);
  });
  Diagnostics problems = Validate(p);
  if (HasErrors(problems)) {
    return arrow::Status::Invalid("pipeline '", p.name, "' is not valid:", ErrorsText(problems));
  }
  Diagnostics unsupported = backend.Check(p);
  if (HasErrors(unsupported)) {
    return arrow::Status::Invalid("the native engine cannot run pipeline '", p.name,
                                  "':", ErrorsText(unsupported));
  }
  for (const auto& d : unsupported) summary.notes.push_back(d.message);
  ARROW_RETURN_NOT_OK(CheckNames(p, options.refresh, "--refresh"));
  ARROW_RETURN_NOT_OK(CheckNames(p, options.full_refresh, "--full-refresh"));
  for (const auto& d : p.datasets) {
    if (IsStored(d.kind)) ARROW_RETURN_NOT_OK(engine::batch::CheckStorableName(d.name));
  }

  ARROW_ASSIGN_OR_RAISE(auto layout,
                        StorageLayout::Make(ResolveStorageRoot(p, options.storage_root)));
  std::shared_ptr<arrow::fs::FileSystem> fs = options.native.filesystem;
  if (!fs && !layout.local()) {
    // s3://bucket/prefix: Arrow's S3 filesystem (engine/fs/filesystem_uri.h).
    ARROW_ASSIGN_OR_RAISE(auto loc, engine::ResolveLocation(layout.location()));
    fs = loc.fs;
  }
  if (!fs) fs = std::make_shared<arrow::fs::LocalFileSystem>();
  arrow::Status made = fs->CreateDir(layout.root(), /*recursive=*/true);
  if (!made.ok()) {
    return arrow::Status::IOError("cannot create the storage root ", layout.location(), ": ",
                                  made.message());
  }
  // One run per storage root at a time (a dead holder's lock is taken over).
  std::string took_over;
  ARROW_ASSIGN_OR_RAISE(auto lock, engine::checkpoint::StorageLock::Acquire(
                                       fs, layout.MetaDir() + "/lock", summary.run_id,
                                       &took_over));
  if (!took_over.empty()) {
    summary.notes.push_back("took over the storage root's lock from " + took_over +
                            ", which is no longer running");
  }
  DatasetStore store(fs, layout);
  ARROW_ASSIGN_OR_RAISE(auto session, opening.get());
  ARROW_ASSIGN_OR_RAISE(bool remote, UsesObjectStorage(p, layout));
  if (remote) {
    // DuckDB reads the S3 objects itself (stored versions, s3:// inputs).
    ARROW_RETURN_NOT_OK(engine::EnableObjectStorage(*session, layout.location()));
  }
  ARROW_ASSIGN_OR_RAISE(auto catalog, engine::batch::Catalog::Make(*session, p));
  ARROW_ASSIGN_OR_RAISE(auto flows, TopoOrder(p));

  RunContext ctx;
  ctx.pipeline = &p;
  ctx.options = &options;
  ctx.run_id = summary.run_id;
  ctx.store = &store;
  ctx.session = session.get();
  ctx.catalog = catalog.get();
  ctx.notes = summary.notes;

  RunEvent phase;
  phase.kind = RunEvent::Kind::kPhase;
  phase.phase = RunPhase::kStarting;
  phase.message = "run " + summary.run_id + ", storage " + layout.location();
  ctx.Emit(phase);

  // Committed datasets are readable from the start (for unselected inputs).
  for (const auto& d : p.datasets) {
    if (!IsStored(d.kind)) continue;
    auto current = store.Current(d.name);
    if (!current.ok()) return current.status();
    auto& state = ctx.states[d.name];
    if (*current) {
      // A kill between an earlier commit's `_current` rename and its `current`
      // symlink left the link behind; an up-to-date dataset gets no new commit.
      store.RepairLink(d.name, (**current).version);
      ARROW_RETURN_NOT_OK(catalog->BindStored(d.name, layout.VersionGlob(d.name, (**current).version)));
      state.available = true;
      state.stamp = (**current).Stamp();
    } else {
      state.blocked_reason = "upstream '" + d.name + "' was never materialized";
    }
  }

  // Selection.
  const bool select_all =
      options.full_refresh_all || (options.refresh.empty() && options.full_refresh.empty());
  std::set<std::string> selected(options.refresh.begin(), options.refresh.end());
  selected.insert(options.full_refresh.begin(), options.full_refresh.end());
  std::map<std::string, std::vector<const Flow*>> flows_into;
  for (const Flow* f : flows) flows_into[f->target].push_back(f);
  if (!select_all) {
    std::vector<std::string> work(selected.begin(), selected.end());
    while (!work.empty()) {
      std::string name = work.back();
      work.pop_back();
      for (const auto& in : InputsOf(p, flows_into[name])) {
        const Dataset* d = p.FindDataset(in);
        bool needed = !IsStored(d->kind) || !ctx.states[in].available;
        if (needed && selected.insert(in).second) work.push_back(in);
      }
    }
  }

  phase.phase = RunPhase::kRunning;
  phase.message.clear();
  ctx.Emit(phase);
  auto process = [&](const Dataset* d) {
    DatasetTask task;
    task.dataset = d;
    // Flows in pipeline order (the order rows of a multi-flow table are stored in).
    for (const auto& f : p.flows) {
      if (f.target == d->name) task.flows.push_back(&f);
    }
    task.full_refresh = options.full_refresh_all || options.full_refresh.count(d->name) > 0;
    auto skip = [&](const std::string& why) {
      EmitSkipped(ctx, task, why);
      summary.datasets.push_back(Outcome(*d, DatasetStatus::kSkipped, why));
    };
    if (task.flows.empty()) {
      skip("no flow writes it");
      return;
    }
    if (ctx.StopRequested()) {
      ctx.states[d->name].available = false;
      skip("run canceled");
      return;
    }
    const bool is_view = d->kind == DatasetKind::kView || d->kind == DatasetKind::kTemporaryView;
    if (!select_all && !selected.count(d->name) && !is_view) {
      skip("not selected (--refresh / --full-refresh name other datasets)");
      return;
    }
    std::string blocked;
    for (const auto& in : InputsOf(p, task.flows)) {
      const auto& st = ctx.states[in];
      if (!st.available) {
        blocked = st.blocked_reason.empty() ? "upstream '" + in + "' is not available"
                                            : st.blocked_reason;
        break;
      }
    }
    if (!blocked.empty()) {
      // Its dependents are skipped too (naming the root cause), even when an older
      // version of it is committed: they would read data its failed upstream should
      // have changed.
      auto& state = ctx.states[d->name];
      state.available = false;
      state.blocked_reason = blocked;
      skip(blocked);
      return;
    }
    DatasetOutcome outcome = is_view ? DefineView(ctx, task)
                             : d->kind == DatasetKind::kSink ? WriteSink(ctx, task)
                                                             : MaterializeStored(ctx, task);
    summary.datasets.push_back(std::move(outcome));
  };
  // Datasets with a streaming flow run together in one trigger loop
  // (stream_run.h), after the batch datasets they may read; batch datasets
  // that read them run after the loop, over what it committed.
  const std::set<std::string> streaming = StreamingDatasets(p);
  const std::set<std::string> after = DownstreamOf(p, streaming);
  const auto order = DatasetOrder(p, flows);
  for (const Dataset* d : order) {
    if (!streaming.count(d->name) && !after.count(d->name)) process(d);
  }
  std::vector<const Dataset*> streams;
  auto is_view = [](const Dataset* d) {
    return d->kind == DatasetKind::kView || d->kind == DatasetKind::kTemporaryView;
  };
  for (const Dataset* d : order) {
    // Views over streams are live inside the loop.
    if (!streaming.count(d->name) && !(after.count(d->name) && is_view(d))) continue;
    if (!select_all && !selected.count(d->name)) {
      summary.datasets.push_back(
          Outcome(*d, DatasetStatus::kSkipped,
                  "not selected (--refresh / --full-refresh name other datasets)"));
      continue;
    }
    streams.push_back(d);
  }
  if (!streams.empty()) {
    summary.mode = "streaming (recompute)";
    RunStreams(ctx, streams, &summary);
  }
  for (const Dataset* d : order) {
    if (after.count(d->name) && !streaming.count(d->name) && !is_view(d)) process(d);
  }

  summary.notes = ctx.notes;
  // A stop request ends a streaming run normally (after a committed trigger);
  // a batch run it interrupts is canceled.
  const bool stopped = ctx.StopRequested();
  summary.status = stopped && streams.empty() ? RunPhase::kCanceled : RunPhase::kCompleted;
  if (stopped && !streams.empty()) summary.notes.push_back("stopped on request");
  for (const auto& o : summary.datasets) {
    if (o.status == DatasetStatus::kFailed) {
      summary.status = RunPhase::kFailed;
      if (summary.error.empty()) summary.error = "dataset '" + o.dataset + "': " + o.reason;
    }
  }
  summary.duration_ms = NowMs() - summary.started_ms;

  engine::batch::RunRecord record;
  record.run_id = summary.run_id;
  record.pipeline = p.name;
  record.status = Name(summary.status);
  record.started_ms = summary.started_ms;
  record.duration_ms = summary.duration_ms;
  record.mode = summary.mode;
  for (const auto& o : summary.datasets) {
    if (o.status == DatasetStatus::kComputed) {
      ++record.computed;
      record.rows_written += o.rows_written;
    }
    if (o.status == DatasetStatus::kUpToDate) ++record.up_to_date;
    if (o.status == DatasetStatus::kFailed) ++record.failed;
    if (o.status == DatasetStatus::kSkipped) ++record.skipped;
  }
  record.error = summary.error;
  record.summary_json = JsonText(OutcomesJson(summary));
  arrow::Status recorded = engine::batch::AppendRunRecord(*fs, layout, record);
  if (!recorded.ok()) {
    summary.notes.push_back("the run could not be added to the run history: " +
                            recorded.message());
  }
  phase.phase = summary.status;
  phase.message = summary.error;
  ctx.Emit(phase);
  return summary;
}

}  // namespace thund::native
