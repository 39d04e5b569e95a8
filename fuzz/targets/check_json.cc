// Fuzz target: `thund check --format json` end to end, in process: the text
// is read as a pipeline file (when it looks like one: it names `datasets:`
// or `flows:`, or starts with '{') or else as a .sql file, validated with the
// native engine's SQL checks, and the diagnostics rendered as the CLI renders
// them (src/cli/loaded.cc). Invariants: no crash; the output is one JSON
// object nlohmann reads back, with as many diagnostics as were found.
#include <string>

#include <nlohmann/json.hpp>

#include "cli/loaded.h"
#include "fuzz_target.h"
#include "thund/pipeline_file.h"
#include "thund/sql_pipeline.h"
#include "thund/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const bool file = text.find("datasets:") != std::string::npos ||
                    text.find("flows:") != std::string::npos || (!text.empty() && text[0] == '{');
  thund::ParseResult r =
      file ? thund::ParsePipelineFile(text, "fuzz.yaml") : thund::ParseSql(text, "fuzz.sql");
  thund::Diagnostics diags = std::move(r.diagnostics);
  if (r.ok()) {
    for (auto& d : thund::Validate(r.pipeline)) diags.push_back(std::move(d));
    for (auto& d : thund::CheckSqlFunctions(r.pipeline)) diags.push_back(std::move(d));
  }
  const std::string out = thund::cli::DiagnosticsJson(diags);
  const nlohmann::json doc = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  thund::fuzz::FuzzCheck(doc.is_object() && doc.contains("diagnostics"),
                         "check's JSON output does not parse");
  thund::fuzz::FuzzCheck(doc["diagnostics"].size() == diags.size(),
                         "check's JSON output lost diagnostics");
  return 0;
}
