#include "engine/stream/file_drop_read.h"

#include <arrow/compute/cast.h>
#include <arrow/csv/api.h>
#include <arrow/io/memory.h>
#include <arrow/json/api.h>
#include <parquet/arrow/reader.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <vector>

#include "engine/batch/schema_conform.h"
#include "thund/utf8.h"

namespace thund::engine::stream {
namespace {

arrow::Status FileError(const DropFileRef& ref, const std::string& what) {
  return arrow::Status::Invalid("flow '", ref.flow, "': file '", ref.path, "' ", what);
}

// A row as shown in an error: its first 80 bytes, bytes that are not UTF-8
// escaped as \xNN.
std::string Excerpt(std::string_view text) { return Utf8Excerpt(text, 80); }

// ---------------------------------------------------------------- parquet --

arrow::Result<std::shared_ptr<arrow::Table>> ParseParquet(
    const DropFileRef& ref, const std::shared_ptr<arrow::Buffer>& bytes,
    const std::set<std::string>& columns, std::shared_ptr<arrow::Schema>* whole) {
  const auto* data = reinterpret_cast<const char*>(bytes->data());
  const int64_t n = bytes->size();
  if (n < 12 || std::string_view(data + n - 4, 4) != "PAR1") return nullptr;  // no footer yet
  auto reader = parquet::arrow::OpenFile(std::make_shared<arrow::io::BufferReader>(bytes),
                                         arrow::default_memory_pool());
  if (!reader.ok()) return nullptr;  // footer unreadable: still being written
  std::vector<int> wanted;  // top-level fields to read (empty: all)
  if (!columns.empty()) {
    std::shared_ptr<arrow::Schema> schema;
    arrow::Status st = (*reader)->GetSchema(&schema);
    if (!st.ok()) {
      return FileError(ref, "is not a readable Parquet file: " + st.message() +
                                "; move it out of the drop directory");
    }
    for (int i = 0; i < schema->num_fields(); ++i) {
      std::string lower = schema->field(i)->name();
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (columns.count(lower) > 0) wanted.push_back(i);
    }
    // Indices are of leaf columns: only a flat file has one per field.
    const bool flat = (*reader)->parquet_reader()->metadata()->num_columns() ==
                      schema->num_fields();
    if (flat && static_cast<int>(wanted.size()) < schema->num_fields()) {
      if (whole != nullptr) *whole = schema;
    } else {
      wanted.clear();
    }
  }
  auto table = wanted.empty() ? (*reader)->ReadTable() : (*reader)->ReadTable(wanted);
  if (!table.ok()) {
    return FileError(ref, "is not a readable Parquet file: " + table.status().message() +
                              "; move it out of the drop directory");
  }
  return table;
}

// -------------------------------------------------------------------- csv --

struct CsvSetup {
  arrow::csv::ReadOptions read = arrow::csv::ReadOptions::Defaults();
  arrow::csv::ParseOptions parse = arrow::csv::ParseOptions::Defaults();
  arrow::csv::ConvertOptions convert = arrow::csv::ConvertOptions::Defaults();
};

CsvSetup MakeCsvSetup(const DropFormatOptions& options,
                      const std::shared_ptr<arrow::Schema>& expected) {
  CsvSetup s;
  s.read.use_threads = false;  // row numbers in errors need a serial read
  s.parse.delimiter = options.delimiter;
  if (!options.header) {
    if (expected != nullptr) {
      s.read.column_names = expected->field_names();
    } else {
      s.read.autogenerate_column_names = true;
    }
  }
  if (expected != nullptr) {
    for (const auto& f : expected->fields()) s.convert.column_types[f->name()] = f->type();
  }
  return s;
}

arrow::Result<std::shared_ptr<arrow::Table>> ReadCsv(const std::shared_ptr<arrow::Buffer>& bytes,
                                                     const CsvSetup& s) {
  ARROW_ASSIGN_OR_RAISE(
      auto reader, arrow::csv::TableReader::Make(arrow::io::default_io_context(),
                                                 std::make_shared<arrow::io::BufferReader>(bytes),
                                                 s.read, s.parse, s.convert));
  return reader->Read();
}

bool CastFails(const std::shared_ptr<arrow::Array>& a, const std::shared_ptr<arrow::DataType>& t) {
  return !arrow::compute::Cast(*a, t, arrow::compute::CastOptions::Safe()).ok();
}

// After a conversion error: the first row (and column) whose text does not
// convert to its expected type, found by reading every column as text.
std::optional<std::pair<int64_t, std::string>> FindBadCsvValue(
    const std::shared_ptr<arrow::Buffer>& bytes, CsvSetup s,
    const std::shared_ptr<arrow::Schema>& expected) {
  for (auto& [name, type] : s.convert.column_types) type = arrow::utf8();
  s.convert.strings_can_be_null = true;
  auto text = ReadCsv(bytes, s);
  if (!text.ok()) return std::nullopt;
  std::optional<std::pair<int64_t, std::string>> best;
  for (const auto& field : expected->fields()) {
    auto column = (*text)->GetColumnByName(field->name());
    if (column == nullptr || field->type()->id() == arrow::Type::STRING) continue;
    int64_t base = 0;
    for (const auto& chunk : column->chunks()) {
      if (CastFails(chunk, field->type())) {
        int64_t lo = 0, hi = chunk->length();  // [lo, hi) holds a bad value
        while (hi - lo > 1) {
          const int64_t mid = lo + (hi - lo) / 2;
          if (CastFails(chunk->Slice(lo, mid - lo), field->type())) {
            hi = mid;
          } else {
            lo = mid;
          }
        }
        if (!best || base + lo < best->first) best.emplace(base + lo, field->name());
        break;
      }
      base += chunk->length();
    }
  }
  return best;
}

arrow::Result<std::shared_ptr<arrow::Table>> ParseCsv(
    const DropFileRef& ref, const std::shared_ptr<arrow::Buffer>& bytes,
    const DropFormatOptions& options, const std::shared_ptr<arrow::Schema>& expected) {
  CsvSetup s = MakeCsvSetup(options, expected);
  std::optional<std::string> bad_row;
  s.parse.invalid_row_handler = [&](const arrow::csv::InvalidRow& row) {
    bad_row = "line " + std::to_string(row.number) + ": expected " +
              std::to_string(row.expected_columns) + " columns, found " +
              std::to_string(row.actual_columns) + " (" + Excerpt(row.text) + ")";
    return arrow::csv::InvalidRowResult::Error;
  };
  auto table = ReadCsv(bytes, s);
  if (table.ok()) return table;
  const std::string fix = "; fix or remove the row (bad_rows modes do not apply to streams)";
  if (bad_row) return FileError(ref, "has a malformed row at " + *bad_row + fix);
  if (expected != nullptr &&
      table.status().message().find("conversion error") != std::string::npos) {
    s.parse.invalid_row_handler = nullptr;
    if (auto bad = FindBadCsvValue(bytes, s, expected)) {
      const int64_t line = bad->first + 1 + (options.header ? 1 : 0);
      return FileError(ref, "has a malformed row at line " + std::to_string(line) + ": column '" +
                                bad->second + "': " + table.status().message() + fix);
    }
  }
  return FileError(ref, "is not valid CSV: " + table.status().message());
}

// ------------------------------------------------------------------- json --

arrow::json::ParseOptions JsonParseOptions(const std::shared_ptr<arrow::Schema>& expected) {
  auto parse = arrow::json::ParseOptions::Defaults();
  if (expected != nullptr) {
    parse.explicit_schema = expected;
    parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::InferType;
  }
  return parse;
}

arrow::Result<std::shared_ptr<arrow::Table>> ParseJson(
    const DropFileRef& ref, const std::shared_ptr<arrow::Buffer>& bytes,
    const std::shared_ptr<arrow::Schema>& expected) {
  std::string_view text(reinterpret_cast<const char*>(bytes->data()),
                        static_cast<size_t>(bytes->size()));
  // Every row must be an object. Checked here because Arrow's JSON parser
  // crashes (SIGSEGV, Arrow 26) on a row that is a bare `null`.
  {
    int64_t line = 0;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      ++line;
      const std::string_view row = text.substr(start, end - start);
      start = end + 1;
      const size_t first = row.find_first_not_of(" \t\r");
      if (first != std::string_view::npos && row[first] != '{') {
        return FileError(ref, "has a malformed row at line " + std::to_string(line) +
                                  ": a row must be a JSON object (" + Excerpt(row) +
                                  "); fix or remove the row (bad_rows modes do not apply to "
                                  "streams)");
      }
    }
  }
  auto read = arrow::json::ReadOptions::Defaults();
  read.use_threads = false;
  const auto parse = JsonParseOptions(expected);
  auto table = [&]() -> arrow::Result<std::shared_ptr<arrow::Table>> {
    ARROW_ASSIGN_OR_RAISE(auto reader,
                          arrow::json::TableReader::Make(
                              arrow::default_memory_pool(),
                              std::make_shared<arrow::io::BufferReader>(bytes), read, parse));
    return reader->Read();
  }();
  if (table.ok()) return table;
  // Find the first line that does not parse on its own.
  int64_t line = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line;
    std::string_view row = text.substr(start, end - start);
    start = end + 1;
    if (row.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto one = arrow::json::ParseOne(
        parse, std::make_shared<arrow::Buffer>(reinterpret_cast<const uint8_t*>(row.data()),
                                               static_cast<int64_t>(row.size())));
    if (!one.ok()) {
      return FileError(ref, "has a malformed row at line " + std::to_string(line) + ": " +
                                one.status().message() + " (" + Excerpt(row) +
                                "); fix or remove the row (bad_rows modes do not apply to "
                                "streams)");
    }
  }
  return FileError(ref, "is not valid newline-delimited JSON: " + table.status().message());
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Table>> ParseDropFile(
    const DropFileRef& ref, const std::shared_ptr<arrow::Buffer>& bytes,
    const DropFormatOptions& options, const std::shared_ptr<arrow::Schema>& expected,
    const std::set<std::string>& columns, std::shared_ptr<arrow::Schema>* whole) {
  if (whole != nullptr) *whole = nullptr;
  if (bytes->size() == 0) return nullptr;
  if (options.format == DropFormat::kParquet) return ParseParquet(ref, bytes, columns, whole);
  if (bytes->data()[bytes->size() - 1] != '\n') return nullptr;  // a partial last line
  // CSV and JSON text must be UTF-8: a byte that is not is an error at its
  // line (Arrow would read it as binary or keep it in a utf8 column).
  const std::string_view text(reinterpret_cast<const char*>(bytes->data()),
                              static_cast<size_t>(bytes->size()));
  if (auto bad = Utf8Diagnostic(text, ref.path)) {
    const size_t line_start = text.rfind('\n', InvalidUtf8Offset(text)) + 1;  // npos + 1 == 0
    const size_t line_end = text.find('\n', line_start);
    return FileError(ref, "has bytes that are not UTF-8 at line " +
                              std::to_string(bad->location.line) + ", column " +
                              std::to_string(bad->location.column) + " (" +
                              Excerpt(text.substr(line_start, line_end - line_start)) +
                              "); save the file as UTF-8, or fix or remove the row");
  }
  if (options.format == DropFormat::kCsv) return ParseCsv(ref, bytes, options, expected);
  return ParseJson(ref, bytes, expected);
}

bool IsWideningCast(const arrow::DataType& from, const arrow::DataType& to) {
  using T = arrow::Type;
  if (from.Equals(to)) return true;
  if (from.id() == T::NA) return true;
  if (from.id() == T::DICTIONARY) {
    return IsWideningCast(*static_cast<const arrow::DictionaryType&>(from).value_type(), to);
  }
  const bool from_int = arrow::is_integer(from.id()), to_int = arrow::is_integer(to.id());
  if (from_int && to_int) {
    const int fb = from.bit_width(), tb = to.bit_width();
    const bool fs = arrow::is_signed_integer(from.id()), ts = arrow::is_signed_integer(to.id());
    if (fs == ts) return tb >= fb;
    return !fs && ts && tb > fb;  // unsigned into a wider signed integer
  }
  if (to.id() == T::DOUBLE) {
    return from.id() == T::FLOAT || (from_int && from.bit_width() <= 32);
  }
  if (arrow::is_string(from.id()) || from.id() == T::STRING_VIEW) {
    return arrow::is_string(to.id()) || to.id() == T::STRING_VIEW;
  }
  if (arrow::is_binary(from.id()) && arrow::is_binary(to.id())) return true;
  if (from.id() == T::TIMESTAMP && to.id() == T::TIMESTAMP) {
    const auto& f = static_cast<const arrow::TimestampType&>(from);
    const auto& t = static_cast<const arrow::TimestampType&>(to);
    return f.timezone() == t.timezone() && t.unit() >= f.unit();
  }
  return false;
}

arrow::Result<std::shared_ptr<arrow::Table>> ConformDropFile(
    const DropFileRef& ref, const std::shared_ptr<arrow::Table>& table,
    const std::shared_ptr<arrow::Schema>& expected, const std::string& origin) {
  const arrow::Schema& found = *table->schema();
  std::vector<std::string> problems;
  for (const auto& f : expected->fields()) {
    auto column = found.GetFieldByName(f->name());
    if (column == nullptr) {
      problems.push_back("column '" + f->name() + "' is missing");
    } else if (!IsWideningCast(*column->type(), *f->type())) {
      problems.push_back("column '" + f->name() + "' is " +
                         batch::DescribeSchema(arrow::Schema({column})) + ", expected " +
                         batch::DescribeSchema(arrow::Schema({f})));
    }
  }
  for (const auto& f : found.fields()) {
    if (expected->GetFieldIndex(f->name()) < 0) {
      problems.push_back("column '" + f->name() + "' is not expected");
    }
  }
  std::set<std::string> seen;
  for (const auto& name : found.field_names()) {
    if (!seen.insert(name).second) problems.push_back("column '" + name + "' repeats");
  }
  if (!problems.empty()) {
    std::string list;
    for (const auto& p : problems) list += (list.empty() ? "" : "; ") + p;
    return FileError(ref, "does not match the stream's columns: expected " +
                              batch::DescribeSchema(*expected) + " (" + origin + "), found " +
                              batch::DescribeSchema(found) + " (" + list +
                              "). Move the file out of the drop directory, or declare the "
                              "dataset's schema with columns every file can be read as "
                              "(integers widen, e.g. int -> bigint)");
  }
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
  for (const auto& f : expected->fields()) {
    auto column = table->GetColumnByName(f->name());
    if (!column->type()->Equals(*f->type())) {
      ARROW_ASSIGN_OR_RAISE(
          auto cast, arrow::compute::Cast(column, f->type(), arrow::compute::CastOptions::Safe()));
      column = cast.chunked_array();
    }
    if (!f->nullable() && column->null_count() > 0) {
      return FileError(ref, "has NULLs in column '" + f->name() + "', which is not null (" +
                                origin + "); fix the file or make the column nullable");
    }
    columns.push_back(std::move(column));
  }
  return arrow::Table::Make(expected, std::move(columns), table->num_rows());
}

}  // namespace thund::engine::stream
