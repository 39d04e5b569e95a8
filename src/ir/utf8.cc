#include "thund/utf8.h"

#include <cstdint>
#include <cstdio>

namespace thund {
namespace {

// The length of the well-formed sequence starting at `i`, or 0 (RFC 3629's
// table: the second byte's range depends on the first).
size_t SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

size_t InvalidUtf8Offset(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceLength(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string EscapeInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceLength(text, i);
    if (n == 0) {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02X", static_cast<unsigned>(static_cast<uint8_t>(text[i])));
      out += buf;
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string Utf8Excerpt(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return EscapeInvalidUtf8(text);
  size_t cut = max_bytes;
  // Back up over continuation bytes so a character is not split (at most 3).
  for (int k = 0; k < 3 && cut > 0 && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80; ++k) {
    --cut;
  }
  return EscapeInvalidUtf8(text.substr(0, cut)) + "...";
}

namespace {

// 1-based line and byte column of `offset` in `text`.
void Locate(std::string_view text, size_t offset, SourceLocation* where) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  where->line = line;
  where->column = static_cast<int>(offset - line_start) + 1;
}

}  // namespace

std::optional<Diagnostic> ControlCharacterDiagnostic(std::string_view text, const std::string& file,
                                                     bool nul_only) {
  size_t at = 0;
  for (; at < text.size(); ++at) {
    const auto c = static_cast<unsigned char>(text[at]);
    if (c == 0) break;
    if (!nul_only && ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F)) break;
  }
  if (at == text.size()) return std::nullopt;
  char byte[8];
  std::snprintf(byte, sizeof(byte), "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(text[at])));
  Diagnostic d;
  d.severity = Severity::kError;
  d.code = "control-character";
  d.message = std::string("the file holds the control character ") + byte + " at offset " +
              std::to_string(at);
  d.hint = "remove it (in a YAML string, write it as an escape such as \\t or \\u0001)";
  d.location.file = file;
  Locate(text, at, &d.location);
  return d;
}

std::optional<Diagnostic> Utf8Diagnostic(std::string_view text, const std::string& file) {
  const size_t at = InvalidUtf8Offset(text);
  if (at == std::string_view::npos) return std::nullopt;
  char byte[8];
  std::snprintf(byte, sizeof(byte), "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(text[at])));
  Diagnostic d;
  d.severity = Severity::kError;
  d.code = "invalid-utf8";
  d.message = std::string("the file is not valid UTF-8: byte ") + byte + " at offset " +
              std::to_string(at) + " does not start a UTF-8 character";
  d.hint = "save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`), or remove the byte";
  d.location.file = file;
  Locate(text, at, &d.location);
  return d;
}

}  // namespace thund
