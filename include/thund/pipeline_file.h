// The pipeline file: a human-editable YAML (or JSON) form of the whole IR.
// Lossless: ParsePipelineFile(FormatPipelineFile(p)) == p for every Pipeline.
// Reference: docs/pipeline-file.md.
#pragma once

#include <memory>
#include <string>
#include <string_view>


#include "thund/diagnostic.h"
#include "thund/ir.h"

namespace thund {

struct ParseResult {
  Pipeline pipeline;        // best effort even when there are errors
  Diagnostics diagnostics;  // every problem found, with line/column/field path
  bool ok() const { return !HasErrors(diagnostics); }
};

// Parses YAML or JSON text. `file_name` is used in diagnostics and stored in
// source locations. Unknown keys are errors with a "did you mean" hint; wrong
// types say what was expected.
ParseResult ParsePipelineFile(const std::string& text, const std::string& file_name = "<input>");

// Reads and parses a file from disk (an unreadable file is one diagnostic).
ParseResult LoadPipelineFile(const std::string& path);

// The canonical YAML form: fixed key order, defaults omitted, durations as
// "10s"-style strings. Idempotent: Format(Parse(Format(p))) == Format(p).
std::string FormatPipelineFile(const Pipeline& p);

}  // namespace thund
