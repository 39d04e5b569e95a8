// Loading a pipeline for a CLI command: parse it, keep the text of every file
// it came from (for diagnostic excerpts), and print diagnostics.
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "thund/diagnostic.h"
#include "thund/ir.h"

namespace thund::cli {

struct Loaded {
  Pipeline pipeline;
  Diagnostics diagnostics;               // parse problems, then Validate() problems
  std::map<std::string, std::string> sources;  // file name -> text, for excerpts
  bool parsed = false;                   // false: the file could not be read/parsed at all
};

// The backend a pipeline is checked for. The rules about the graph and the IR
// hold for every backend; SQL semantic checks (unknown functions) belong to
// the engine that will run the flows: DuckDB's catalog for the native engine.
// A Spark-only function is not refused for a pipeline checked for Spark.
enum class CheckBackend { kNative, kSpark };

// Loads PATH (pipeline file, .sql file, SDP project or spec; see load.h) and,
// when it parsed, validates it and runs `backend`'s SQL checks on its flows.
Loaded LoadAndValidate(const std::string& path, CheckBackend backend = CheckBackend::kNative);

// Human form: every diagnostic rendered with its source excerpt, then a
// one-line count. JSON form: {"diagnostics":[...], "errors":N, "warnings":N}.
void PrintDiagnosticsHuman(const Loaded& l, std::ostream& out);

// For commands that print a plan of `path`: true when `l` has errors, after
// printing them (as JSON on stdout for format "json", else on stderr with a
// pointer to `thund check`).
bool ReportPlanErrors(const Loaded& l, const std::string& path, const std::string& format);
std::string DiagnosticsJson(const Diagnostics& diags, int indent = 2);

}  // namespace thund::cli
