// Malformed input rows (CSV/JSON) and what to do with them.
//
// Modes (FileSource option `bad_rows`, default fail), with the Spark names
// accepted as aliases:
//   fail         (FAILFAST)       the flow fails; the error names file and line
//   drop         (DROPMALFORMED)  bad rows are skipped and counted
//   dead_letter  (PERMISSIVE)     bad rows are skipped, counted and kept, with
//                                 file, line and reason, in the side dataset
//                                 `<dataset>__dead_letter` (DeadLetterName)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/result.h>
#include <arrow/table.h>

namespace thund::engine::batch {

enum class BadRowsMode { kFail, kDrop, kDeadLetter };

// "" -> kFail. Case-insensitive; Spark's FAILFAST / DROPMALFORMED / PERMISSIVE
// are aliases. Unknown values fail naming the accepted ones.
arrow::Result<BadRowsMode> ParseBadRowsMode(const std::string& text);
const char* Name(BadRowsMode mode);

struct BadRow {
  std::string file;
  int64_t line = 0;  // 1-based line in the file (a CSV header is line 1)
  std::string reason;
  std::string raw;  // the line as read (bytes that are not UTF-8 are escaped as \xNN in the
                    // dead-letter table and in messages)
};

// The dead-letter dataset's rows:
//   (flow string, file string, line bigint, reason string, raw string)
std::shared_ptr<arrow::Schema> DeadLetterSchema();
arrow::Result<std::shared_ptr<arrow::Table>> DeadLetterTable(const std::string& flow,
                                                             const std::vector<BadRow>& rows);

// "file:line: reason" of the first row, plus "(and N more)".
std::string DescribeBadRows(const std::vector<BadRow>& rows);

}  // namespace thund::engine::batch
