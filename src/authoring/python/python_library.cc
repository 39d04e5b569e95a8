#include "authoring/python/python_library.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <arrow/type.h>
#include <nlohmann/json.hpp>

#include "authoring/python/run_program.h"
#include "ir/installed_files.h"
#include "sql/sql_analysis.h"
#include "thund/type_names.h"
#include "thund/json_text.h"

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

// Columns of the datasets thund can plan before the Python code runs.
json KnownTables(const Pipeline& p) {
  json tables = json::object();
  for (const Dataset& d : p.datasets) {
    if (!d.schema.declared()) continue;
    json cols = json::array();
    for (const auto& f : d.schema.arrow->fields()) cols.push_back({f->name(), FormatTypeName(*f->type())});
    tables[d.name] = cols;
  }
  auto plans = sql::PlanPipeline(p);
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

// j[key], or null (which iterates as empty) when absent.
const json& Member(const json& j, const char* key) {
  static const json kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

void AddAnswer(const json& answer, Pipeline* p, Diagnostics* diags) {
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
      cdc.scd_type = c.value("scd_type", 1);
      f.cdc = std::move(cdc);
    }
    p->flows.push_back(std::move(f));
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
  json request;
  request["files"] = files;
  request["configuration"] = p->configuration;
  request["tables"] = KnownTables(*p);
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path() /
                       ("thund-py-" + std::to_string(::getpid()) + "-" +
                        std::to_string(reinterpret_cast<uintptr_t>(p)));
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
    return;
  }
  AddAnswer(answer, p, diagnostics);
}

}  // namespace thund
