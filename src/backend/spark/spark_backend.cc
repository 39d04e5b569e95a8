#include "backend/spark/spark_backend.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <arrow/scalar.h>
#include <arrow/table.h>
#include <fmt/format.h>

#include "authoring/python/run_program.h"
#include "authoring/sql/sql_internal.h"
#include "ir/installed_files.h"

#ifndef THUND_SPARK_PYTHON_DEFAULT
#error "THUND_SPARK_PYTHON_DEFAULT (the pyspark venv's python) must be defined"
#endif

namespace thund::spark {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The first line of a failure event's error ("Error: [CLASS] message"), else
// its first line.
std::string FailureText(const std::string& msg) {
  const size_t at = msg.find("Error: ");
  std::string text = at == std::string::npos ? msg : msg.substr(at + 7);
  return text.substr(0, text.find('\n'));
}

// Per dataset: the final state of each Spark flow that writes it.
struct FlowStates {
  std::map<std::string, std::string> state;    // spark flow (lower) -> last state
  std::map<std::string, std::string> error;    // spark flow (lower) -> failure message
};

// The project's Python SDP files go to Spark unchanged: pyspark's own
// pipelines client (python/thund_sdp/spark_register.py, in the pyspark
// environment) imports them in this client's session, into `graph`.
arrow::Status RegisterPythonFiles(const SparkConnectClient& client, const std::string& graph,
                                  const std::vector<std::string>& files) {
  if (files.empty()) return arrow::Status::OK();
  const char* env = std::getenv("THUND_SPARK_PYTHON");
  const std::string python = env && *env ? env : THUND_SPARK_PYTHON_DEFAULT;
  if (::access(python.c_str(), X_OK) != 0) {
    return arrow::Status::IOError("the project has Python files, and registering them on Spark "
                                  "needs pyspark's Python (", python, ", missing): run "
                                  "scripts/bootstrap.sh or set THUND_SPARK_PYTHON");
  }
  const std::string script =
      InstalledFileOr("share/thund/python/thund_sdp/spark_register.py", THUND_SPARK_REGISTER);
  std::vector<std::string> args = {python, script, client.remote().ToString(),
                                   SparkConnectClient::kUser, client.session_id(), graph};
  for (const auto& f : files) args.push_back(f);
  const std::string log = (std::filesystem::temp_directory_path() /
                           ("thund-spark-register-" + std::to_string(::getpid()) + ".log"))
                              .string();
  const int status = RunProgram(args, "", log);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  std::error_code ec;
  std::filesystem::remove(log, ec);
  if (status != 0) {
    std::string err = text.str();
    // The cause comes first (a Python traceback, Spark's error class); the
    // JVM stack trace after it is long: keep the head and the last lines.
    if (err.size() > 6000) {
      err = err.substr(0, 4000) + "\n...\n" + err.substr(err.size() - 1500);
    }
    return arrow::Status::Invalid("Spark refused the project's Python files:\n", err);
  }
  return arrow::Status::OK();
}

}  // namespace

std::optional<SparkFlowEvent> ParseSparkFlowEvent(const std::string& message) {
  // "Flow x is RUNNING.", "Flow 'x' has FAILED.", "Flow 'x' SKIPPED due to ..."
  static const std::regex re("^Flow '?([^' ]+)'? (?:is |has )?([A-Z_]+)\\b");
  // "Failed to resolve flow: 'x'.\nError: ..." (analysis, before the run starts)
  static const std::regex unresolved("^Failed to resolve flow: '([^']+)'");
  std::smatch m;
  std::string state;
  if (std::regex_search(message, m, unresolved)) {
    state = "FAILED";
  } else if (std::regex_search(message, m, re)) {
    state = m[2].str();
  } else {
    return std::nullopt;
  }
  std::string name = m[1].str();
  // Spark qualifies names (spark_catalog.default.x, possibly back-quoted).
  name.erase(std::remove(name.begin(), name.end(), '`'), name.end());
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos) name = name.substr(dot + 1);
  return SparkFlowEvent{name, state};
}

std::unique_ptr<SparkBackend> SparkBackend::Make(SparkBackendOptions options) {
  return std::unique_ptr<SparkBackend>(new SparkBackend(std::move(options)));
}

Diagnostics SparkBackend::Check(const Pipeline& p) const {
  return LowerToSpark(p, {options_.version, options_.storage}).diagnostics;
}

arrow::Result<RunSummary> SparkBackend::Run(const Pipeline& p, const RunOptions& options) {
  const int64_t started = NowMs();
  auto emit = [&](RunEvent e) {
    if (!e.time_ms) e.time_ms = NowMs();
    if (options.on_event) options.on_event(e);
  };
  // Spark's checkpoints: --spark-storage, else under the run's storage root.
  std::string storage = options_.storage;
  if (storage.empty() && !options.storage_root.empty()) storage = options.storage_root + "/spark";
  SparkLowering lowering = LowerToSpark(p, {options_.version, storage});
  for (const auto& d : lowering.diagnostics) {
    if (d.severity == Severity::kError) {
      return arrow::Status::Invalid("Spark cannot run this pipeline: ", d.ToString());
    }
  }
  const SparkProject& proj = lowering.project;
  RunSummary summary;
  summary.pipeline = p.name;
  summary.started_ms = started;
  summary.mode = fmt::format("spark {} ({})", Name(options_.version), options_.remote);
  for (const auto& r : proj.report) {
    RunEvent e;
    e.kind = r.flow.empty() ? RunEvent::Kind::kMessage : RunEvent::Kind::kFallback;
    e.flow = r.flow;
    e.dataset = r.dataset;
    std::string text = ReportText({r});
    while (!text.empty() && text.back() == '\n') text.pop_back();
    e.message = r.flow.empty() ? "on Spark, " + text : ReportLine(r);
    summary.notes.push_back(text);
    emit(std::move(e));
  }
  {
    RunEvent e;
    e.kind = RunEvent::Kind::kPhase;
    e.phase = RunPhase::kStarting;
    emit(e);
  }
  ARROW_ASSIGN_OR_RAISE(SparkRemote remote, ParseSparkRemote(options_.remote));
  ARROW_ASSIGN_OR_RAISE(auto client,
                        SparkConnectClient::Connect(remote, options_.connect_timeout_ms));
  if (!proj.database.empty()) {
    // SDP does not create the spec's schema (SCHEMA_NOT_FOUND otherwise).
    std::string schema = sqlp::QuoteName(proj.database);
    if (!proj.catalog.empty()) schema = sqlp::QuoteName(proj.catalog) + "." + schema;
    ARROW_RETURN_NOT_OK(client->ExecuteSql("CREATE SCHEMA IF NOT EXISTS " + schema));
  }
  // The spec's configuration is the session's, as spark-pipelines sets it.
  for (const auto& [k, v] : proj.configuration) {
    ARROW_RETURN_NOT_OK(client->ExecuteSql("SET " + k + " = " + v));
  }
  ARROW_ASSIGN_OR_RAISE(std::string graph,
                        client->CreateDataflowGraph(proj.catalog, proj.database,
                                                    proj.configuration));
  summary.run_id = graph;
  for (const auto& [path, text] : proj.sql_files) {
    ARROW_RETURN_NOT_OK(client->DefineSqlGraphElements(graph, path, text));
  }
  for (const auto& o : proj.outputs) ARROW_RETURN_NOT_OK(client->DefineOutput(graph, o));
  for (const auto& f : proj.flows) ARROW_RETURN_NOT_OK(client->DefineFlow(graph, f));
  ARROW_RETURN_NOT_OK(RegisterPythonFiles(*client, graph, proj.python_files));

  // Spark's flow names -> the thund dataset they write.
  std::map<std::string, std::string> dataset_of;
  for (const auto& d : p.datasets) dataset_of[Lower(d.name)] = d.name;
  for (const auto& f : p.flows) dataset_of[Lower(f.name)] = f.target;
  FlowStates states;
  StartRunOptions start;
  start.full_refresh.assign(options.full_refresh.begin(), options.full_refresh.end());
  start.full_refresh_all = options.full_refresh_all;
  start.refresh.assign(options.refresh.begin(), options.refresh.end());
  start.storage = proj.storage;
  {
    RunEvent e;
    e.kind = RunEvent::Kind::kPhase;
    e.phase = RunPhase::kRunning;
    emit(e);
  }
  arrow::Status run = client->StartRun(graph, start, [&](int64_t ms, const std::string& msg) {
    RunEvent e;
    e.time_ms = ms;
    auto fe = ParseSparkFlowEvent(msg);
    if (!fe) {
      e.kind = RunEvent::Kind::kMessage;
      e.message = "spark: " + msg;
      emit(std::move(e));
      return;
    }
    const std::string key = Lower(fe->flow);
    auto ds = dataset_of.find(key);
    if (ds == dataset_of.end()) return;  // an internal flow (a file view)
    states.state[key] = fe->state;
    e.flow = fe->flow;
    e.dataset = ds->second;
    if (fe->state == "FAILED") {
      states.error[key] = FailureText(msg);
      e.kind = RunEvent::Kind::kFlowFailed;
      e.message = msg;
    } else if (fe->state == "COMPLETED") {
      e.kind = RunEvent::Kind::kFlowFinished;
    } else if (fe->state == "RUNNING") {
      e.kind = RunEvent::Kind::kFlowStarted;
    } else if (fe->state == "SKIPPED") {
      e.kind = RunEvent::Kind::kFlowSkipped;
      e.message = "an upstream flow failed";
    } else {
      e.kind = RunEvent::Kind::kMessage;
      e.message = "spark: " + msg;
    }
    emit(std::move(e));
  });
  (void)client->DropDataflowGraph(graph);  // best effort: the run is over either way

  // Outcomes: a dataset failed when one of its flows ended FAILED.
  std::map<std::string, std::vector<std::string>> flows_of;  // dataset -> spark flows
  for (const auto& [flow, ds] : dataset_of) flows_of[ds].push_back(flow);
  bool failed = !run.ok();
  if (!run.ok()) summary.error = run.message();
  for (const auto& d : p.datasets) {
    DatasetOutcome o;
    o.dataset = d.name;
    std::string state;
    for (const auto& f : flows_of[d.name]) {
      auto it = states.state.find(f);
      if (it == states.state.end()) continue;
      if (it->second == "FAILED") {
        state = "FAILED";
        o.reason = states.error[f];
        break;
      }
      state = it->second;
    }
    if (state == "FAILED") {
      o.status = DatasetStatus::kFailed;
      failed = true;
      if (summary.error.empty()) summary.error = o.reason;
    } else if (state == "COMPLETED") {
      o.status = DatasetStatus::kComputed;
      o.reason = "computed on Spark";
    } else if (d.kind == DatasetKind::kView || d.kind == DatasetKind::kTemporaryView) {
      o.status = run.ok() ? DatasetStatus::kComputed : DatasetStatus::kSkipped;
      o.reason = run.ok() ? "view defined on Spark" : "the run failed";
    } else if (state == "SKIPPED") {
      o.status = DatasetStatus::kSkipped;
      o.reason = "an upstream flow failed on Spark";
    } else {
      o.status = DatasetStatus::kSkipped;
      o.reason = !run.ok()       ? "not run: the run failed"
                 : state.empty() ? "Spark ran no flow of it"
                                 : "its flow ended " + state;
    }
    if (o.status == DatasetStatus::kComputed && IsStored(d.kind)) {
      auto count = client->Query("SELECT count(*) AS n FROM " + QualifiedName(proj, d.name));
      if (count.ok() && (*count)->num_rows() == 1) {
        auto scalar = (*count)->column(0)->GetScalar(0);
        if (scalar.ok()) {
          auto v = (*scalar)->CastTo(arrow::int64());
          if (v.ok()) o.rows_written = std::static_pointer_cast<arrow::Int64Scalar>(*v)->value;
        }
      }
    }
    summary.datasets.push_back(std::move(o));
  }
  summary.status = failed ? RunPhase::kFailed : RunPhase::kCompleted;
  summary.duration_ms = NowMs() - started;
  RunEvent e;
  e.kind = RunEvent::Kind::kPhase;
  e.phase = summary.status;
  e.message = summary.error;
  emit(e);
  return summary;
}

}  // namespace thund::spark
