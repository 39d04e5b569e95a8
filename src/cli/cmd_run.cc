// thund run PATH: run a pipeline on the native engine (batch and streaming), or
// with --backend spark on a Spark Connect server (docs/spark.md).
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "backend/native/native_backend.h"
#include "cli/commands.h"
#include "cli/loaded.h"
#include "cli/spark_cli.h"

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
  std::string backend = "native";  // native | spark
  SparkCliOptions spark;
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

// Human events: plain lines; on a terminal, progress updates one live line.
class HumanEvents {
 public:
  explicit HumanEvents(bool tty) : tty_(tty) {}
  void operator()(const RunEvent& e) {
    if (e.kind == RunEvent::Kind::kFlowProgress) {
      if (!tty_) return;
      std::cout << "\r\033[K  " << e.ToString() << std::flush;
      live_ = true;
      return;
    }
    if (e.kind == RunEvent::Kind::kExpectation && e.count == 0) return;
    if (live_) std::cout << "\r\033[K";
    live_ = false;
    std::cout << "  " << e.ToString() << "\n" << std::flush;
  }

 private:
  bool tty_;
  bool live_ = false;
};

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
  options.max_triggers = o.max_triggers;
  if (!o.streaming_mode.empty()) options.streaming_mode = ParseStreamingMode(o.streaming_mode);
  options.stop = &g_stop;
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  auto human = std::make_shared<HumanEvents>(::isatty(STDOUT_FILENO) == 1);
  if (o.events == "json") {
    options.on_event = [](const RunEvent& e) { std::cout << e.ToJson() << "\n" << std::flush; };
  } else if (o.events == "human") {
    options.on_event = [human](const RunEvent& e) { (*human)(e); };
  }
  auto summary = backend->Run(l.pipeline, options);
  if (!summary.ok()) {
    std::cerr << "error: " << summary.status().message() << "\n";
    return kFailed;
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
              "in C++ (the plain twin of the fast path)");
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
  AddSparkOptions(c, &o->spark, /*with_storage=*/true);
  c->callback([o, exit_code] { *exit_code = RunRun(*o); });
}

}  // namespace thund::cli
