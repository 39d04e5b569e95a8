// Diagnostics: the one shape every user-facing problem takes (validation, file
// parsing, SQL parsing, backend checks). A diagnostic always says *where* (file,
// line, column, field path, dataset, flow) and *what to do* (hint).
#pragma once

#include <cstdint>
#include <string_view>
#include <string>
#include <vector>

namespace thund {

enum class Severity { kError, kWarning, kNote };

const char* SeverityName(Severity s);  // "error" | "warning" | "note"

// A position in a source file. line/column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
  std::string ToString() const;  // "file:line:col", "file", or ""
  bool operator==(const SourceLocation&) const = default;
};

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string message;     // what is wrong, one sentence, no trailing period needed
  std::string hint;        // what to do about it (may be empty)
  SourceLocation location; // where (may be unknown)
  std::string field_path;  // e.g. "flows[2].streaming.window.size" (may be empty)
  std::string dataset;     // the dataset at fault (may be empty)
  std::string flow;        // the flow at fault (may be empty)
  std::string code;        // stable machine-readable id, e.g. "duplicate-name"

  // "file:3:7: error: <message> [dataset 'x'] (hint)"; one line.
  std::string ToString() const;
  bool operator==(const Diagnostic&) const = default;
};

using Diagnostics = std::vector<Diagnostic>;

bool HasErrors(const Diagnostics& diags);

}  // namespace thund

namespace thund {

// Compiler-style rendering for a terminal or log:
//   orders.yaml:12:9: error: flow 'daily': window size must be > 0 (at flows[1].streaming.window.size)
//      12 |         size: 0s
//         |         ^
//     = hint: use a positive duration such as 10s
// `source_text` is the content of location.file (may be empty: no excerpt).
std::string RenderDiagnostic(const Diagnostic& d, std::string_view source_text);

}  // namespace thund
