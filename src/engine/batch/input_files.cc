#include "engine/batch/input_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <arrow/array.h>

#include "engine/duckdb/sql_quote.h"
#include "ir/duckdb_parser.h"
#include "ir/file_uri.h"

namespace thund::engine::batch {
namespace {

using Json = nlohmann::ordered_json;

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

std::string Str(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const std::string* ConstantString(const Json& j) {
  if (!j.is_object() || Str(j, "class") != "CONSTANT") return nullptr;
  auto v = j.find("value");
  if (v == j.end() || !v->is_object()) return nullptr;
  auto is_null = v->find("is_null");
  if (is_null != v->end() && is_null->is_boolean() && is_null->get<bool>()) return nullptr;
  auto inner = v->find("value");
  if (inner == v->end() || !inner->is_string()) return nullptr;
  return &inner->get_ref<const std::string&>();
}

void Collect(const Json& j, std::vector<FileRead>* out) {
  if (j.is_array()) {
    for (const auto& v : j) Collect(v, out);
    return;
  }
  if (!j.is_object()) return;
  if (Str(j, "type") == "TABLE_FUNCTION" && !j.contains("class")) {
    auto fn = j.find("function");
    if (fn != j.end() && fn->is_object()) {
      std::string name = Str(*fn, "function_name");
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      auto children = fn->find("children");
      if (FileFunctions().count(name) && children != fn->end() && children->is_array() &&
          !children->empty()) {
        const Json& first = (*children)[0];
        size_t offset = fn->contains("query_location") && (*fn)["query_location"].is_number()
                            ? (*fn)["query_location"].get<size_t>()
                            : std::string::npos;
        if (const std::string* s = ConstantString(first)) {
          out->push_back({name, *s, offset});
        } else if (Str(first, "function_name") == "list_value" &&
                   first.contains("children")) {
          for (const auto& item : first["children"]) {
            if (const std::string* s = ConstantString(item)) out->push_back({name, *s, offset});
          }
        }
      }
    }
  }
  for (const auto& [key, value] : j.items()) Collect(value, out);
}

}  // namespace

arrow::Result<std::vector<FileRead>> FileReadsInSql(const std::string& duckdb_sql) {
  ARROW_ASSIGN_OR_RAISE(auto statements, internal::ParseSqlToJson(duckdb_sql));
  std::vector<FileRead> out;
  Collect(statements, &out);
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
