// Fuzz target: the pipeline-file reader (authoring/file, YAML and JSON).
// Invariants: no crash; diagnostic text is valid UTF-8; a file that reads
// without errors is written back (FormatPipelineFile) as text that reads
// again without errors.
#include <string>

#include "fuzz_target.h"
#include "thund/pipeline_file.h"
#include "thund/utf8.h"

namespace {

void CheckDiagnostics(const thund::Diagnostics& diags) {
  for (const auto& d : diags) {
    thund::fuzz::FuzzCheck(thund::IsValidUtf8(d.message), "diagnostic message is not UTF-8");
    thund::fuzz::FuzzCheck(thund::IsValidUtf8(d.hint), "diagnostic hint is not UTF-8");
    thund::fuzz::FuzzCheck(thund::IsValidUtf8(d.field_path), "field path is not UTF-8");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  thund::ParseResult r = thund::ParsePipelineFile(text, "fuzz.yaml");
  CheckDiagnostics(r.diagnostics);
  if (!thund::HasErrors(r.diagnostics)) {
    const std::string written = thund::FormatPipelineFile(r.pipeline);
    thund::ParseResult again = thund::ParsePipelineFile(written, "written.yaml");
    CheckDiagnostics(again.diagnostics);
    thund::fuzz::FuzzCheck(!thund::HasErrors(again.diagnostics),
                           "a pipeline read without errors was written as a file that does not read");
  }
  return 0;
}
