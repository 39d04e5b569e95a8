// Text that must be UTF-8: pipeline files, SQL, and everything thund writes as
// JSON. Input that is not UTF-8 is refused with a located diagnostic
// (Utf8Diagnostic); bytes from data (rows, file names) that end up in messages
// or dead-letter rows are escaped (EscapeInvalidUtf8). JSON output itself is
// written through thund/json_text.h, which replaces what is left.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "thund/diagnostic.h"

namespace thund {

// The byte offset of the first byte that does not start a well-formed UTF-8
// sequence (overlong forms, surrogates and code points past U+10FFFF are not
// well-formed), or std::string_view::npos when `text` is valid UTF-8.
size_t InvalidUtf8Offset(std::string_view text);

inline bool IsValidUtf8(std::string_view text) {
  return InvalidUtf8Offset(text) == std::string_view::npos;
}

// `text` with every byte that is not part of a well-formed sequence written as
// the four characters \xNN (hex, upper case). Valid UTF-8 comes back unchanged.
std::string EscapeInvalidUtf8(std::string_view text);

// At most `max_bytes` of `text`, cut before a multi-byte character rather than
// inside it, then escaped (EscapeInvalidUtf8); "..." is appended when cut.
std::string Utf8Excerpt(std::string_view text, size_t max_bytes);

// When `text` (the content of `file`) is not valid UTF-8: an error with code
// "invalid-utf8" located at the first bad byte (1-based line, and column in
// bytes), naming the byte and saying to save the file as UTF-8.
std::optional<Diagnostic> Utf8Diagnostic(std::string_view text, const std::string& file);

// When `text` (the content of `file`) holds a control character a text
// format cannot carry: with `nul_only`, a NUL byte; else any C0 control but
// tab, line feed and carriage return, and DEL (YAML allows none unescaped:
// yaml-cpp turned a NUL into bytes that are not UTF-8). An error with code
// "control-character" at the first one.
std::optional<Diagnostic> ControlCharacterDiagnostic(std::string_view text, const std::string& file,
                                                     bool nul_only);

}  // namespace thund
