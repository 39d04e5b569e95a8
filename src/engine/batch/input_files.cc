#include "engine/batch/input_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <arrow/array.h>

#include "engine/duckdb/sql_quote.h"
#include "ir/file_uri.h"
#include "sql/sql_analysis.h"

namespace thund::engine::batch {
namespace {

const std::set<std::string>& FileFunctions() {
  static const std::set<std::string> kNames = {
      "read_csv",       "read_csv_auto",     "sniff_csv",        "read_parquet",
      "parquet_scan",   "read_json",         "read_json_auto",   "read_ndjson",
      "read_ndjson_auto", "read_json_objects", "read_ndjson_objects", "read_text",
      "read_blob",      "parquet_metadata",  "parquet_schema"};
  return kNames;
}

// The extension DuckDB's readers look for when given a directory: they read
// every file below it (recursively) named *.csv, *.json or *.parquet.
std::string DirectoryExtension(const std::string& function) {
  if (function.find("csv") != std::string::npos) return "csv";
  if (function.find("json") != std::string::npos) return "json";
  if (function == "read_parquet" || function == "parquet_scan") return "parquet";
  return "";
}

}  // namespace

arrow::Result<std::vector<FileRead>> FileReadsInSql(const std::string& duckdb_sql) {
  ARROW_ASSIGN_OR_RAISE(plan::PlanPtr root, sql::PlanQuery(duckdb_sql));
  std::vector<FileRead> out;
  for (const plan::PlanNode* n : plan::Nodes(*root)) {
    if (n->kind != plan::NodeKind::kScan || n->scan.kind != plan::ScanKind::kTableFunction ||
        n->scan.name.empty() || !FileFunctions().count(n->scan.name[0])) {
      continue;
    }
    for (const auto& f : n->scan.files) out.push_back({n->scan.name[0], f, std::string::npos});
  }
  return out;
}

bool IsRemotePath(const std::string& pattern) {
  return !internal::IsFileUri(pattern) && pattern.find("://") != std::string::npos;
}

arrow::Result<std::vector<std::string>> ExpandGlob(DuckDbSession& session,
                                                   const std::string& pattern) {
  ARROW_ASSIGN_OR_RAISE(std::string local, internal::LocalPathOf(pattern));
  ARROW_ASSIGN_OR_RAISE(auto table,
                        session.Query("SELECT file FROM glob(" + QuoteString(local) + ")"));
  std::vector<std::string> files;
  for (const auto& chunk : table->column(0)->chunks()) {
    auto strings = std::static_pointer_cast<arrow::StringArray>(chunk);
    for (int64_t i = 0; i < strings->length(); ++i) {
      std::error_code ec;
      auto abs = std::filesystem::absolute(std::string(strings->GetView(i)), ec);
      files.push_back(ec ? std::string(strings->GetView(i)) : abs.lexically_normal().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

arrow::Result<std::vector<std::string>> ExpandFileRead(DuckDbSession& session,
                                                       const FileRead& read) {
  ARROW_ASSIGN_OR_RAISE(std::string local, internal::LocalPathOf(read.pattern));
  std::error_code ec;
  const std::string ext = DirectoryExtension(read.function);
  if (!ext.empty() && std::filesystem::is_directory(local, ec)) {
    while (local.size() > 1 && local.back() == '/') local.pop_back();
    return ExpandGlob(session, local + "/**/*." + ext);
  }
  return ExpandGlob(session, local);
}

arrow::Result<std::string> FileStamp(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return arrow::Status::IOError("cannot stat input file ", path);
  }
  int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return "size=" + std::to_string(st.st_size) + " mtime=" + std::to_string(mtime_ns);
}

}  // namespace thund::engine::batch
