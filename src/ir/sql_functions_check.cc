// UnknownSqlFunctions: which functions of a (translated) flow body DuckDB
// does not know, from DuckDB's own parse tree and function catalog.
#include <algorithm>
#include <unordered_set>

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

// The lower-case names in DuckDB's function catalog (the parser's private
// in-memory database: no external access, no extension loading) plus the
// builtins above. Computed once.
arrow::Result<const std::unordered_set<std::string>*> Catalog() {
  static const arrow::Result<std::unordered_set<std::string>> names =
      []() -> arrow::Result<std::unordered_set<std::string>> {
    ARROW_ASSIGN_OR_RAISE(const auto* functions, internal::FunctionNames());
    std::unordered_set<std::string> out = *functions;
    for (const char* b : kBuiltins) out.insert(b);
    return out;
  }();
  if (!names.ok()) return names.status();
  return &*names;
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
