#include "cli/loaded.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "thund/load.h"
#include "thund/sql_pipeline.h"
#include "thund/validate.h"
#include "thund/json_text.h"

namespace thund::cli {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Loaded LoadAndValidate(const std::string& path, CheckBackend backend) {
  Loaded l;
  ParseResult r = LoadPipeline(path);
  l.pipeline = std::move(r.pipeline);
  l.diagnostics = std::move(r.diagnostics);
  l.parsed = r.ok();
  for (const auto& d : l.diagnostics) {
    if (!d.location.file.empty() && !l.sources.count(d.location.file)) {
      l.sources[d.location.file] = ReadFile(d.location.file);
    }
  }
  if (l.parsed) {
    Diagnostics v = Validate(l.pipeline);
    if (backend == CheckBackend::kNative) {
      for (auto& d : CheckSqlFunctions(l.pipeline)) v.push_back(std::move(d));
    }
    for (auto& d : v) {
      if (!d.location.file.empty() && !l.sources.count(d.location.file)) {
        l.sources[d.location.file] = ReadFile(d.location.file);
      }
      l.diagnostics.push_back(std::move(d));
    }
  }
  return l;
}

bool ReportPlanErrors(const Loaded& l, const std::string& path, const std::string& format) {
  if (!HasErrors(l.diagnostics)) return false;
  if (format == "json") {
    std::cout << DiagnosticsJson(l.diagnostics) << "\n";
  } else {
    PrintDiagnosticsHuman(l, std::cerr);
    std::cerr << "no plan: fix the errors above (`thund check " << path << "` lists them)\n";
  }
  return true;
}

void PrintDiagnosticsHuman(const Loaded& l, std::ostream& out) {
  int errors = 0, warnings = 0;
  for (const auto& d : l.diagnostics) {
    auto it = l.sources.find(d.location.file);
    out << RenderDiagnostic(d, it == l.sources.end() ? std::string_view() : it->second);
    if (d.severity == Severity::kError) ++errors;
    if (d.severity == Severity::kWarning) ++warnings;
  }
  if (errors || warnings) {
    out << errors << (errors == 1 ? " error" : " errors") << ", " << warnings
        << (warnings == 1 ? " warning" : " warnings") << "\n";
  }
}

std::string DiagnosticsJson(const Diagnostics& diags, int indent) {
  nlohmann::json list = nlohmann::json::array();
  int errors = 0, warnings = 0;
  for (const auto& d : diags) {
    if (d.severity == Severity::kError) ++errors;
    if (d.severity == Severity::kWarning) ++warnings;
    nlohmann::json j;
    j["severity"] = SeverityName(d.severity);
    j["code"] = d.code;
    j["message"] = d.message;
    j["hint"] = d.hint;
    j["file"] = d.location.file;
    j["line"] = d.location.line;
    j["column"] = d.location.column;
    j["field_path"] = d.field_path;
    j["dataset"] = d.dataset;
    j["flow"] = d.flow;
    list.push_back(std::move(j));
  }
  nlohmann::json out;
  out["diagnostics"] = std::move(list);
  out["errors"] = errors;
  out["warnings"] = warnings;
  return JsonText(out, indent);
}

}  // namespace thund::cli
