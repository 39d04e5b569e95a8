// UnknownSqlFunctions: which functions of a (translated) flow body DuckDB
// does not know, from DuckDB's own parse tree and function catalog.
#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_set>

#include <duckdb.h>
#include <nlohmann/json.hpp>

#include "ir/duckdb_parser.h"
#include "ir/sql_lexer.h"
#include "thund/sql_dialect.h"

namespace thund {
namespace {

// Functions the parser emits that the catalog lists under another name or
// not at all (operators and special forms).
constexpr const char* kBuiltins[] = {
    "count_star", "row",     "try", "struct_pack", "list_value",  "array_value", "unnest",
    "unlist",     "columns", "*",   "grouping",    "grouping_id", "coalesce"};

// The lower-case names in DuckDB's function catalog, read once from a
// private in-memory database (no external access, no extension loading).
arrow::Result<const std::unordered_set<std::string>*> Catalog() {
  static std::mutex mu;
  static std::unique_ptr<std::unordered_set<std::string>> names;
  static std::string error;
  std::lock_guard<std::mutex> lock(mu);
  if (names) return names.get();
  if (!error.empty()) return arrow::Status::IOError(error);
  duckdb_config config = nullptr;
  duckdb_database db = nullptr;
  duckdb_connection con = nullptr;
  duckdb_result result;
  bool have_result = false;
  auto cleanup = [&] {
    if (have_result) duckdb_destroy_result(&result);
    if (con) duckdb_disconnect(&con);
    if (db) duckdb_close(&db);
    if (config) duckdb_destroy_config(&config);
  };
  if (duckdb_create_config(&config) != DuckDBSuccess) {
    error = "DuckDB: cannot create a configuration";
    cleanup();
    return arrow::Status::IOError(error);
  }
  duckdb_set_config(config, "threads", "1");
  duckdb_set_config(config, "enable_external_access", "false");
  duckdb_set_config(config, "autoload_known_extensions", "false");
  char* err = nullptr;
  if (duckdb_open_ext(nullptr, &db, config, &err) != DuckDBSuccess ||
      duckdb_connect(db, &con) != DuckDBSuccess) {
    error = std::string("DuckDB: cannot open the function catalog: ") + (err ? err : "");
    if (err) duckdb_free(err);
    cleanup();
    return arrow::Status::IOError(error);
  }
  if (duckdb_query(con, "SELECT DISTINCT lower(function_name) FROM duckdb_functions()", &result) !=
      DuckDBSuccess) {
    have_result = true;
    error = std::string("DuckDB: ") +
            (duckdb_result_error(&result) ? duckdb_result_error(&result) : "query failed");
    cleanup();
    return arrow::Status::IOError(error);
  }
  have_result = true;
  auto set = std::make_unique<std::unordered_set<std::string>>();
  const idx_t rows = duckdb_row_count(&result);
  for (idx_t r = 0; r < rows; ++r) {
    char* v = duckdb_value_varchar(&result, 0, r);
    if (v) {
      set->insert(v);
      duckdb_free(v);
    }
  }
  for (const char* b : kBuiltins) set->insert(b);
  cleanup();
  names = std::move(set);
  return names.get();
}

void CollectFunctions(const nlohmann::ordered_json& j, std::vector<std::string>* out) {
  if (j.is_array()) {
    for (const auto& v : j) CollectFunctions(v, out);
    return;
  }
  if (!j.is_object()) return;
  auto cls = j.find("class");
  if (cls != j.end() && cls->is_string() && *cls == "FUNCTION") {
    auto name = j.find("function_name");
    auto schema = j.find("schema");
    const bool qualified =
        schema != j.end() && schema->is_string() && !schema->get<std::string>().empty();
    if (name != j.end() && name->is_string() && !qualified) {
      std::string n = sql::ToLower(name->get<std::string>());
      if (std::find(out->begin(), out->end(), n) == out->end()) out->push_back(n);
    }
  }
  for (const auto& [key, value] : j.items()) CollectFunctions(value, out);
}

}  // namespace

arrow::Result<std::vector<std::string>> UnknownSqlFunctions(std::string_view spark_sql) {
  ARROW_ASSIGN_OR_RAISE(std::string duck, SparkToDuckDb(spark_sql));
  ARROW_ASSIGN_OR_RAISE(auto statements, internal::ParseSqlToJson(duck));
  std::vector<std::string> called;
  CollectFunctions(statements, &called);
  ARROW_ASSIGN_OR_RAISE(const auto* catalog, Catalog());
  std::vector<std::string> unknown;
  for (const auto& n : called) {
    if (!catalog->count(n)) unknown.push_back(n);
  }
  return unknown;
}

}  // namespace thund
