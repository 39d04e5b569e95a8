// Sinks with keyed_write: new-key rows are appended to the sink's directory as
// atomically committed files (part-<token>-<seq>.<ext>); the directory's data
// files are the checkpoint (docs/keyed-writes.md).
#include <charconv>
#include <optional>

#include "backend/native/dataset_runner.h"
#include "backend/native/keyed_write.h"
#include "backend/native/reconcile.h"
#include "backend/native/runner_util.h"
#include "engine/batch/schema_conform.h"
#include "engine/batch/sink_writer.h"
#include "engine/fs/atomic_write.h"
#include "engine/fs/filesystem_uri.h"

namespace thund::native {

using engine::batch::VersionManifest;

arrow::Result<int64_t> KeyedRowsPerFile(const Dataset& d) {
  auto it = d.storage.options.find("rows_per_file");
  if (it == d.storage.options.end()) return int64_t{1} << 20;
  const std::string& text = it->second;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && end == text.data() + text.size() && v > 0) return v;
  return arrow::Status::Invalid(Name(d.kind), " '", d.name, "': storage option rows_per_file '",
                                text, "' must be a positive integer (rows per output file)");
}

DatasetOutcome WriteKeyedSink(RunContext& ctx, const DatasetTask& task,
                              const std::optional<VersionManifest>& previous,
                              const engine::batch::Fingerprint& fp, const Decision& decision,
                              const engine::batch::SinkTarget& target,
                              const std::string& state_path) {
  const Dataset& d = *task.dataset;
  if (target.single_file || target.overwrite) {
    return Fail(ctx, task, nullptr,
                arrow::Status::Invalid("sink '", d.name, "': keyed_write needs an append sink ",
                                       "whose location is a directory (got '", target.path,
                                       target.overwrite ? "', mode overwrite)" : "')"));
  }
  if (target.fs && engine::IsObjectStoreUri(target.location)) {
    return Fail(ctx, task, nullptr,
                arrow::Status::NotImplemented(
                    "sink '", d.name, "': keyed_write reads its target's keys from local files; ",
                    "write the keyed sink to a local directory (", target.location,
                    " is on S3), or use write_mode 'merge', which S3 supports"));
  }
  if (target.format == "csv" && (!target.header || target.delimiter != ',')) {
    return Fail(ctx, task, nullptr,
                arrow::Status::Invalid("sink '", d.name, "': keyed_write writes CSV with a header ",
                                       "and ',' delimiters (its keys are read back from them); ",
                                       "remove the header/delimiter options"));
  }
  auto format = engine::keyed::ParseFileFormat(target.format);
  if (!format.ok()) return Fail(ctx, task, nullptr, format.status());
  auto rows_per_file = KeyedRowsPerFile(d);
  if (!rows_per_file.ok()) return Fail(ctx, task, nullptr, rows_per_file.status());
  auto expectations = engine::batch::CompileExpectations(d);
  if (!expectations.ok()) return Fail(ctx, task, nullptr, expectations.status());
  auto write = KeyedDatasetWrite::Make(ctx, d, {target.path}, target.path, *format,
                                       *rows_per_file);
  if (!write.ok()) return Fail(ctx, task, nullptr, write.status());
  KeyedDatasetWrite& w = **write;
  if (auto st = w.PrePass(task.flows); !st.ok()) return Fail(ctx, task, nullptr, st);

  DatasetOutcome outcome = Outcome(d, DatasetStatus::kComputed, decision.reason);
  KeyedFlowRuns runs;
  const std::vector<std::string> ran_before =
      !task.full_refresh && previous ? previous->once_flows : std::vector<std::string>{};
  if (auto st = RunKeyedFlows(ctx, task, w, *expectations, ran_before, "once flow already ran",
                              &outcome, &runs);
      !st.ok()) {
    return Fail(ctx, task, runs.failed, st);
  }
  VersionManifest state;
  state.once_flows = runs.once_flows;
  if (auto st = w.Finish(); !st.ok()) return Fail(ctx, task, nullptr, st);
  state.dataset = d.name;
  state.run_id = ctx.run_id;
  for (const auto& file : w.files()) {
    state.files.push_back({"", file.path, file.rows});
    state.rows += file.rows;
  }
  state.fingerprint = fp;
  if (w.schema()) state.schema = engine::batch::DescribeSchema(*w.schema());
  arrow::Status st = ctx.store->fs().CreateDir(ctx.store->layout().MetaDir() + "/sinks", true);
  if (st.ok()) st = engine::WriteFileAtomically(ctx.store->fs(), state_path, state.ToJson());
  if (!st.ok()) {
    ctx.notes.push_back("sink '" + d.name + "': wrote " + std::to_string(state.files.size()) +
                        " files but could not record it (the next run reads their keys and "
                        "skips their rows): " + st.message());
  }
  const std::string message = "wrote " + std::to_string(state.files.size()) + " files to " +
                              target.path;
  for (const auto& [flow, result] : runs.done) EmitFinished(ctx, *flow, d, result, message);
  w.FillOutcome(&outcome);
  outcome.reason += "; " + message;
  return outcome;
}

}  // namespace thund::native
