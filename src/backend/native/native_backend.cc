#include "backend/native/native_backend.h"

#include "backend/native/batch_run.h"
#include "engine/stream/output_mode.h"
#include "thund/sql_dialect.h"
#include "thund/validate.h"

namespace thund::native {

std::shared_ptr<NativeBackend> NativeBackend::Make() { return std::make_shared<NativeBackend>(); }

Capabilities NativeBackend::capabilities() const {
  Capabilities c;
  c.supported = {"batch-sql",          "source:files",         "once",
                 "expectations:warn",  "expectations:drop",    "expectations:fail",
                 "materialization:incremental",                "sink:parquet",
                 "sink:csv",           "sink:json",          "sink:noop",
                 // Batch flows into sinks / stored tables (keyed_write.h).
                 "keyed-write",
                 // Streaming (stream_run.h): Recompute mode, and the incremental
                 // mode's operators and their explicit state (incremental_flow.h);
                 // other shapes fall back to Recompute per flow, with a run event.
                 "streaming", "streaming-sql", "source:file_drop", "source:generator",
                 "source:memory", "trigger:processing_time", "output:update",
                 "output:complete", "watermark", "window:tumbling", "window:hopping",
                 "window:session", "cdc:scd1", "cdc:scd2", "mode:incremental",
                 "incremental:stateless", "incremental:partial-aggregate",
                 "incremental:rows-aggregate", "incremental:session-window",
                 "incremental:late-rows", "incremental:idle-timeout",
                 "incremental:state-checkpoint"};
  return c;
}

namespace {

Diagnostic Unsupported(const Flow& f, std::string message, std::string hint) {
  Diagnostic d;
  d.severity = Severity::kError;
  d.code = "backend-unsupported";
  d.flow = f.name;
  d.dataset = f.target;
  d.location = f.location;
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

}  // namespace

Diagnostics NativeBackend::Check(const Pipeline& p) const {
  Diagnostics out;
  const Capabilities caps = capabilities();
  for (const auto& f : p.flows) {
    for (const auto& cap : RequiredCapabilities(p, f)) {
      if (caps.Supports(cap)) continue;
      out.push_back(Unsupported(
          f, "flow '" + f.name + "' needs '" + cap + "', which the native engine does not run yet",
          cap.rfind("sink:", 0) == 0 ? "use a parquet, csv, json or noop sink"
                                     : "remove the flow from the pipeline, or run it on a "
                                       "backend that supports it (see docs/status.md)"));
    }
  }
  for (const auto& f : p.flows) {
    if (!IsStreamingFlow(p, f)) continue;
    const Dataset* target = p.FindDataset(f.target);
    auto refuse = [&](std::string message, std::string hint) {
      out.push_back(Unsupported(f, std::move(message), std::move(hint)));
    };
    if (f.streaming && f.streaming->output_mode == OutputMode::kUpdate && !f.sql.empty()) {
      // Update needs the grouping keys of the output, known before the run.
      auto sql = SparkToDuckDb(f.sql);
      auto keys = sql.ok() ? engine::stream::UpdateKeyColumns(*sql) : sql.status();
      if (!keys.ok()) {
        refuse("flow '" + f.name + "' uses output mode update, but its key columns cannot be "
                   "told: " + keys.status().message(),
               "give grouped expressions an alias, or use output mode complete");
      }
    }
    if (f.cdc && f.source) {
      refuse("flow '" + f.name + "' applies AUTO CDC straight from a source; the native engine "
             "applies changes from a streaming table",
             "read the source into a streaming table, then AUTO CDC ... FROM STREAM(that table)");
    }
    if (target && target->keyed_write.enabled()) {
      refuse("flow '" + f.name + "' streams into '" + f.target +
                 "', which has keyed_write; the native engine applies keyed writes to batch "
                 "flows only",
             "make the flow batch (e.g. a files source instead of file_drop), or remove "
             "keyed_write");
    }
    const OutputMode mode = f.streaming ? f.streaming->output_mode : OutputMode::kAppend;
    const bool merge_sink = target && target->kind == DatasetKind::kSink &&
                            target->storage.mode == WriteMode::kMerge;
    // A merge sink takes every output mode: it is upserted by key at each
    // checkpoint epoch (stream_state.cc).
    if (!merge_sink && target && target->kind == DatasetKind::kSink &&
               (f.cdc || mode == OutputMode::kUpdate)) {
      refuse("flow '" + f.name + "' streams " + (f.cdc ? "AUTO CDC changes" : "an update stream") +
                 " into file sink '" + f.target + "'; file sinks take append or complete output "
                 "(as in Spark)",
             "write to a streaming table, or use output mode append or complete");
    }
  }
  for (const auto& d : p.datasets) {
    if (!d.storage.partition_by.empty()) {
      Diagnostic w;
      w.severity = Severity::kWarning;
      w.code = "backend-ignored";
      w.dataset = d.name;
      w.location = d.location;
      w.message = "dataset '" + d.name +
                  "': partition_by is ignored by the native batch engine (files are not "
                  "partitioned)";
      out.push_back(std::move(w));
    }
  }
  return out;
}

arrow::Result<RunSummary> NativeBackend::Run(const Pipeline& p, const RunOptions& options) {
  return RunBatch(*this, p, options);
}

std::string ResolveStorageRoot(const Pipeline& p, const std::string& override_root) {
  if (!override_root.empty()) return override_root;
  if (!p.storage.empty()) return p.storage;
  return ".thund/" + (p.name.empty() ? std::string("pipeline") : p.name);
}

}  // namespace thund::native
