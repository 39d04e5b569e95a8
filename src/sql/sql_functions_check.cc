// UnknownSqlFunctions: which functions of a (translated) flow body DuckDB
// does not know, from the flow's logical plan and DuckDB's function catalog.
#include <algorithm>
#include <unordered_set>

#include "sql/duckdb_parser.h"
#include "sql/sql_analysis.h"
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

void CollectFunctions(const plan::Expr& e, std::vector<std::string>* out) {
  if ((e.kind == plan::ExprKind::kFunction || e.kind == plan::ExprKind::kAggregate) &&
      e.qualifier.empty()) {
    if (std::find(out->begin(), out->end(), e.name) == out->end()) out->push_back(e.name);
  }
  for (const auto& a : e.args) CollectFunctions(a, out);
  if (e.filter) CollectFunctions(*e.filter, out);
}

}  // namespace

arrow::Result<std::vector<std::string>> UnknownSqlFunctions(std::string_view spark_sql) {
  ARROW_ASSIGN_OR_RAISE(plan::PlanPtr root, sql::PlanQuery(std::string(spark_sql)));
  std::vector<std::string> called;
  for (const plan::PlanNode* n : plan::Nodes(*root)) {
    for (const auto* list : {&n->exprs, &n->group_keys, &n->aggregates}) {
      for (const auto& e : *list) CollectFunctions(e, &called);
    }
    if (n->predicate) CollectFunctions(*n->predicate, &called);
    if (n->join.residual) CollectFunctions(*n->join.residual, &called);
    for (const auto& k : n->order) CollectFunctions(k.expr, &called);
    for (const auto& row : n->rows) {
      for (const auto& e : row) CollectFunctions(e, &called);
    }
  }
  ARROW_ASSIGN_OR_RAISE(const auto* catalog, Catalog());
  std::vector<std::string> unknown;
  for (const auto& n : called) {
    if (!catalog->count(n)) unknown.push_back(n);
  }
  return unknown;
}

}  // namespace thund
