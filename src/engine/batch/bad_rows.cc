#include "engine/batch/bad_rows.h"

#include <algorithm>

#include <arrow/builder.h>
#include "thund/utf8.h"

namespace thund::engine::batch {

arrow::Result<BadRowsMode> ParseBadRowsMode(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), ::tolower);
  if (t.empty() || t == "fail" || t == "failfast") return BadRowsMode::kFail;
  if (t == "drop" || t == "dropmalformed") return BadRowsMode::kDrop;
  if (t == "dead_letter" || t == "permissive") return BadRowsMode::kDeadLetter;
  return arrow::Status::Invalid("bad_rows '", text,
                                "' is not a mode; use fail (default), drop or dead_letter");
}

const char* Name(BadRowsMode mode) {
  switch (mode) {
    case BadRowsMode::kFail: return "fail";
    case BadRowsMode::kDrop: return "drop";
    case BadRowsMode::kDeadLetter: return "dead_letter";
  }
  return "?";
}

std::shared_ptr<arrow::Schema> DeadLetterSchema() {
  return arrow::schema({arrow::field("flow", arrow::utf8()), arrow::field("file", arrow::utf8()),
                        arrow::field("line", arrow::int64()),
                        arrow::field("reason", arrow::utf8()),
                        arrow::field("raw", arrow::utf8())});
}

arrow::Result<std::shared_ptr<arrow::Table>> DeadLetterTable(const std::string& flow,
                                                             const std::vector<BadRow>& rows) {
  arrow::StringBuilder flows, files, reasons, raws;
  arrow::Int64Builder lines;
  for (const auto& r : rows) {
    ARROW_RETURN_NOT_OK(flows.Append(flow));
    ARROW_RETURN_NOT_OK(files.Append(EscapeInvalidUtf8(r.file)));
    ARROW_RETURN_NOT_OK(lines.Append(r.line));
    ARROW_RETURN_NOT_OK(reasons.Append(EscapeInvalidUtf8(r.reason)));
    // A utf8 column holds UTF-8: bytes that are not are kept as \xNN text.
    ARROW_RETURN_NOT_OK(raws.Append(EscapeInvalidUtf8(r.raw)));
  }
  std::vector<std::shared_ptr<arrow::Array>> cols(5);
  ARROW_RETURN_NOT_OK(flows.Finish(&cols[0]));
  ARROW_RETURN_NOT_OK(files.Finish(&cols[1]));
  ARROW_RETURN_NOT_OK(lines.Finish(&cols[2]));
  ARROW_RETURN_NOT_OK(reasons.Finish(&cols[3]));
  ARROW_RETURN_NOT_OK(raws.Finish(&cols[4]));
  return arrow::Table::Make(DeadLetterSchema(), cols);
}

std::string DescribeBadRows(const std::vector<BadRow>& rows) {
  if (rows.empty()) return "";
  std::string out = EscapeInvalidUtf8(rows[0].file) + ":" + std::to_string(rows[0].line) + ": " +
                    EscapeInvalidUtf8(rows[0].reason);
  if (!rows[0].raw.empty()) out += " (line: " + Utf8Excerpt(rows[0].raw, 120) + ")";
  if (rows.size() > 1) out += " (and " + std::to_string(rows.size() - 1) + " more bad rows)";
  return out;
}

}  // namespace thund::engine::batch
