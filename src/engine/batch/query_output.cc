#include "engine/batch/query_output.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include <arrow/array.h>
#include <arrow/csv/writer.h>
#include <arrow/io/memory.h>
#include <arrow/scalar.h>

#include "engine/io/parquet_io.h"

namespace thund::engine::batch {

arrow::Result<OutputFormat> ParseOutputFormat(const std::string& text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "csv") return OutputFormat::kCsv;
  if (text == "json") return OutputFormat::kJson;
  if (text == "parquet") return OutputFormat::kParquet;
  return arrow::Status::Invalid("format '", text, "' is not one of table, csv, json, parquet");
}

namespace {

// A cell as people read it: structs as {field: value, ...} (Arrow's own
// ToString repeats every field's type).
std::string CellText(const arrow::Scalar& s) {
  if (!s.is_valid) return "NULL";
  if (s.type->id() == arrow::Type::STRUCT) {
    const auto& st = static_cast<const arrow::StructScalar&>(s);
    std::string out = "{";
    for (int i = 0; i < s.type->num_fields(); ++i) {
      if (i > 0) out += ", ";
      out += s.type->field(i)->name() + ": " + CellText(*st.value[static_cast<size_t>(i)]);
    }
    return out + "}";
  }
  return s.ToString();
}

}  // namespace

std::string RenderTable(const arrow::Table& table, size_t max_cell) {
  const int cols = table.num_columns();
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width(static_cast<size_t>(cols));
  std::vector<bool> numeric(static_cast<size_t>(cols));
  for (int c = 0; c < cols; ++c) {
    width[static_cast<size_t>(c)] = table.field(c)->name().size();
    auto id = table.field(c)->type()->id();
    numeric[static_cast<size_t>(c)] = arrow::is_integer(id) || arrow::is_floating(id) ||
                                      arrow::is_decimal(id);
  }
  for (int64_t r = 0; r < table.num_rows(); ++r) {
    std::vector<std::string> row;
    for (int c = 0; c < cols; ++c) {
      auto s = table.column(c)->GetScalar(r);
      std::string v = !s.ok() ? "?" : CellText(**s);
      std::replace(v.begin(), v.end(), '\n', ' ');
      if (v.size() > max_cell) v = v.substr(0, max_cell - 3) + "...";
      width[static_cast<size_t>(c)] = std::max(width[static_cast<size_t>(c)], v.size());
      row.push_back(std::move(v));
    }
    cells.push_back(std::move(row));
  }
  std::ostringstream out;
  auto cell = [&](const std::string& v, int c, bool right) {
    size_t w = width[static_cast<size_t>(c)];
    std::string pad(w - std::min(w, v.size()), ' ');
    if (!right && c == cols - 1) pad.clear();  // no trailing blanks
    out << (c ? " | " : "") << (right ? pad + v : v + pad);
  };
  for (int c = 0; c < cols; ++c) cell(table.field(c)->name(), c, false);
  out << "\n";
  for (int c = 0; c < cols; ++c) {
    out << (c ? "-+-" : "") << std::string(width[static_cast<size_t>(c)], '-');
  }
  out << "\n";
  for (const auto& row : cells) {
    for (int c = 0; c < cols; ++c) cell(row[static_cast<size_t>(c)], c, numeric[static_cast<size_t>(c)]);
    out << "\n";
  }
  out << "(" << table.num_rows() << (table.num_rows() == 1 ? " row)" : " rows)") << "\n";
  return out.str();
}

arrow::Status WriteQueryResult(DuckDbSession& session, const std::string& duckdb_sql,
                               OutputFormat format, std::ostream& out, const std::string& path) {
  std::string text;
  if (format == OutputFormat::kParquet) {
    if (path.empty()) {
      return arrow::Status::Invalid("Parquet output needs a file: pass --output FILE");
    }
    ARROW_ASSIGN_OR_RAISE(auto table, session.Query(duckdb_sql));
    return WriteParquetFile(*table, path);
  }
  if (format == OutputFormat::kJson) {
    ARROW_ASSIGN_OR_RAISE(auto table, session.Query("SELECT CAST(to_json(\"__thund_q\") AS "
                                                    "VARCHAR) FROM (" + duckdb_sql +
                                                    "\n) AS \"__thund_q\""));
    for (const auto& chunk : table->column(0)->chunks()) {
      auto s = std::static_pointer_cast<arrow::StringArray>(chunk);
      for (int64_t i = 0; i < s->length(); ++i) {
        text.append(s->GetView(i));
        text.push_back('\n');
      }
    }
  } else {
    ARROW_ASSIGN_OR_RAISE(auto table, session.Query(duckdb_sql));
    if (format == OutputFormat::kTable) {
      text = RenderTable(*table);
    } else {
      ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
      ARROW_RETURN_NOT_OK(arrow::csv::WriteCSV(*table, arrow::csv::WriteOptions::Defaults(),
                                               sink.get()));
      ARROW_ASSIGN_OR_RAISE(auto buffer, sink->Finish());
      text = buffer->ToString();
    }
  }
  if (path.empty()) {
    out << text;
    return arrow::Status::OK();
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  if (!file) return arrow::Status::IOError("could not write ", path);
  return arrow::Status::OK();
}

}  // namespace thund::engine::batch
