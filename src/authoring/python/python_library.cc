#include "authoring/python/python_library.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <arrow/type.h>
#include <nlohmann/json.hpp>

#include "authoring/python/run_program.h"
#include "authoring/sql/sql_internal.h"
#include "ir/installed_files.h"
#include "sql/sql_analysis.h"
#include "thund/json_text.h"
#include "thund/type_names.h"

#ifndef THUND_PYTHON_DEFAULT
#error "THUND_PYTHON_DEFAULT (the bootstrap venv's python) must be defined"
#endif
#ifndef THUND_PYTHON_LOADER
#error "THUND_PYTHON_LOADER (python/thund_sdp/loader.py) must be defined"
#endif

namespace thund {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Rounds of the loader at most (each learns at least one table).
constexpr int kMaxRounds = 32;

Diagnostic Problem(std::string file, int line, std::string code, std::string message,
                   std::string hint) {
  Diagnostic d;
  d.location = {std::move(file), line, line > 0 ? 1 : 0};
  d.code = std::move(code);
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The columns of the files a Python file source reads (the loader takes them
// from the files), by flow name: SQL over such a dataset plans with them.
using SourceColumns = std::map<std::string, std::shared_ptr<arrow::Schema>>;

// Columns of the datasets thund can plan now (declared, or written by a flow
// whose query plans).
json KnownTables(const Pipeline& p, const SourceColumns& sources) {
  json tables = json::object();
  for (const Dataset& d : p.datasets) {
    if (!d.schema.declared()) continue;
    json cols = json::array();
    for (const auto& f : d.schema.arrow->fields()) cols.push_back({f->name(), FormatTypeName(*f->type())});
    tables[d.name] = cols;
  }
  auto plans = sql::PlanPipeline(p, [&](const Flow& f) -> std::shared_ptr<arrow::Schema> {
    auto it = sources.find(f.name);
    return it == sources.end() ? nullptr : it->second;
  });
  if (plans.ok()) {
    for (const Flow& f : p.flows) {
      auto it = plans->find(f.name);
      if (it == plans->end() || !it->second->schema || tables.contains(f.target)) continue;
      json cols = json::array();
      for (const auto& field : it->second->schema->fields()) {
        cols.push_back({field->name(), FormatTypeName(*field->type())});
      }
      tables[f.target] = cols;
    }
  }
  return tables;
}

// A DuckDB type name as an Arrow type (strings when thund has no name for it).
std::shared_ptr<arrow::DataType> DuckType(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "timestamp with time zone") name = "timestamp";
  if (name == "timestamp") name = "timestamp_ntz";
  auto t = ParseTypeName(name);
  return t.ok() ? *t : arrow::utf8();
}

// j[key], or null (which iterates as empty) when absent.
const json& Member(const json& j, const char* key) {
  static const json kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

void AddAnswer(const json& answer, Pipeline* p, Diagnostics* diags, SourceColumns* sources) {
  for (const auto& e : Member(answer, "errors")) {
    diags->push_back(Problem(e.value("file", ""), e.value("line", 0), "python-definition",
                             e.value("message", ""), e.value("hint", "")));
  }
  for (const auto& j : Member(answer, "datasets")) {
    Dataset d;
    d.name = j.value("name", "");
    d.kind = ParseDatasetKind(j.value("kind", "")).value_or(DatasetKind::kMaterializedView);
    d.comment = j.value("comment", "");
    d.location = {j.value("file", ""), j.value("line", 0), 1};
    for (const auto& [k, v] : Member(j, "properties").items()) {
      d.properties[k] = v.is_string() ? v.get<std::string>() : JsonText(v);
    }
    for (const auto& e : Member(j, "expectations")) {
      Expectation x;
      x.name = e.value("name", "");
      x.predicate = e.value("predicate", "");
      x.action = ParseExpectationAction(e.value("action", "warn")).value_or(ExpectationAction::kWarn);
      x.location = {e.value("file", d.location.file), e.value("line", d.location.line), 1};
      d.expectations.push_back(std::move(x));
    }
    for (const auto& c : Member(j, "partition_cols")) {
      if (c.is_string()) d.storage.partition_by.push_back(c.get<std::string>());
    }
    if (d.kind == DatasetKind::kSink) {
      const std::string format = j.value("format", "");
      auto f = ParseFileFormat(format);
      if (!f) {
        diags->push_back(Problem(d.location.file, d.location.line, "python-definition",
                                 "sink '" + d.name + "' has format '" + format +
                                     "'; thund writes parquet, csv, json or noop sinks",
                                 "use one of those formats"));
        continue;
      }
      d.storage.format = f;
      for (const auto& [k, v] : Member(j, "options").items()) {
        const std::string value = v.is_string() ? v.get<std::string>() : JsonText(v);
        if (k == "path") {
          d.storage.location = value;
        } else {
          d.storage.options[k] = value;
        }
      }
    }
    p->datasets.push_back(std::move(d));
  }
  for (const auto& j : Member(answer, "flows")) {
    Flow f(j.value("name", ""), j.value("target", ""), j.value("sql", ""));
    f.location = {j.value("file", ""), j.value("line", 0), 1};
    // As for a SQL file's body: WATERMARK ... DELAY OF and window() in the
    // query give the flow its watermark and window.
    if (!f.sql.empty()) {
      const sqlp::BodyResult body = sqlp::AnalyzeBody(f.sql);
      if (!body.problem) f.streaming = sqlp::ImpliedStreaming(body.info);
    }
    if (j.contains("source")) {
      const json& s = j["source"];
      FileSource src;
      src.path = s.value("path", "");
      src.format = ParseFileFormat(s.value("format", "parquet"));
      src.file_drop = s.value("file_drop", false);
      for (const auto& [k, v] : Member(s, "options").items()) {
        src.options[k] = v.is_string() ? v.get<std::string>() : JsonText(v);
      }
      f.sql.clear();
      f.source = std::move(src);
      std::vector<std::shared_ptr<arrow::Field>> fields;
      for (const auto& c : Member(j, "columns")) {
        if (c.is_array() && c.size() == 2 && c[0].is_string() && c[1].is_string()) {
          fields.push_back(arrow::field(c[0].get<std::string>(), DuckType(c[1].get<std::string>())));
        }
      }
      if (!fields.empty()) (*sources)[f.name] = arrow::schema(std::move(fields));
    }
    if (j.contains("cdc")) {
      const json& c = j["cdc"];
      Cdc cdc;
      for (const auto& k : Member(c, "keys")) cdc.keys.push_back(k.get<std::string>());
      cdc.sequence_by = c.value("sequence_by", "");
      cdc.apply_as_deletes = c.value("apply_as_deletes", "");
      for (const auto& k : Member(c, "except_columns")) {
        cdc.except_columns.push_back(k.get<std::string>());
      }
      for (const auto& k : Member(c, "columns")) cdc.columns.push_back(k.get<std::string>());
      cdc.scd_type = c.value("scd_type", 1);
      for (const auto& k : Member(c, "track_history")) {
        cdc.track_history.push_back(k.get<std::string>());
      }
      for (const auto& k : Member(c, "track_history_except")) {
        cdc.track_history_except.push_back(k.get<std::string>());
      }
      f.cdc = std::move(cdc);
    }
    p->flows.push_back(std::move(f));
  }
}

// One run of the loader over `files` with the columns `tables`: its answer,
// or nullopt after a "python-environment" diagnostic.
std::optional<json> RunLoader(const std::string& python, const std::vector<std::string>& files,
                              const Pipeline& p, const json& tables, Diagnostics* diagnostics) {
  json request;
  request["files"] = files;
  request["configuration"] = p.configuration;
  request["tables"] = tables;
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path() /
                       ("thund-py-" + std::to_string(::getpid()) + "-" +
                        std::to_string(reinterpret_cast<uintptr_t>(&p)));
  fs::create_directories(dir, ec);
  { std::ofstream(dir / "request.json") << JsonText(request); }
  const int status = RunProgram({python, ThundPythonLoader()}, (dir / "request.json").string(),
                                (dir / "answer.json").string(), (dir / "err").string());
  const std::string out = ReadAll(dir / "answer.json");
  const std::string err = ReadAll(dir / "err");
  fs::remove_all(dir, ec);
  json answer = json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (status != 0 || answer.is_discarded() || !answer.is_object()) {
    diagnostics->push_back(Problem(files[0], 0, "python-environment",
                                   "thund's Python could not read the Python files (exit " +
                                       std::to_string(status) + "): " + err.substr(0, 2000),
                                   "run scripts/bootstrap.sh to repair .deps/venv"));
    return std::nullopt;
  }
  return answer;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// What each dataset reads (lower-case names): the inputs of its SQL flows,
// and for a Python definition still unresolved, the dataset it stopped at.
std::map<std::string, std::set<std::string>> Reads(const Pipeline& p, const json& unresolved) {
  std::map<std::string, std::set<std::string>> reads;
  for (const Flow& f : p.flows) {
    if (f.sql.empty()) continue;
    auto facts = sql::AnalyzeSql(f.sql);
    if (!facts.ok()) continue;
    for (const auto& in : facts->inputs) {
      if (!in.parts.empty()) reads[Lower(f.target)].insert(Lower(in.parts.back()));
    }
  }
  for (const auto& u : unresolved) {
    reads[Lower(u.value("target", ""))].insert(Lower(u.value("reads", "")));
  }
  return reads;
}

// A path from `from` to `to` in `reads` (both included), or empty.
std::vector<std::string> PathTo(const std::map<std::string, std::set<std::string>>& reads,
                                const std::string& from, const std::string& to) {
  std::map<std::string, std::string> parent;
  std::vector<std::string> queue = {from};
  parent[from] = "";
  for (size_t i = 0; i < queue.size(); ++i) {
    const std::string at = queue[i];
    if (at == to) {
      std::vector<std::string> path;
      for (std::string n = to; !n.empty(); n = parent[n]) path.insert(path.begin(), n);
      return path;
    }
    auto it = reads.find(at);
    if (it == reads.end()) continue;
    for (const auto& next : it->second) {
      if (parent.emplace(next, at).second) queue.push_back(next);
    }
  }
  return {};
}

// The definitions whose reads never resolved: an unknown name, a cycle, or a
// dataset whose query does not plan.
void ReportUnresolved(const json& unresolved, const Pipeline& p, Diagnostics* diags) {
  const auto reads = Reads(p, unresolved);
  for (const auto& u : unresolved) {
    const std::string name = u.value("name", "");
    const std::string target = u.value("target", name);
    const std::string read = u.value("reads", "");
    const std::string file = u.value("file", "");
    const int line = u.value("line", 0);
    const Dataset* d = nullptr;
    for (const Dataset& x : p.datasets) {
      if (Lower(x.name) == Lower(read)) d = &x;
    }
    if (d == nullptr) {
      diags->push_back(Problem(file, line, "python-definition",
                               "'" + name + "' reads '" + read +
                                   "', which no file of the pipeline defines",
                               "check the name: datasets are defined in the pipeline's .py files "
                               "(@dp.table, @dp.materialized_view, @dp.temporary_view) or .sql "
                               "files"));
      continue;
    }
    std::vector<std::string> cycle = PathTo(reads, Lower(read), Lower(target));
    if (!cycle.empty()) {
      std::string text = Lower(target);
      for (const auto& n : cycle) text += " -> " + n;
      diags->push_back(Problem(file, line, "python-definition",
                               "'" + name + "' reads '" + read + "', which reads it back: " +
                                   text + " (a cycle)",
                               "a dataset cannot depend on itself; break the cycle"));
      continue;
    }
    diags->push_back(Problem(
        file, line, "python-definition",
        "'" + name + "' reads '" + read + "', whose columns cannot be worked out (" +
            d->location.file + ":" + std::to_string(d->location.line) + ")",
        "fix that dataset's query (thund check names its problem), or declare its schema"));
  }
}

}  // namespace

std::string ThundPython() {
  const char* env = std::getenv("THUND_PYTHON");
  if (env && *env) return env;
  if (::access(THUND_PYTHON_DEFAULT, X_OK) == 0) return THUND_PYTHON_DEFAULT;
  // An installed thund on a machine without the bootstrap's venv.
  const std::string on_path = FindOnPath("python3");
  return on_path.empty() ? THUND_PYTHON_DEFAULT : on_path;
}

std::string ThundPythonLoader() {
  return InstalledFileOr("share/thund/python/thund_sdp/loader.py", THUND_PYTHON_LOADER);
}

void LoadPythonLibraries(const std::vector<std::string>& files, Pipeline* p,
                         Diagnostics* diagnostics) {
  if (files.empty()) return;
  const std::string python = ThundPython();
  if (::access(python.c_str(), X_OK) != 0) {
    diagnostics->push_back(Problem(files[0], 0, "python-environment",
                                   "thund's Python (" + python + ") is missing, so " + files[0] +
                                       " cannot be read",
                                   "run scripts/bootstrap.sh, or set THUND_PYTHON to a Python "
                                   "with sqlframe and duckdb"));
    return;
  }
  // Python and SQL datasets may read each other in chains (py -> sql -> py):
  // each round hands the loader every table thund can plan so far, until no
  // definition is left unresolved or a round learns nothing new.
  SourceColumns sources;
  json tables = KnownTables(*p, sources);
  std::optional<json> answer;
  for (int round = 0;; ++round) {
    answer = RunLoader(python, files, *p, tables, diagnostics);
    if (!answer) return;
    if (Member(*answer, "unresolved").empty() || round >= kMaxRounds) break;
    Pipeline trial = *p;
    Diagnostics ignored;
    AddAnswer(*answer, &trial, &ignored, &sources);
    bool learned = false;
    const json known = KnownTables(trial, sources);
    for (const auto& [name, cols] : known.items()) {
      if (!tables.contains(name)) {
        tables[name] = cols;
        learned = true;
      }
    }
    if (!learned) break;
  }
  AddAnswer(*answer, p, diagnostics, &sources);
  ReportUnresolved(Member(*answer, "unresolved"), *p, diagnostics);
}

}  // namespace thund
