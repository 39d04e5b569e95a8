#include "engine/batch/file_source.h"

#include <filesystem>
#include <fstream>

#include <arrow/array.h>
#include <arrow/scalar.h>

#include "engine/batch/duckdb_types.h"
#include "engine/batch/input_files.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/fs/atomic_write.h"
#include "ir/file_uri.h"

namespace thund::engine::batch {
namespace {

std::string FileList(const std::vector<std::string>& files) {
  std::string out = "[";
  for (size_t i = 0; i < files.size(); ++i) out += (i ? ", " : "") + QuoteString(files[i]);
  return out + "]";
}

bool IsIdentifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string OptionValue(const std::string& v) {
  if (v == "true" || v == "false") return v;
  bool numeric = !v.empty();
  for (char c : v) numeric = numeric && (std::isdigit(static_cast<unsigned char>(c)) || c == '.');
  return numeric ? v : QuoteString(v);
}

arrow::Result<std::string> ReaderOptions(const Flow& flow, const FileSource& source) {
  std::string out;
  for (const auto& [k, v] : source.options) {
    if (k == "bad_rows") continue;
    if (!IsIdentifier(k)) {
      return arrow::Status::Invalid("flow '", flow.name, "': file source option '", k,
                                    "' is not a reader option name");
    }
    out += ", " + k + " = " + OptionValue(v);
  }
  return out;
}

// Columns of the declared schema DuckDB can read from text, as (name, type).
std::vector<std::pair<std::string, std::string>> DeclaredScalars(const Dataset& target) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!target.schema.declared()) return out;
  for (const auto& f : target.schema.arrow->fields()) {
    if (auto t = DuckDbScalarTypeName(*f->type())) out.emplace_back(f->name(), *t);
  }
  return out;
}

std::string JsonPath(const std::string& column) {
  std::string escaped;
  for (char c : column) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
  return QuoteString("$.\"" + escaped + "\"");
}

arrow::Status PlanJson(DuckDbSession& session, const FileSource& source, const Dataset& target,
                       const std::string& tag, const std::string& options,
                       FileSourcePlan* plan) {
  const std::string lines = QuoteIdentifier("__thund_lines_" + tag);
  ARROW_RETURN_NOT_OK(session.Execute(
      "CREATE OR REPLACE TEMP TABLE " + lines +
      " AS WITH t AS (SELECT filename, string_split(content, chr(10)) AS ls FROM read_text(" +
      FileList(plan->files) +
      ")) SELECT filename AS file, unnest(generate_series(1, len(ls))) AS line, "
      "rtrim(unnest(ls), chr(13)) AS raw FROM t"));
  std::string checks = "CASE WHEN NOT json_valid(raw) THEN 'malformed JSON' "
                       "WHEN json_type(raw) <> 'OBJECT' THEN 'not a JSON object (found ' || "
                       "lower(json_type(raw)) || ')'";
  auto declared = DeclaredScalars(target);
  if (!declared.empty()) {
    std::string columns = "concat_ws('; '";
    for (const auto& [name, type] : declared) {
      const std::string path = JsonPath(name);
      columns += ", CASE WHEN json_type(raw, " + path + ") <> 'NULL' AND json_transform(" +
                 "json_extract(raw, " + path + "), " + QuoteString("\"" + type + "\"") +
                 ") IS NULL THEN " + QuoteString("column '" + name + "' (" + type + "): cannot convert ") +
                 " || json_extract(raw, " + path + ")::VARCHAR END";
    }
    checks += " ELSE nullif(" + columns + "), '')";
  }
  checks += " END";
  const std::string bad = QuoteIdentifier("__thund_badlines_" + tag);
  ARROW_RETURN_NOT_OK(session.Execute("CREATE OR REPLACE TEMP TABLE " + bad +
                                      " AS SELECT file, line, reason, raw FROM (SELECT *, " +
                                      checks + " AS reason FROM " + lines +
                                      " WHERE trim(raw) <> '') WHERE reason IS NOT NULL"));
  ARROW_ASSIGN_OR_RAISE(auto bad_rows,
                        session.Query("SELECT file, line, reason, raw FROM " + bad +
                                      " ORDER BY file, line"));
  auto combined = bad_rows->CombineChunksToBatch();
  ARROW_RETURN_NOT_OK(combined.status());
  auto batch = *combined;
  for (int64_t r = 0; r < batch->num_rows(); ++r) {
    auto file = std::static_pointer_cast<arrow::StringArray>(batch->column(0));
    auto line = std::static_pointer_cast<arrow::Int64Array>(batch->column(1));
    auto reason = std::static_pointer_cast<arrow::StringArray>(batch->column(2));
    auto raw = std::static_pointer_cast<arrow::StringArray>(batch->column(3));
    plan->json_bad_rows.push_back({std::string(file->GetView(r)), line->Value(r),
                                   std::string(reason->GetView(r)), std::string(raw->GetView(r))});
  }
  std::string json_options = options;
  if (!declared.empty() && target.schema.arrow->num_fields() == static_cast<int>(declared.size())) {
    std::string columns = ", columns = {";
    for (size_t i = 0; i < declared.size(); ++i) {
      columns += (i ? ", " : "") + QuoteString(declared[i].first) + ": " +
                 QuoteString(declared[i].second);
    }
    json_options += columns + "}";
  }
  std::vector<std::string> read_files = plan->files;
  if (!plan->json_bad_rows.empty() && plan->mode != BadRowsMode::kFail) {
    // read_json cannot skip lines: read a copy holding only the good ones.
    ARROW_ASSIGN_OR_RAISE(auto good, session.Query("SELECT raw FROM " + lines +
                                                   " l WHERE trim(raw) <> '' AND NOT EXISTS "
                                                   "(SELECT 1 FROM " + bad +
                                                   " b WHERE b.file = l.file AND b.line = l.line)"
                                                   " ORDER BY file, line"));
    std::string scratch =
        (std::filesystem::temp_directory_path() / ("thund-good-" + UniqueToken() + ".ndjson"))
            .string();
    plan->scratch_files.push_back(scratch);
    std::ofstream out(scratch, std::ios::binary);
    for (const auto& chunk : good->column(0)->chunks()) {
      auto s = std::static_pointer_cast<arrow::StringArray>(chunk);
      for (int64_t i = 0; i < s->length(); ++i) out << s->GetView(i) << '\n';
    }
    if (!out) return arrow::Status::IOError("could not write scratch file ", scratch);
    read_files = {scratch};
  }
  (void)source;
  plan->sql = "SELECT * FROM read_json(" + FileList(read_files) +
              ", format = 'newline_delimited'" + json_options + ")";
  ARROW_RETURN_NOT_OK(session.Execute("DROP TABLE IF EXISTS " + lines + "; DROP TABLE IF EXISTS " + bad));
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<std::vector<std::string>> ExpandSourcePath(DuckDbSession& session,
                                                         const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(std::string pattern, internal::LocalPathOf(path));
  std::error_code ec;
  if (!IsRemotePath(pattern) && std::filesystem::is_directory(pattern, ec)) {
    pattern = (pattern.back() == '/' ? pattern : pattern + "/") + "*";
  }
  ARROW_ASSIGN_OR_RAISE(auto files, ExpandGlob(session, pattern));
  std::vector<std::string> out;
  for (auto& f : files) {
    std::string base = std::filesystem::path(f).filename().string();
    if (base.empty() || base[0] == '_' || base[0] == '.') continue;
    if (std::filesystem::is_directory(f, ec)) continue;
    out.push_back(std::move(f));
  }
  return out;
}

arrow::Result<FileSourcePlan> PlanFileSource(DuckDbSession& session, const Flow& flow,
                                             const FileSource& source, const Dataset& target,
                                             const std::string& tag) {
  FileSourcePlan plan;
  plan.format = source.format ? Name(*source.format) : "";
  if (plan.format.empty()) {  // inferred from the path's extension
    const std::string ext = std::filesystem::path(source.path).extension().string();
    plan.format = ext == ".csv" || ext == ".tsv" ? "csv"
                  : ext == ".json" || ext == ".ndjson" || ext == ".jsonl" ? "json"
                  : ext == ".parquet" ? "parquet" : "";
    if (plan.format.empty()) {
      return arrow::Status::Invalid("flow '", flow.name, "': cannot tell the format of '",
                                    source.path, "' from its name; set format: parquet, csv or json");
    }
  }
  auto mode_it = source.options.find("bad_rows");
  auto mode = ParseBadRowsMode(mode_it == source.options.end() ? "" : mode_it->second);
  if (!mode.ok()) {
    return arrow::Status::Invalid("flow '", flow.name, "': ", mode.status().message());
  }
  plan.mode = *mode;
  ARROW_ASSIGN_OR_RAISE(plan.files, ExpandSourcePath(session, source.path));
  if (plan.files.empty()) {
    return arrow::Status::Invalid("flow '", flow.name, "': input path '", source.path,
                                  "' matches no file (relative paths are resolved from ",
                                  std::filesystem::current_path().string(),
                                  "); check the path or create the input first");
  }
  ARROW_ASSIGN_OR_RAISE(std::string options, ReaderOptions(flow, source));
  if (plan.format == "parquet") {
    plan.sql = "SELECT * FROM read_parquet(" + FileList(plan.files) + options + ")";
  } else if (plan.format == "csv") {
    plan.rejects_table = "__thund_rejects_" + tag;
    plan.rejects_scan = "__thund_rejects_scan_" + tag;
    auto declared = DeclaredScalars(target);
    if (!declared.empty()) {
      options += ", types = {";
      for (size_t i = 0; i < declared.size(); ++i) {
        options += (i ? ", " : "") + QuoteString(declared[i].first) + ": " +
                   QuoteString(declared[i].second);
      }
      options += "}";
    }
    plan.sql = "SELECT * FROM read_csv(" + FileList(plan.files) + options +
               ", store_rejects = true, rejects_table = " + QuoteString(plan.rejects_table) +
               ", rejects_scan = " + QuoteString(plan.rejects_scan) + ")";
  } else if (plan.format == "json") {
    ARROW_RETURN_NOT_OK(PlanJson(session, source, target, tag, options, &plan));
  } else {
    return arrow::Status::Invalid("flow '", flow.name, "': file format '", plan.format,
                                  "' is not supported; use parquet, csv or json");
  }
  return plan;
}

arrow::Result<std::vector<BadRow>> CollectBadRows(DuckDbSession& session,
                                                  const FileSourcePlan& plan) {
  if (plan.format == "json") return plan.json_bad_rows;
  if (plan.format != "csv") return std::vector<BadRow>();
  ARROW_ASSIGN_OR_RAISE(
      auto table,
      // DuckDB may report several errors for one line: keep the first column's.
      session.Query("SELECT s.file_path, e.line, arg_min(e.error_message, "
                    "coalesce(e.column_idx, 0)), arg_min(e.csv_line, coalesce(e.column_idx, 0)) "
                    "FROM " + QuoteIdentifier(plan.rejects_table) + " e JOIN " +
                    QuoteIdentifier(plan.rejects_scan) +
                    " s USING (scan_id, file_id) GROUP BY s.file_path, e.line "
                    "ORDER BY s.file_path, e.line"));
  ARROW_ASSIGN_OR_RAISE(auto batch, table->CombineChunksToBatch());
  std::vector<BadRow> out;
  for (int64_t r = 0; r < batch->num_rows(); ++r) {
    auto str = [&](int c) {
      auto a = std::static_pointer_cast<arrow::StringArray>(batch->column(c));
      return a->IsNull(r) ? std::string() : std::string(a->GetView(r));
    };
    auto line = batch->column(1)->GetScalar(r);
    int64_t line_no = 0;
    if (line.ok() && (*line)->is_valid) {
      auto as_int = (*line)->CastTo(arrow::int64());
      if (as_int.ok()) line_no = std::static_pointer_cast<arrow::Int64Scalar>(*as_int)->value;
    }
    out.push_back({str(0), line_no, str(2), str(3)});
  }
  return out;
}

void Cleanup(DuckDbSession& session, const FileSourcePlan& plan) {
  if (!plan.rejects_table.empty()) {
    (void)session.Execute("DROP TABLE IF EXISTS " + QuoteIdentifier(plan.rejects_table));
    (void)session.Execute("DROP TABLE IF EXISTS " + QuoteIdentifier(plan.rejects_scan));
  }
  for (const auto& f : plan.scratch_files) {
    std::error_code ec;
    std::filesystem::remove(f, ec);
  }
}

}  // namespace thund::engine::batch
