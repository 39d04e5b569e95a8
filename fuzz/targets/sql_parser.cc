// Fuzz target: the SQL surface's statement parser (authoring/sql), on any
// bytes as a standalone .sql file and as an SDP project library. Invariants:
// no crash; every diagnostic is an error/warning with text that is valid
// UTF-8 (so the JSON output needs no replacement); a file that parses
// without errors formats (FormatSql) to text that parses again.
#include <string>

#include "fuzz_target.h"
#include "thund/sql_pipeline.h"
#include "thund/utf8.h"

namespace {

void CheckDiagnostics(const thund::Diagnostics& diags) {
  for (const auto& d : diags) {
    thund::fuzz::FuzzCheck(thund::IsValidUtf8(d.message), "diagnostic message is not UTF-8");
    thund::fuzz::FuzzCheck(thund::IsValidUtf8(d.hint), "diagnostic hint is not UTF-8");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  thund::ParseResult r = thund::ParseSql(text, "fuzz.sql");
  CheckDiagnostics(r.diagnostics);
  if (!thund::HasErrors(r.diagnostics)) {
    const std::string formatted = thund::FormatSql(r.pipeline);
    thund::ParseResult again = thund::ParseSql(formatted, "formatted.sql");
    CheckDiagnostics(again.diagnostics);
  }
  thund::SqlParseOptions library;
  library.project_library = true;
  library.catalog = "cat";
  library.database = "db";
  CheckDiagnostics(thund::ParseSql(text, "lib.sql", library).diagnostics);
  return 0;
}
