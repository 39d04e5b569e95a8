// Fuzz target: the file-drop readers (engine/stream/file_drop_read.h) for CSV
// and newline-delimited JSON, then the bad-row reporting (bad_rows.h). The
// first byte chooses the format, the header flag and the expected columns;
// the rest is the file. Invariants: no crash; every error message is valid
// UTF-8; a table that is read and conformed has exactly the expected columns;
// a dead-letter table built from the file's lines is valid (utf8 columns
// hold UTF-8).
#include <arrow/api.h>

#include <string>
#include <vector>

#include "engine/batch/bad_rows.h"
#include "engine/stream/file_drop_read.h"
#include "fuzz_target.h"
#include "thund/utf8.h"

namespace {

using thund::fuzz::FuzzCheck;
namespace stream = thund::engine::stream;
namespace batch = thund::engine::batch;

std::shared_ptr<arrow::Schema> Expected(int which) {
  switch (which) {
    case 1:
      return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                            arrow::field("amount", arrow::float64())});
    case 2:
      return arrow::schema({arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
                            arrow::field("flag", arrow::boolean())});
    case 3:
      return arrow::schema({arrow::field("id", arrow::int32(), /*nullable=*/false)});
    default:
      return nullptr;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  stream::DropFormatOptions options;
  options.format = (control & 1) ? stream::DropFormat::kJson : stream::DropFormat::kCsv;
  options.header = (control & 2) == 0;
  options.delimiter = (control & 4) ? ';' : ',';
  const auto expected = Expected((control >> 3) & 3);
  const stream::DropFileRef ref{"fuzz_flow", "drop/file.csv"};
  auto table = stream::ParseDropFile(ref, arrow::Buffer::FromString(body), options, expected);
  if (!table.ok()) {
    FuzzCheck(thund::IsValidUtf8(table.status().message()), "reader error is not UTF-8");
  } else if (*table != nullptr && expected != nullptr) {
    auto conformed = stream::ConformDropFile(ref, *table, expected, "declared by the fuzzer");
    if (conformed.ok()) {
      FuzzCheck((*conformed)->schema()->num_fields() == expected->num_fields(),
                "a conformed table does not have the expected columns");
      FuzzCheck((*conformed)->ValidateFull().ok(), "a conformed table is not valid");
    } else {
      FuzzCheck(thund::IsValidUtf8(conformed.status().message()), "conform error is not UTF-8");
    }
  }
  // Every line as a bad row: the dead-letter table and the message.
  std::vector<batch::BadRow> rows;
  size_t start = 0;
  for (int64_t line = 1; start <= body.size() && rows.size() < 64; ++line) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    rows.push_back({"drop/file.csv", line, "fuzzed", body.substr(start, end - start)});
    start = end + 1;
  }
  auto dead = batch::DeadLetterTable("fuzz_flow", rows);
  FuzzCheck(dead.ok() && (*dead)->ValidateFull().ok(), "dead-letter table is not valid");
  FuzzCheck(thund::IsValidUtf8(batch::DescribeBadRows(rows)), "bad-row message is not UTF-8");
  return 0;
}
