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

// Loads PATH (pipeline file, .sql file, SDP project or spec; see load.h) and,
// when it parsed, validates it and checks the SQL functions of its flows.
Loaded LoadAndValidate(const std::string& path);

// Human form: every diagnostic rendered with its source excerpt, then a
// one-line count. JSON form: {"diagnostics":[...], "errors":N, "warnings":N}.
void PrintDiagnosticsHuman(const Loaded& l, std::ostream& out);
std::string DiagnosticsJson(const Diagnostics& diags, int indent = 2);

}  // namespace thund::cli
