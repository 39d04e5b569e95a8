// LowerToSpark: IR -> an SDP dataflow graph (spark_lowering.h has the rules).
#include "backend/spark/spark_lowering.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "authoring/sql/sql_internal.h"
#include "sql/sql_analysis.h"
#include "thund/sql_dialect.h"
#include "thund/type_names.h"
#include "thund/validate.h"
#include "thund/json_text.h"

namespace thund::spark {
namespace {

using sqlp::Literal;
using sqlp::QuoteName;

constexpr const char* kCode = "spark-unsupported";

// Spark's built-in functions (scripts/spark_functions.sh regenerates the list).
const std::set<std::string>& SparkFunctions() {
  static const std::set<std::string> names = {
#include "backend/spark/spark_functions.inc"
  };
  return names;
}


struct Lowerer {
  const Pipeline& p;
  SparkLowerOptions options;
  SparkLowering out;
  std::map<std::string, plan::PlanPtr> plans;  // bound plans, by flow name

  void Refuse(const Flow* f, const Dataset* d, std::string message, std::string hint) {
    Diagnostic diag;
    diag.severity = Severity::kError;
    diag.code = kCode;
    diag.message = std::move(message);
    diag.hint = std::move(hint);
    if (f) {
      diag.flow = f->name;
      diag.location = f->location;
    }
    if (d) {
      diag.dataset = d->name;
      if (!f) diag.location = d->location;
    }
    out.diagnostics.push_back(std::move(diag));
  }

  void Report(const Flow* f, const std::string& dataset, std::string knob, std::string value,
              std::string spark, bool native_runs_it = true) {
    out.project.report.push_back(SparkReportItem{f ? f->name : "", dataset, std::move(knob),
                                                 std::move(value), std::move(spark),
                                                 native_runs_it});
  }

  // -------------------------------------------------------------- checks --

  void CheckCapabilities(const Flow& f) {
    for (const std::string& cap : RequiredCapabilities(p, f)) {
      const std::string why = SparkCapabilityReason(options.version, cap);
      if (why.empty()) continue;
      Refuse(&f, p.FindDataset(f.target),
             fmt::format("needs '{}', which Spark {} cannot run: {}", cap,
                         Name(options.version), why),
             "run it on the native backend (--backend native)");
    }
  }

  // SQL that thund reads and Spark does not: functions and table functions
  // Spark lacks (read_files() inside a larger query, DuckDB-only functions),
  // checked as written, and the Flink-style window table functions.
  void CheckSql(const Flow& f) {
    if (f.sql.empty()) return;
    std::set<std::string> named;
    for (const WrittenCall& call : SparkFunctionCalls(f.sql)) {
      if (SparkFunctions().count(call.name) || !named.insert(call.name).second) continue;
      if (call.name == "tumble" || call.name == "hop" || call.name == "session") continue;
      Refuse(&f, p.FindDataset(f.target),
             fmt::format("Spark has no {}function '{}'", call.table_function ? "table " : "",
                         call.name),
             call.table_function && call.name.rfind("read_", 0) == 0
                 ? "read files as Spark does, which thund reads too: parquet.`path`, "
                   "csv.`path` WITH ('header' = 'true'), json.`path`; or make the read the "
                   "whole query of its own flow (SELECT * FROM read_files(...))"
                 : "use a function both engines have (docs/sql.md lists thund's Spark "
                   "functions), or run the flow on the native backend");
      out.diagnostics.back().location = f.SqlPosition(call.line, call.column);
    }
    plan::PlanPtr root;
    if (auto it = plans.find(f.name); it != plans.end()) root = it->second;
    if (!root) {
      auto unbound = sql::PlanQuery(f.sql);
      if (!unbound.ok()) return;  // Validate reports a body that does not plan
      root = *unbound;
    }
    const Dataset* target = p.FindDataset(f.target);
    for (const plan::PlanNode* n : plan::Nodes(*root)) {
      if (n->kind == plan::NodeKind::kWindowAssign && n->window.from_table_function) {
        if (!named.insert("(window table function)").second) continue;
        Refuse(&f, target,
               "window table functions (TUMBLE, HOP, SESSION) are thund's; Spark has none",
               "write the window as Spark does: GROUP BY window(ts, '1 minute') (or "
               "session_window(ts, '30 seconds')) and select window.start, window.end");
      }
    }
  }

  // What the flow's body says itself (WATERMARK clause, window()).
  std::optional<StreamingSpec> Implied(const Flow& f) {
    if (f.sql.empty()) return std::nullopt;
    return sqlp::ImpliedStreaming(sqlp::AnalyzeBody(f.sql).info);
  }

  // Streaming knobs Spark ignores (reported) or cannot honour (refused).
  void CheckStreaming(const Flow& f, const Dataset* target) {
    if (!f.streaming) return;
    const StreamingSpec& s = *f.streaming;
    const std::optional<StreamingSpec> implied = Implied(f);
    const std::string& ds = f.target;
    if (s.mode) {
      Report(&f, ds, "mode", Name(*s.mode),
             "Spark runs every streaming flow as micro-batches over the new input; thund's "
             "recompute/incremental choice does not apply");
    }
    if (s.trigger.kind == TriggerKind::kProcessingTime) {
      Report(&f, ds, "trigger", s.trigger.ToString(),
             "an SDP run processes the input available when it starts (availableNow) and "
             "stops; the interval is ignored");
    } else if (s.trigger.kind == TriggerKind::kOnce) {
      Report(&f, ds, "trigger", s.trigger.ToString(),
             "an SDP run processes the available input as availableNow (several micro-batches)");
    }
    const bool window_in_sql = implied && implied->window && s.window &&
                               implied->window->kind == s.window->kind;
    if (s.window && !window_in_sql) {
      Refuse(&f, target,
             fmt::format("the window {} is given as an option, not in the query; "
                         "Spark computes only windows written in the SQL",
                         s.window->ToString()),
             "write it in the query: GROUP BY window(ts, '10 seconds'), as Spark does");
    }
    const bool watermark_in_sql = implied && implied->watermark && s.watermark &&
                                  implied->watermark->event_time_column ==
                                      s.watermark->event_time_column;
    if (s.watermark && !watermark_in_sql) {
      if (s.window) {
        Refuse(&f, target,
               fmt::format("the watermark on '{}' is given as an option; Spark needs it in "
                           "the query to emit the windows of an append-mode aggregation",
                           s.watermark->event_time_column),
               "write it in the query: FROM STREAM(t) WATERMARK " +
                   s.watermark->event_time_column + " DELAY OF INTERVAL 10 SECONDS");
      } else {
        Report(&f, ds, "watermark", s.watermark->ToString(),
               "given as an option only: Spark keeps late rows (no watermark in the query)");
      }
    } else if (s.watermark) {
      const int64_t written = implied->watermark->allowed_lateness_ms;
      if (written != s.watermark->allowed_lateness_ms) {
        Report(&f, ds, "watermark", s.watermark->ToString(),
               fmt::format("Spark uses the delay written in the query ({} ms)", written));
      }
    }
    if (s.watermark && s.watermark->idle_timeout_ms) {
      Report(&f, ds, "idle_timeout", sqlp::DurationText(*s.watermark->idle_timeout_ms),
             "Spark has no idle timeout for a watermark: an idle input holds it back");
    }
    if (!s.late_rows.empty()) {
      Refuse(&f, target,
             fmt::format("late rows go to '{}'; Spark drops late rows and cannot route "
                         "them to a table",
                         s.late_rows),
             "remove late_rows for Spark, or run the pipeline on the native backend");
    }
    if (s.state_ttl_ms) {
      Report(&f, ds, "state_ttl", sqlp::DurationText(*s.state_ttl_ms),
             "Spark keeps stream-stream join state until the watermarks pass it; the TTL is "
             "ignored");
    }
  }

  // ------------------------------------------------------------- bodies --

  // The temporary view that reads a file source, defined outside SQL.
  std::string FileView(const Flow& f, const FileSource& src) {
    const std::string view = f.name + "__files";
    out.project.outputs.push_back(
        OutputDefinition{view, OutputDefinition::Kind::kTemporaryView, "", "", {}});
    FlowDefinition def;
    def.name = view;
    def.target = view;
    FlowDefinition::FileRead read;
    read.format = src.format ? Name(*src.format) : "parquet";
    read.paths = {src.path};
    read.streaming = src.file_drop;
    const bool csv = src.format == FileFormat::kCsv;
    if (csv) {
      read.options["header"] = "true";
      read.options["inferSchema"] = "true";
    }
    for (const auto& [k, v] : src.options) {
      if (csv && k == "header") {
        read.options["header"] = v;
      } else if (csv && (k == "delimiter" || k == "delim" || k == "sep")) {
        read.options["sep"] = v;
      } else if (k == "bad_rows" && (v == "fail" || v == "drop")) {
        read.options["mode"] = v == "fail" ? "FAILFAST" : "DROPMALFORMED";
      } else if (k == "bad_rows") {
        Refuse(&f, p.FindDataset(f.target),
               fmt::format("bad_rows = {} has no Spark equivalent", v),
               "use bad_rows = fail or drop for Spark");
      } else {
        Report(&f, f.target, "source option", k + " = " + v,
               "not passed to Spark's file reader (no equivalent option)");
      }
    }
    if (const Dataset* d = p.FindDataset(f.target); d && d->schema.declared()) {
      read.schema = SchemaDdl(*d->schema.arrow, /*with_comments=*/false);
    }
    def.read = std::move(read);
    out.project.flows.push_back(std::move(def));
    if (src.file_drop) out.project.configuration["spark.sql.streaming.schemaInference"] = "true";
    return view;
  }

  // The Spark SQL query of one flow, before expectations.
  std::optional<std::string> Body(const Flow& f) {
    if (!f.source) return f.sql;
    if (const auto* files = std::get_if<FileSource>(&*f.source)) {
      const std::string view = FileView(f, *files);
      return files->file_drop ? "SELECT * FROM STREAM(" + QuoteName(view) + ")"
                              : "SELECT * FROM " + QuoteName(view);
    }
    return std::nullopt;  // refused by CheckCapabilities
  }

  // Expectations drop / fail become a filter over the query; warn is reported.
  std::string WithExpectations(const Dataset& d, const std::string& body) {
    std::vector<std::string> conds;
    for (const Expectation& e : d.expectations) {
      switch (e.action) {
        case ExpectationAction::kWarn:
          Report(nullptr, d.name, "expectation", e.name + " (warn): " + e.predicate,
                 "not checked: open-source SDP has no expectations, and no count is reported");
          break;
        case ExpectationAction::kDrop:
          conds.push_back("(" + e.predicate + ")");
          Report(nullptr, d.name, "expectation", e.name + " (drop): " + e.predicate,
                 "run as a WHERE on the predicate: the same rows land, without a count of "
                 "dropped rows");
          break;
        case ExpectationAction::kFail:
          conds.push_back(fmt::format("assert_true(coalesce(({}), false), {}) IS NULL",
                                      e.predicate,
                                      Literal("expectation '" + e.name + "' failed: " +
                                              e.predicate)));
          Report(nullptr, d.name, "expectation", e.name + " (fail): " + e.predicate,
                 "run as assert_true on the predicate: the flow fails at the first violating "
                 "row, without thund's count and sample");
          break;
      }
    }
    if (conds.empty()) return body;
    std::string where;
    for (size_t i = 0; i < conds.size(); ++i) where += (i ? " AND " : "") + conds[i];
    return "SELECT * FROM (\n" + body + "\n) AS __thund_q WHERE " + where;
  }

  // ------------------------------------------------------------ schemas --

  static std::string SchemaDdl(const arrow::Schema& s, bool with_comments) {
    std::string out;
    for (int i = 0; i < s.num_fields(); ++i) {
      const auto& f = s.field(i);
      out += (i ? ", " : "") + sqlp::QuoteIdent(f->name()) + " " + FormatTypeName(*f->type());
      if (!f->nullable()) out += " NOT NULL";
      if (with_comments && f->metadata()) {
        auto c = f->metadata()->Get("comment");
        if (c.ok()) out += " COMMENT " + Literal(*c);
      }
    }
    return out;
  }

  // Clauses between the name and AS.
  std::string TableClauses(const Dataset& d) {
    std::string out;
    if (d.schema.declared()) out += " (" + SchemaDdl(*d.schema.arrow, true) + ")";
    if (!d.storage.partition_by.empty()) {
      out += " PARTITIONED BY (";
      for (size_t i = 0; i < d.storage.partition_by.size(); ++i) {
        out += (i ? ", " : "") + sqlp::QuoteIdent(d.storage.partition_by[i]);
      }
      out += ")";
    }
    if (!d.comment.empty()) out += " COMMENT " + Literal(d.comment);
    if (!d.properties.empty()) {
      out += " TBLPROPERTIES (";
      bool first = true;
      for (const auto& [k, v] : d.properties) {
        out += (first ? "" : ", ") + Literal(k) + " = " + Literal(v);
        first = false;
      }
      out += ")";
    }
    if (!d.storage.location.empty()) {
      Report(nullptr, d.name, "location", d.storage.location,
             "Spark keeps the table in its warehouse; read it with thund show --backend spark");
    }
    if (d.storage.format && *d.storage.format != FileFormat::kParquet) {
      Report(nullptr, d.name, "format", Name(*d.storage.format),
             "SDP stores tables as Parquet (its default table format)");
    }
    if (d.materialization == Materialization::kIncremental) {
      Report(nullptr, d.name, "materialization", "incremental",
             "Spark recomputes the materialized view in full (same rows)");
    }
    return out;
  }

  // Output column names of a flow: from its bound plan, else from the SELECT
  // list when it names every column (no *); empty when unknown.
  std::vector<std::string> Columns(const Flow& f) {
    auto it = plans.find(f.name);
    plan::PlanPtr root = it != plans.end() ? it->second : nullptr;
    if (!root && !f.sql.empty()) {
      auto unbound = sql::PlanQuery(f.sql);
      if (unbound.ok()) root = *unbound;
    }
    if (!root) return {};
    if (root->schema) return root->schema->field_names();
    const plan::PlanNode* n = root.get();
    while (n->kind == plan::NodeKind::kSort || n->kind == plan::NodeKind::kLimit) n = n->input();
    if (n->kind != plan::NodeKind::kProject) return {};
    std::vector<std::string> names;
    for (const plan::Expr& e : n->exprs) {
      if (e.kind == plan::ExprKind::kStar) return {};
      names.push_back(e.OutputName());
    }
    return names;
  }

  // Several streaming flows as one query: UNION ALL by column name (columns
  // in the target's declared order, else in order of first appearance).
  std::optional<std::string> Merged(const Dataset& d, const std::vector<const Flow*>& flows,
                                    const std::vector<std::string>& bodies) {
    std::vector<std::string> cols;
    if (d.schema.declared()) cols = d.schema.arrow->field_names();
    std::vector<std::vector<std::string>> per_flow;
    for (const Flow* f : flows) {
      per_flow.push_back(Columns(*f));
      if (per_flow.back().empty()) {
        Refuse(f, &d,
               fmt::format("flows into '{}' cannot be merged for Spark: the columns of flow "
                           "'{}' are not known (its query does not plan)",
                           d.name, f->name),
               "declare the table's schema, or run it on the native backend");
        return std::nullopt;
      }
      if (!d.schema.declared()) {
        for (const auto& c : per_flow.back()) {
          if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
        }
      }
    }
    std::string sql;
    for (size_t i = 0; i < flows.size(); ++i) {
      std::string select;
      for (size_t c = 0; c < cols.size(); ++c) {
        const bool has = std::find(per_flow[i].begin(), per_flow[i].end(), cols[c]) !=
                         per_flow[i].end();
        select += (c ? ", " : "") + (has ? sqlp::QuoteIdent(cols[c])
                                         : "NULL AS " + sqlp::QuoteIdent(cols[c]));
      }
      sql += (i ? "\nUNION ALL\n" : "") +
             fmt::format("SELECT {} FROM (\n{}\n) AS __thund_f{}", select, bodies[i], i);
    }
    std::string names;
    for (size_t i = 0; i < flows.size(); ++i) names += (i ? ", " : "") + flows[i]->name;
    Report(nullptr, d.name, "flows", names,
           "run as one Spark flow, the UNION ALL of their queries: Spark runs flows into one "
           "Parquet table concurrently, and one can lose the other's rows");
    return sql;
  }

  // ----------------------------------------------------------- datasets --

  std::string& FileFor(const SourceLocation& loc) {
    std::string stem = "pipeline";
    if (!loc.file.empty()) stem = std::filesystem::path(loc.file).stem().string();
    return out.project.sql_files["transformations/" + stem + ".sql"];
  }

  void Statement(const Dataset& d, const std::string& sql) {
    std::string& file = FileFor(d.location);
    if (!file.empty()) file += "\n";
    file += sql + ";\n";
  }

  // The bodies of `flows` with expectations applied, or nullopt (refused).
  std::optional<std::vector<std::string>> Bodies(const Dataset& d,
                                                 const std::vector<const Flow*>& flows) {
    std::vector<std::string> bodies;
    for (const Flow* f : flows) {
      auto b = Body(*f);
      if (!b) return std::nullopt;
      bodies.push_back(WithExpectations(d, *b));
    }
    return bodies;
  }

  void LowerDataset(const Dataset& d) {
    std::vector<const Flow*> flows = p.FlowsInto(d.name);
    // Flows a Python file defines reach Spark with the file.
    flows.erase(std::remove_if(flows.begin(), flows.end(),
                               [](const Flow* f) { return FromPython(f->location); }),
                flows.end());
    const std::string name = QuoteName(d.name);
    if (d.keyed_write.enabled()) return;  // refused per flow (keyed-write)
    switch (d.kind) {
      case DatasetKind::kView:
      case DatasetKind::kTemporaryView:
      case DatasetKind::kMaterializedView:
      case DatasetKind::kTable: {
        if (flows.size() != 1) {
          if (flows.size() > 1) {
            Refuse(flows[1], &d,
                   fmt::format("'{}' has {} flows; in Spark a {} has exactly one", d.name,
                               flows.size(), Name(d.kind)),
                   "make it a streaming table, or run it on the native backend");
          }
          return;
        }
        auto bodies = Bodies(d, flows);
        if (!bodies) return;
        if (d.kind == DatasetKind::kTemporaryView || d.kind == DatasetKind::kView) {
          Statement(d, fmt::format("CREATE {}VIEW {}{} AS\n{}",
                                   d.kind == DatasetKind::kTemporaryView ? "TEMPORARY " : "",
                                   name, d.comment.empty() ? "" : " COMMENT " + Literal(d.comment),
                                   (*bodies)[0]));
          return;
        }
        if (d.kind == DatasetKind::kTable) {
          Report(nullptr, d.name, "kind", "table",
                 "lowered as a materialized view (SDP's batch table): the same rows");
        }
        if (flows[0]->name != d.name) {
          Report(flows[0], d.name, "flow name", flows[0]->name,
                 "Spark names a materialized view's flow after the view");
        }
        Statement(d, fmt::format("CREATE MATERIALIZED VIEW {}{} AS\n{}", name, TableClauses(d),
                                 (*bodies)[0]));
        out.project.stored_datasets.push_back(d.name);
        return;
      }
      case DatasetKind::kStreamingTable: {
        out.project.stored_datasets.push_back(d.name);
        const std::string decl = "CREATE STREAMING TABLE " + name + TableClauses(d);
        if (flows.empty()) {
          Statement(d, decl);
          return;
        }
        auto bodies = Bodies(d, flows);
        if (!bodies) return;
        if (flows.size() == 1 && flows[0]->name == d.name) {
          Statement(d, decl + " AS\n" + (*bodies)[0]);
        } else if (flows.size() == 1) {
          Statement(d, decl);
          Statement(d, fmt::format("CREATE FLOW {} AS INSERT INTO {} BY NAME\n{}",
                                   QuoteName(flows[0]->name), name, (*bodies)[0]));
        } else if (auto merged = Merged(d, flows, *bodies)) {
          Statement(d, decl + " AS\n" + *merged);
        }
        return;
      }
      case DatasetKind::kSink:
        LowerSink(d, flows);
        return;
    }
  }

  void LowerSink(const Dataset& d, const std::vector<const Flow*>& flows) {
    const WriteMode mode = d.storage.mode.value_or(WriteMode::kAppend);
    if (mode != WriteMode::kAppend) {
      Refuse(nullptr, &d,
             fmt::format("sink '{}' writes in {} mode; Spark sinks append", d.name, Name(mode)),
             "use mode append for Spark, or run it on the native backend");
      return;
    }
    if (!d.storage.partition_by.empty()) {
      Refuse(nullptr, &d, fmt::format("sink '{}' is partitioned; SDP sinks take no partition "
                                      "columns", d.name),
             "remove partition_by for Spark");
      return;
    }
    for (const Flow* f : flows) {
      if (!IsStreamingFlow(p, *f)) {
        Refuse(f, &d,
               fmt::format("it feeds sink '{}' and is a batch flow; Spark sinks take "
                           "streaming flows only",
                           d.name),
               "read its input with STREAM(...), or run it on the native backend");
        return;
      }
    }
    const FileFormat format = d.storage.format.value_or(FileFormat::kParquet);
    OutputDefinition sink{d.name, OutputDefinition::Kind::kSink, d.comment, Name(format), {}};
    sink.options["path"] = d.storage.location;
    for (const auto& [k, v] : d.storage.options) {
      sink.options[k == "delimiter" ? "sep" : k] = v;
    }
    if (format == FileFormat::kCsv && !sink.options.count("header")) {
      sink.options["header"] = "true";
    }
    if (flows.empty()) return;
    auto bodies = Bodies(d, flows);
    if (!bodies) return;
    std::string body = (*bodies)[0];
    if (flows.size() > 1) {
      auto merged = Merged(d, flows, *bodies);
      if (!merged) return;
      body = *merged;
    }
    out.project.outputs.push_back(std::move(sink));
    FlowDefinition def;
    def.name = flows.size() == 1 ? flows[0]->name : d.name;
    def.target = d.name;
    def.sql = body;
    out.project.flows.push_back(std::move(def));
  }

  // ------------------------------------------------------------ project --

  std::string StorageUri() {
    std::string s = options.storage;
    if (s.empty()) s = p.storage.empty() ? ".thund-spark" : p.storage + "/spark";
    if (s.find("://") != std::string::npos) return s;
    return "file://" + std::filesystem::absolute(s).lexically_normal().string();
  }

  // Defined in a Python SDP file: Spark gets the file itself.
  static bool FromPython(const SourceLocation& loc) {
    return loc.file.size() > 3 && loc.file.compare(loc.file.size() - 3, 3, ".py") == 0;
  }

  void Run() {
    SparkProject& proj = out.project;
    for (const Dataset& d : p.datasets) {
      if (FromPython(d.location) &&
          std::find(proj.python_files.begin(), proj.python_files.end(), d.location.file) ==
              proj.python_files.end()) {
        proj.python_files.push_back(d.location.file);
      }
    }
    proj.name = p.name.empty() ? "pipeline" : p.name;
    proj.catalog = p.catalog;
    proj.database = p.database;
    proj.storage = StorageUri();
    proj.configuration = p.configuration;
    if (auto planned = sql::PlanPipeline(p); planned.ok()) plans = std::move(*planned);
    for (const Flow& f : p.flows) {
      if (FromPython(f.location)) continue;  // Spark reads the Python file itself
      CheckCapabilities(f);
      CheckSql(f);
      if (f.cdc) continue;  // refused above
      CheckStreaming(f, p.FindDataset(f.target));
    }
    if (HasErrors(out.diagnostics)) return;
    for (const Dataset& d : p.datasets) {
      if (FromPython(d.location)) {
        if (IsStored(d.kind)) proj.stored_datasets.push_back(d.name);
        // The Python file's expectations run as SQL ones do here, applied by
        // python/thund_sdp/spark_expectations.py: only the report is made.
        WithExpectations(d, "");
        continue;
      }
      LowerDataset(d);
    }
    if (!p.database.empty()) {
      Report(nullptr, "", "schema", p.database,
             "SDP does not create the pipeline's schema: thund run --backend spark creates it "
             "before the run; with spark-pipelines run, create it first (CREATE SCHEMA)",
             /*native_runs_it=*/false);
    }
  }
};

std::string PyString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string PyDict(const std::map<std::string, std::string>& m) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : m) {
    out += (first ? "" : ", ") + PyString(k) + ": " + PyString(v);
    first = false;
  }
  return out + "}";
}

std::string PyIdent(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return "_" + out;
}

// The elements outside SQL as pyspark.pipelines calls.
std::string PythonDefinitions(const SparkProject& proj) {
  std::string py =
      "# Written by `thund lower --to spark`: what Spark SQL cannot define (file reads,\n"
      "# sinks). The SQL files beside it hold the rest of the pipeline.\n"
      "from pyspark import pipelines as dp\n"
      "from pyspark.sql import SparkSession\n\n"
      "spark = SparkSession.active()\n";
  std::map<std::string, const OutputDefinition*> outputs;
  for (const auto& o : proj.outputs) {
    outputs[o.name] = &o;
    if (o.kind == OutputDefinition::Kind::kSink) {
      py += fmt::format("\ndp.create_sink({}, format={}, options={})\n", PyString(o.name),
                        PyString(o.format), PyDict(o.options));
    }
  }
  for (const auto& f : proj.flows) {
    std::string query;
    if (f.read) {
      query = fmt::format("spark.{}.format({})", f.read->streaming ? "readStream" : "read",
                          PyString(f.read->format));
      if (!f.read->options.empty()) query += ".options(**" + PyDict(f.read->options) + ")";
      if (!f.read->schema.empty()) query += ".schema(" + PyString(f.read->schema) + ")";
      query += ".load(" + PyString(f.read->paths.at(0)) + ")";
    } else {
      query = "spark.sql(" + PyString(f.sql) + ")";
    }
    const OutputDefinition* target = outputs.count(f.target) ? outputs[f.target] : nullptr;
    std::string decorator;
    if (target && target->kind == OutputDefinition::Kind::kTemporaryView && f.name == f.target) {
      decorator = fmt::format("@dp.temporary_view(name={})", PyString(f.name));
    } else {
      decorator = fmt::format("@dp.append_flow(target={}, name={})", PyString(f.target),
                              PyString(f.name));
    }
    py += fmt::format("\n\n{}\ndef {}():\n    return {}\n", decorator, PyIdent(f.name), query);
  }
  return py;
}

std::string YamlString(const std::string& s) { return PyString(s); }  // JSON-style quoting

}  // namespace

SparkLowering LowerToSpark(const Pipeline& p, const SparkLowerOptions& options) {
  Lowerer l{p, options, {}, {}};
  l.Run();
  return std::move(l.out);
}

namespace {

std::vector<std::string> NameParts(const std::string& name) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

std::string BackQuoted(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    out += i ? ".`" : "`";
    for (char c : parts[i]) out += c == '`' ? std::string("``") : std::string(1, c);
    out += "`";
  }
  return out;
}

}  // namespace

std::string BackQuotedName(const std::string& name) { return BackQuoted(NameParts(name)); }

std::string QualifiedName(const SparkProject& proj, const std::string& dataset) {
  // A name qualified in the pipeline (USE SCHEMA after a definition) keeps
  // its own qualifier.
  std::vector<std::string> parts = NameParts(dataset);
  if (parts.size() == 1 && !proj.database.empty()) parts.insert(parts.begin(), proj.database);
  if (parts.size() == 2 && !proj.catalog.empty()) parts.insert(parts.begin(), proj.catalog);
  return BackQuoted(parts);
}

std::map<std::string, std::string> ProjectFiles(const SparkProject& proj) {
  std::map<std::string, std::string> files = proj.sql_files;
  std::string spec = "# Written by `thund lower --to spark` (docs/spark.md).\n";
  spec += "name: " + YamlString(proj.name) + "\n";
  spec += "storage: " + YamlString(proj.storage) + "\n";
  if (!proj.catalog.empty()) spec += "catalog: " + YamlString(proj.catalog) + "\n";
  if (!proj.database.empty()) spec += "database: " + YamlString(proj.database) + "\n";
  if (!proj.configuration.empty()) {
    spec += "configuration:\n";
    for (const auto& [k, v] : proj.configuration) {
      spec += "  " + YamlString(k) + ": " + YamlString(v) + "\n";
    }
  }
  spec += "libraries:\n  - glob:\n      include: transformations/**\n";
  files["spark-pipeline.yml"] = spec;
  if (!proj.flows.empty()) files["transformations/thund_definitions.py"] = PythonDefinitions(proj);
  for (const std::string& py : proj.python_files) {
    std::ifstream in(py, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    files["transformations/" + std::filesystem::path(py).filename().string()] = text.str();
  }
  return files;
}

std::string ReportLine(const SparkReportItem& r) {
  return fmt::format("{} {}: {}{}", r.knob, r.value, r.spark,
                     r.native_runs_it ? " (the native backend runs it as declared)" : "");
}

std::string ReportText(const std::vector<SparkReportItem>& report) {
  std::string out;
  for (const auto& r : report) {
    std::string who = !r.flow.empty() ? "flow '" + r.flow + "'" : "dataset '" + r.dataset + "'";
    if (r.flow.empty() && r.dataset.empty()) who = "pipeline";
    out += who + ": " + ReportLine(r) + "\n";
  }
  return out;
}

std::string ReportJson(const std::vector<SparkReportItem>& report, const Diagnostics& refusals) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& r : report) {
    items.push_back({{"flow", r.flow},
                     {"dataset", r.dataset},
                     {"knob", r.knob},
                     {"value", r.value},
                     {"spark", r.spark},
                     {"native_runs_it", r.native_runs_it}});
  }
  nlohmann::json refused = nlohmann::json::array();
  for (const auto& d : refusals) {
    if (d.severity != Severity::kError) continue;
    refused.push_back({{"flow", d.flow},
                       {"dataset", d.dataset},
                       {"message", d.message},
                       {"hint", d.hint},
                       {"location", d.location.ToString()}});
  }
  nlohmann::json out{{"items", std::move(items)}, {"refused", std::move(refused)}};
  return JsonText(out, 2);
}

}  // namespace thund::spark
