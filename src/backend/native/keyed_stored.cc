// Stored datasets with keyed_write: the new version keeps every file of the
// current one and adds files holding the rows of new keys.
//
// Crash safety (docs/storage.md "Keyed writes"): new rows are written as
// atomically committed Parquet files into {dataset}/_keyed_staging/ while the
// flows run. Their keys count as existing (with the current version's), so a
// run killed half way leaves whole staging files that the rerun does not write
// again but adopts. The commit hard-links (or copies) the current version's
// files and every staging file into v-N, commits v-N, then deletes the staging
// files it adopted; staging files found already listed in the current version
// (a crash between the commit and that cleanup) are deleted on the next run.
#include <algorithm>
#include <map>
#include <optional>

#include "backend/native/dataset_runner.h"
#include "backend/native/keyed_write.h"
#include "backend/native/reconcile.h"
#include "backend/native/runner_util.h"
#include "engine/batch/bad_rows.h"
#include "engine/batch/parquet_part_writer.h"
#include "engine/batch/schema_conform.h"
#include "engine/fs/link_or_copy.h"
#include "engine/keyed/data_file_reader.h"
#include "engine/keyed/file_format.h"

namespace thund::native {

using engine::batch::PartFile;
using engine::batch::VersionManifest;

namespace {

std::string BaseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Data files (Parquet, not ignored names) directly in `dir`; missing = none.
arrow::Result<std::vector<std::string>> StagedFiles(arrow::fs::FileSystem& fs,
                                                    const std::string& dir) {
  arrow::fs::FileSelector sel;
  sel.base_dir = dir;
  sel.allow_not_found = true;
  ARROW_ASSIGN_OR_RAISE(auto infos, fs.GetFileInfo(sel));
  std::vector<std::string> out;
  for (const auto& info : infos) {
    if (!info.IsFile() || engine::keyed::IsIgnoredName(info.base_name())) continue;
    out.push_back(info.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Removes staging files the current version already holds (a run that died
// between its commit and its cleanup), or all of them on a full refresh.
arrow::Status TidyStaging(arrow::fs::FileSystem& fs, const std::string& staging,
                          const VersionManifest* current, bool all) {
  ARROW_ASSIGN_OR_RAISE(auto files, StagedFiles(fs, staging));
  for (const auto& path : files) {
    bool committed = false;
    if (current) {
      for (const auto& part : current->files) committed |= part.file == BaseName(path);
    }
    if (all || committed) ARROW_RETURN_NOT_OK(fs.DeleteFile(path));
  }
  return arrow::Status::OK();
}

}  // namespace

DatasetOutcome MaterializeKeyedStored(RunContext& ctx, const DatasetTask& task,
                                     const std::optional<VersionManifest>& previous,
                                     const engine::batch::Fingerprint& fp,
                                     const Decision& decision) {
  const Dataset& d = *task.dataset;
  auto& state = ctx.states[d.name];
  const auto& layout = ctx.store->layout();
  const std::string staging = layout.DatasetDir(d.name) + "/_keyed_staging";
  const VersionManifest* current = previous ? &*previous : nullptr;
  // Kept rows: the current version's, unless a full refresh rewrites the dataset.
  const VersionManifest* kept = task.full_refresh ? nullptr : current;
  if (auto st = TidyStaging(ctx.store->fs(), staging, current, task.full_refresh); !st.ok()) {
    return Fail(ctx, task, nullptr, st);
  }
  auto rows_per_file = KeyedRowsPerFile(d);
  if (!rows_per_file.ok()) return Fail(ctx, task, nullptr, rows_per_file.status());
  auto expectations = engine::batch::CompileExpectations(d);
  if (!expectations.ok()) return Fail(ctx, task, nullptr, expectations.status());
  std::vector<std::string> key_dirs;
  if (kept) key_dirs.push_back(layout.VersionDir(d.name, kept->version));
  key_dirs.push_back(staging);
  auto write = KeyedDatasetWrite::Make(ctx, d, key_dirs, staging,
                                       engine::keyed::FileFormat::kParquet, *rows_per_file);
  if (!write.ok()) return Fail(ctx, task, nullptr, write.status());
  KeyedDatasetWrite& w = **write;
  if (kept) w.RequireSchema(kept->schema);
  if (auto st = w.PrePass(task.flows); !st.ok()) return Fail(ctx, task, nullptr, st);

  DatasetOutcome outcome = Outcome(d, DatasetStatus::kComputed, decision.reason);
  KeyedFlowRuns runs;
  // A once-flow's rows are in the kept files already.
  if (auto st = RunKeyedFlows(ctx, task, w, *expectations,
                              kept ? kept->once_flows : std::vector<std::string>{},
                              "once flow already ran; its rows are kept", &outcome, &runs);
      !st.ok()) {
    return Fail(ctx, task, runs.failed, st);
  }
  VersionManifest manifest;
  manifest.once_flows = runs.once_flows;
  for (const auto& [f, result] : runs.done) {
    if (result.bad_rows_mode == engine::batch::BadRowsMode::kDeadLetter &&
        !result.bad_rows.empty()) {
      ctx.notes.push_back("dataset '" + d.name + "': " + std::to_string(result.bad_rows.size()) +
                          " malformed rows of flow '" + f->name +
                          "' were dropped, not kept in a dead-letter dataset (keyed tables do "
                          "not keep dead letters yet)");
    }
  }
  if (auto st = w.Finish(); !st.ok()) return Fail(ctx, task, nullptr, st);

  // Commit: kept files + every staged file (this run's and a killed run's).
  auto staged = StagedFiles(ctx.store->fs(), staging);
  if (!staged.ok()) return Fail(ctx, task, nullptr, staged.status());
  auto pending = ctx.store->Begin(d.name);
  if (!pending.ok()) return Fail(ctx, task, nullptr, pending.status());
  std::map<std::string, int64_t> written_rows;
  for (const auto& f : w.files()) written_rows[f.path] = f.rows;
  auto assemble = [&]() -> arrow::Status {
    if (kept) {
      for (const auto& part : kept->files) {
        ARROW_RETURN_NOT_OK(
            engine::LinkOrCopy(ctx.store->fs(), layout.VersionDir(d.name, kept->version) + "/" + part.file,
                       pending->dir + "/" + part.file));
        manifest.files.push_back(part);
        manifest.rows += part.rows;
      }
    }
    for (const auto& path : *staged) {
      int64_t rows = 0;
      if (auto it = written_rows.find(path); it != written_rows.end()) {
        rows = it->second;
      } else {
        ARROW_ASSIGN_OR_RAISE(auto info, ctx.store->fs().GetFileInfo(path));
        ARROW_ASSIGN_OR_RAISE(
            auto reader, engine::keyed::DataFileReader::Open(
                             ctx.store->shared_fs(),
                             {path, engine::keyed::FileFormat::kParquet, info.size()}));
        rows = reader->num_rows();
      }
      ARROW_RETURN_NOT_OK(engine::LinkOrCopy(ctx.store->fs(), path, pending->dir + "/" + BaseName(path)));
      manifest.files.push_back(PartFile{"", BaseName(path), rows});
      manifest.rows += rows;
    }
    std::shared_ptr<arrow::Schema> schema = d.schema.declared() ? d.schema.arrow : w.schema();
    if (manifest.files.empty() && schema) {
      // An empty version still holds its schema on disk.
      ARROW_ASSIGN_OR_RAISE(auto writer, engine::batch::ParquetPartWriter::Open(
                                             ctx.store->shared_fs(), pending->dir, "part-empty",
                                             schema));
      ARROW_ASSIGN_OR_RAISE(manifest.files, writer->Finish(""));
    }
    if (manifest.files.empty()) {
      return arrow::Status::Invalid("dataset '", d.name, "': no flow produced rows or a schema");
    }
    manifest.schema = schema ? engine::batch::DescribeSchema(*schema) : kept->schema;
    manifest.run_id = ctx.run_id;
    manifest.fingerprint = fp;
    return ctx.store->Commit(*pending, manifest, &ctx.notes);
  };
  if (arrow::Status st = assemble(); !st.ok()) {
    ctx.store->Abandon(*pending);
    return Fail(ctx, task, nullptr,
                st.WithMessage("dataset '", d.name, "': commit failed, the previous version ",
                               "stays current and the staged rows are kept for the rerun: ",
                               st.message()));
  }
  for (const auto& path : *staged) {
    if (auto st = ctx.store->fs().DeleteFile(path); !st.ok()) {
      ctx.notes.push_back("dataset '" + d.name + "': could not delete staged file " + path +
                          " (the next run deletes it): " + st.message());
    }
  }
  outcome.native->version = engine::batch::VersionName(pending->version);
  manifest.version = pending->version;
  state.stamp = manifest.Stamp();
  arrow::Status bound =
      ctx.catalog->BindStored(d.name, layout.VersionGlob(d.name, pending->version));
  if (!bound.ok()) return Fail(ctx, task, nullptr, bound);
  state.available = true;
  for (const auto& [flow, result] : runs.done) {
    EmitFinished(ctx, *flow, d, result, "committed " + outcome.native->version);
  }
  w.FillOutcome(&outcome);
  outcome.reason +=
      "; " + outcome.native->version + " holds " + std::to_string(manifest.rows) + " rows";
  return outcome;
}

}  // namespace thund::native
