#include "thund/diagnostic.h"

#include "thund/utf8.h"

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

namespace thund {

std::string RenderDiagnostic(const Diagnostic& d, std::string_view source_text) {
  std::string out = d.ToString();
  // Cut the hint out of the first line; it goes on its own line below.
  if (!d.hint.empty()) out.resize(out.size() - d.hint.size() - 2);
  out += "\n";
  if (d.location.line > 0 && !source_text.empty()) {
    // Find the line (1-based).
    size_t start = 0;
    for (int i = 1; i < d.location.line && start != std::string_view::npos; ++i) {
      start = source_text.find('\n', start);
      if (start != std::string_view::npos) ++start;
    }
    if (start != std::string_view::npos && start <= source_text.size()) {
      size_t end = source_text.find('\n', start);
      std::string_view line = source_text.substr(start, end == std::string_view::npos ? end : end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      std::string num = std::to_string(d.location.line);
      std::string pad(num.size(), ' ');
      // Bytes that are not UTF-8 are shown as \xNN (thund/utf8.h).
      out += " " + num + " | " + EscapeInvalidUtf8(line) + "\n";
      if (d.location.column > 0) {
        // One space per character before the column (tabs kept), so the caret
        // lines up under the offending character; columns count bytes.
        const std::string before = EscapeInvalidUtf8(
            line.substr(0, std::min(line.size(), static_cast<size_t>(d.location.column - 1))));
        std::string caret;
        for (char c : before) {
          if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) continue;  // inside a character
          caret += c == '\t' ? '\t' : ' ';
        }
        out += " " + pad + " | " + caret + "^\n";
      }
    }
  }
  if (!d.hint.empty()) out += "   = hint: " + d.hint + "\n";
  return out;
}

}  // namespace thund
