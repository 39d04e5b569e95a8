// thund run PATH: run a pipeline on the native engine (batch and streaming), or
// with --backend spark on a Spark Connect server (docs/spark.md).
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "backend/native/native_backend.h"
#include "cli/commands.h"
#include "cli/loaded.h"
#include "cli/progress_line.h"
#include "cli/run_progress.h"
#include "cli/spark_cli.h"
#include "thund/json_text.h"

namespace thund::cli {
namespace {

struct RunCliOptions {
  std::string path;
  std::string storage;
  std::string full_refresh;
  bool full_refresh_all = false;
  std::string refresh;
  std::string events = "human";  // human | json | none
  int threads = 0;
  int64_t max_triggers = 0;
  std::string streaming_mode;  // "" = not given (flows that set no mode recompute)
  bool no_hash_merge = false;
  bool no_hop_panes = false;
  bool no_direct_partial = false;
  bool no_direct_check = false;
  bool no_prune_columns = false;
  bool no_window_panes = false;
  bool no_join_index = false;
  bool no_join_prefilter = false;
  std::string backend = "native";  // native | spark
  SparkCliOptions spark;
  bool quiet = false;         // no progress line, no human event lines
  std::string summary_json;   // also write the summary as JSON to this file
};

// Ctrl-C (SIGINT) or SIGTERM asks the run to stop cleanly: a streaming run
// finishes and commits its current trigger, a batch run skips the datasets it
// has not started. A second signal ends the process at once.
std::atomic<bool> g_stop{false};

extern "C" void OnStopSignal(int sig) {
  if (g_stop.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

std::set<std::string> SplitNames(const std::string& csv) {
  std::set<std::string> out;
  std::stringstream ss(csv);
  std::string item;
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.insert(item);
  }
  return out;
}

// Human events: plain lines on stdout; the live progress line (on stderr, when
// a terminal) is erased before each so the two never mix.
class HumanEvents {
 public:
  explicit HumanEvents(ProgressLine* progress) : progress_(progress) {}
  void operator()(const RunEvent& e) {
    if (e.kind == RunEvent::Kind::kFlowProgress) return;  // the progress line shows it
    if (e.kind == RunEvent::Kind::kExpectation && e.count == 0) return;
    progress_->Clear();
    std::cout << "  " << e.ToString() << "\n" << std::flush;
  }

 private:
  ProgressLine* progress_;
};

// The summary as one JSON object (--summary-json; read by the Python package).
nlohmann::json SummaryJson(const RunSummary& s) {
  nlohmann::json datasets = nlohmann::json::array();
  for (const auto& d : s.datasets) {
    nlohmann::json j = {{"dataset", d.dataset},
                        {"status", Name(d.status)},
                        {"reason", d.reason},
                        {"rows_written", d.rows_written},
                        {"expectation_violations", d.expectation_violations}};
    if (d.native) {
      j["version"] = d.native->version;
      j["bad_rows"] = d.native->bad_rows;
    }
    datasets.push_back(std::move(j));
  }
  return {{"run_id", s.run_id},       {"pipeline", s.pipeline},
          {"status", Name(s.status)}, {"started_ms", s.started_ms},
          {"duration_ms", s.duration_ms}, {"mode", s.mode},
          {"datasets", datasets},     {"notes", s.notes},
          {"error", s.error}};
}

int RunRun(const RunCliOptions& o) {
  const bool on_spark = o.backend == "spark";
  Loaded l = LoadAndValidate(o.path, on_spark ? CheckBackend::kSpark : CheckBackend::kNative);
  if (!l.parsed || HasErrors(l.diagnostics)) {
    PrintDiagnosticsHuman(l, std::cerr);
    return kFailed;
  }
  for (const auto& name : SplitNames(o.refresh + "," + o.full_refresh)) {
    if (!l.pipeline.FindDataset(name)) {
      std::cerr << "error: --refresh/--full-refresh name '" << name
                << "', which is not a dataset of pipeline '" << l.pipeline.name
                << "' (see: thund plan " << o.path << ")\n";
      return kUsage;
    }
  }
  std::shared_ptr<ExecBackend> backend;
  if (on_spark) {
    backend = spark::SparkBackend::Make(BackendOptions(o.spark));
  } else {
    backend = native::NativeBackend::Make();
  }
  Loaded checked = l;
  checked.diagnostics = backend->Check(l.pipeline);
  if (HasErrors(checked.diagnostics)) {
    PrintDiagnosticsHuman(checked, std::cerr);
    return kFailed;
  }
  RunOptions options;
  options.storage_root = o.storage;
  options.full_refresh = SplitNames(o.full_refresh);
  options.full_refresh_all = o.full_refresh_all;
  options.refresh = SplitNames(o.refresh);
  options.native.threads = o.threads;
  options.native.hash_merge = !o.no_hash_merge;
  options.native.hop_panes = !o.no_hop_panes;
  options.native.direct_partial = !o.no_direct_partial;
  options.native.direct_check = !o.no_direct_check;
  options.native.prune_columns = !o.no_prune_columns;
  options.native.window_panes = !o.no_window_panes;
  options.native.join_index = !o.no_join_index;
  options.native.join_prefilter = !o.no_join_prefilter;
  options.max_triggers = o.max_triggers;
  if (!o.streaming_mode.empty()) options.streaming_mode = ParseStreamingMode(o.streaming_mode);
  options.stop = &g_stop;
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  ProgressLine line(std::cerr, ShouldShowProgress(o.quiet));
  RunProgress progress(&line, static_cast<int64_t>(l.pipeline.flows.size()), o.max_triggers);
  HumanEvents human(&line);
  const std::string events = o.quiet && o.events == "human" ? "none" : o.events;
  options.on_event = [&](const RunEvent& e) {
    if (events == "json") {
      line.Clear();
      std::cout << e.ToJson() << "\n" << std::flush;
    } else if (events == "human") {
      human(e);
    }
    if (line.enabled()) progress.OnEvent(e);
  };
  auto summary = backend->Run(l.pipeline, options);
  line.Clear();
  if (!summary.ok()) {
    std::cerr << "error: " << summary.status().message() << "\n";
    return kFailed;
  }
  if (!o.summary_json.empty()) {
    std::ofstream out(o.summary_json, std::ios::binary | std::ios::trunc);
    out << JsonText(SummaryJson(*summary)) << "\n";
    if (!out.flush()) {
      std::cerr << "error: cannot write the summary to " << o.summary_json << "\n";
      return kFailed;
    }
  }
  (o.events == "json" ? std::cerr : std::cout) << "\n" << summary->ToString();
  return summary->status == RunPhase::kCompleted ? kOk : kFailed;
}

}  // namespace

void RegisterRun(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<RunCliOptions>();
  auto* c = app.add_subcommand(
      "run",
      "Run a pipeline: batch datasets that are out of date, in dependency order; streaming "
      "flows in micro-batches (Ctrl-C stops after the current trigger).");
  c->add_option("PATH", o->path, "pipeline file, .sql file or SDP project")->required();
  c->add_option("--storage", o->storage,
                "storage root: a directory or s3://bucket/prefix (default: the pipeline's "
                "storage, else .thund/<pipeline>)");
  c->add_option("--full-refresh", o->full_refresh,
                "comma-separated datasets to recompute from scratch");
  c->add_flag("--full-refresh-all", o->full_refresh_all, "recompute every dataset from scratch");
  c->add_option("--refresh", o->refresh,
                "comma-separated datasets to update (others are left as they are)");
  c->add_option("--events", o->events, "how run events are printed")
      ->check(CLI::IsMember({"human", "json", "none"}));
  c->add_option("--threads", o->threads, "DuckDB worker threads (0 = one per core)");
  c->add_flag("--no-hash-merge", o->no_hash_merge,
              "incremental: merge aggregate partials with a DuckDB query, not in C++ (the "
              "plain twin of the fast path)");
  c->add_flag("--no-hop-panes", o->no_hop_panes,
              "incremental: put each row in each of its hopping windows before aggregating, "
              "instead of once per pane (the plain twin of the fast path)");
  c->add_flag("--no-direct-partial", o->no_direct_partial,
              "incremental: compute the new rows' partial aggregates with a DuckDB query, not "
              "in C++, and window panes' partials and closing windows with queries too (the "
              "plain twin of the fast path)");
  c->add_flag("--no-direct-check", o->no_direct_check,
              "streaming: pass rows of datasets without expectations through a DuckDB query, "
              "not as Arrow (the plain twin of the fast path)");
  c->add_flag("--no-prune-columns", o->no_prune_columns,
              "streaming: a stream view's source reads every column, not only those its "
              "readers' queries name (the plain twin of the fast path)");
  c->add_flag("--no-window-panes", o->no_window_panes,
              "incremental: a window-local query keeps the raw rows of open windows, not "
              "per-pane partials of its windowed aggregations (the plain twin of the fast path)");
  c->add_flag("--no-join-index", o->no_join_index,
              "incremental: a join of two streams binds every kept row to each trigger's join, "
              "not only the rows of the new rows' keys (the plain twin of the fast path)");
  c->add_flag("--no-join-prefilter", o->no_join_prefilter,
              "incremental: a join of two streams keeps every new row of a side, not only "
              "those passing the conditions on that side alone (the plain twin of the fast "
              "path)");
  c->add_option("--max-triggers", o->max_triggers,
                "streaming: stop after this many triggers (0 = no cap)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--streaming-mode", o->streaming_mode,
                "streaming: the mode of flows that set none (default recompute; a flow's own "
                "mode wins)")
      ->check(CLI::IsMember(
          {Name(StreamingMode::kRecompute), Name(StreamingMode::kIncremental)}));
  c->add_option("--backend", o->backend,
                "the engine: native (this machine) or spark (a Spark Connect server; see "
                "--remote)")
      ->check(CLI::IsMember({"native", "spark"}));
  c->add_flag("-q,--quiet", o->quiet,
              "no live progress line, and no event lines unless --events json (the summary "
              "is still printed)");
  c->add_option("--summary-json", o->summary_json,
                "also write the run summary as one JSON object to this file");
  AddSparkOptions(c, &o->spark, /*with_storage=*/true);
  c->callback([o, exit_code] { *exit_code = RunRun(*o); });
}

}  // namespace thund::cli
