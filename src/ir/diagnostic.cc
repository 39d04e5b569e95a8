#include "thund/diagnostic.h"

#include <algorithm>

namespace thund {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "error";
}

std::string SourceLocation::ToString() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

std::string Diagnostic::ToString() const {
  std::string out;
  std::string where = location.ToString();
  if (!where.empty()) out += where + ": ";
  out += SeverityName(severity);
  out += ": ";
  if (!flow.empty()) {
    out += "flow '" + flow + "': ";
  } else if (!dataset.empty()) {
    out += "dataset '" + dataset + "': ";
  }
  out += message;
  if (!field_path.empty()) out += " (at " + field_path + ")";
  if (!hint.empty()) out += "; " + hint;
  return out;
}

bool HasErrors(const Diagnostics& diags) {
  return std::any_of(diags.begin(), diags.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

}  // namespace thund
