// Input inference: which relations a flow's SQL reads, from DuckDB's parse tree.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "ir/duckdb_parser.h"
#include "ir/validate_internal.h"
#include "thund/sql_dialect.h"
#include "thund/validate.h"

namespace thund {
namespace internal {
namespace {

using Json = nlohmann::ordered_json;

const std::string* StringField(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

uint64_t LocationOf(const Json& j) {
  auto it = j.find("query_location");
  if (it != j.end() && it->is_number_unsigned()) return it->get<uint64_t>();
  return std::numeric_limits<uint64_t>::max();
}

// Walks a json_serialize_sql tree collecting relation references. `scope_`
// holds the lower-cased CTE names visible at the current point: a query node's
// CTEs are visible in its body and in the CTEs defined after them; a recursive
// CTE sees itself. Leaving a node drops its CTEs again, so a CTE inside a
// subquery never hides a dataset referenced outside it.
class RefCollector {
 public:
  std::vector<TableRef> refs;

  void Walk(const Json& j) {
    if (j.is_array()) {
      for (const auto& v : j) Walk(v);
      return;
    }
    if (!j.is_object()) return;
    const std::string* type = StringField(j, "type");
    const bool is_expression = j.contains("class");
    if (j.contains("cte_map")) {
      WalkQueryNode(j, type ? *type : std::string());
      return;
    }
    if (type && !is_expression && *type == "BASE_TABLE") {
      AddRef(j);
      return;
    }
    if (type && !is_expression && *type == "TABLE_FUNCTION" && WalkTableFunction(j)) return;
    for (const auto& [key, value] : j.items()) Walk(value);
  }

 private:
  void WalkQueryNode(const Json& node, const std::string& type) {
    const size_t mark = scope_.size();
    const Json& map = node["cte_map"];
    if (map.is_object() && map.contains("map") && map["map"].is_array()) {
      for (const auto& entry : map["map"]) {
        if (!entry.is_object()) continue;
        if (entry.contains("value") && entry["value"].is_object() &&
            entry["value"].contains("query")) {
          Walk(entry["value"]["query"]);
        }
        if (const std::string* key = StringField(entry, "key")) scope_.push_back(Lower(*key));
      }
    }
    if (type == "RECURSIVE_CTE_NODE") {
      if (const std::string* name = StringField(node, "cte_name")) scope_.push_back(Lower(*name));
    }
    for (const auto& [key, value] : node.items()) {
      if (key == "cte_map") continue;
      // A materialized CTE's body is repeated under "query"; it was walked
      // above with the right scope (without its own name).
      if (type == "CTE_NODE" && key == "query") continue;
      Walk(value);
    }
    scope_.resize(mark);
  }

  bool InScope(const std::string& name) const {
    return std::find(scope_.begin(), scope_.end(), Lower(name)) != scope_.end();
  }

  void Add(std::vector<std::string> parts, uint64_t position) {
    parts.erase(std::remove(parts.begin(), parts.end(), std::string()), parts.end());
    if (parts.empty()) return;
    if (parts.size() == 1 && InScope(parts[0])) return;  // a CTE, not a dataset
    refs.push_back(TableRef{std::move(parts), position});
  }

  void AddRef(const Json& j) {
    std::vector<std::string> parts;
    for (const char* key : {"catalog_name", "schema_name", "table_name"}) {
      const std::string* s = StringField(j, key);
      parts.push_back(s ? *s : std::string());
    }
    Add(std::move(parts), LocationOf(j));
  }

  // `stream(x)` (Spark's FROM STREAM(x)) reads x. Returns true when handled;
  // other table functions fall through to the generic walk, which still finds
  // subqueries among their arguments.
  bool WalkTableFunction(const Json& j) {
    auto fn = j.find("function");
    if (fn == j.end() || !fn->is_object()) return false;
    const std::string* name = StringField(*fn, "function_name");
    if (!name || Lower(*name) != "stream") return false;
    auto children = fn->find("children");
    if (children == fn->end() || !children->is_array() || children->size() != 1) return false;
    const Json& arg = (*children)[0];
    const std::string* cls = StringField(arg, "class");
    if (!cls || *cls != "COLUMN_REF" || !arg.contains("column_names") ||
        !arg["column_names"].is_array()) {
      return false;
    }
    std::vector<std::string> parts;
    for (const auto& part : arg["column_names"]) {
      if (!part.is_string()) return false;
      parts.push_back(part.get<std::string>());
    }
    Add(std::move(parts), LocationOf(j));
    return true;
  }

  std::vector<std::string> scope_;
};

}  // namespace

std::string TableRef::Joined() const { return JoinNames(parts, "."); }

arrow::Result<SqlFacts> AnalyzeSql(const std::string& sql) {
  ARROW_ASSIGN_OR_RAISE(std::string duck_sql, SparkToDuckDb(sql));
  ARROW_ASSIGN_OR_RAISE(nlohmann::ordered_json statements, ParseSqlToJson(duck_sql));
  if (statements.empty()) return arrow::Status::Invalid("the query is empty");
  if (statements.size() > 1) {
    return arrow::Status::Invalid("expected one SELECT query, found ", statements.size(),
                                  " statements");
  }
  const auto& stmt = statements[0];
  if (!stmt.is_object() || !stmt.contains("node")) {
    return arrow::Status::UnknownError("DuckDB parser: statement without a query node");
  }
  RefCollector collector;
  collector.Walk(stmt);
  std::stable_sort(collector.refs.begin(), collector.refs.end(),
                   [](const TableRef& a, const TableRef& b) { return a.position < b.position; });
  SqlFacts facts;
  std::unordered_set<std::string> seen;
  for (auto& ref : collector.refs) {
    if (seen.insert(Lower(ref.Joined())).second) facts.inputs.push_back(std::move(ref));
  }
  facts.aggregates = HasAggregation(stmt["node"]);
  return facts;
}

ResolvedInput ResolveInput(const Pipeline& p, const TableRef& ref) {
  std::vector<std::string> parts = ref.parts;
  auto same = [](const std::string& a, const std::string& b) { return Lower(a) == Lower(b); };
  if (parts.size() == 2 &&
      (same(parts[0], "live") || (!p.database.empty() && same(parts[0], p.database)))) {
    parts.erase(parts.begin());
  } else if (parts.size() == 3 && !p.database.empty() && same(parts[1], p.database) &&
             (p.catalog.empty() || same(parts[0], p.catalog))) {
    parts.erase(parts.begin(), parts.begin() + 2);
  }
  if (parts.size() != 1) return {JoinNames(parts, "."), true};
  const std::string& name = parts[0];
  if (p.FindDataset(name)) return {name, false};
  const Dataset* match = nullptr;
  for (const auto& d : p.datasets) {
    if (same(d.name, name)) {
      if (match && match->name != d.name) return {name, false};  // ambiguous
      match = &d;
    }
  }
  return {match ? match->name : name, false};
}

}  // namespace internal

arrow::Result<std::vector<std::string>> InferSqlInputs(const std::string& sql) {
  ARROW_ASSIGN_OR_RAISE(internal::SqlFacts facts, internal::AnalyzeSql(sql));
  std::vector<std::string> out;
  out.reserve(facts.inputs.size());
  for (const auto& ref : facts.inputs) out.push_back(ref.Joined());
  return out;
}

arrow::Result<std::vector<std::string>> FlowInputs(const Pipeline& p, const Flow& flow) {
  if (flow.sql.empty()) return std::vector<std::string>{};
  ARROW_ASSIGN_OR_RAISE(internal::SqlFacts facts, internal::AnalyzeSql(flow.sql));
  std::vector<std::string> out;
  for (const auto& ref : facts.inputs) {
    std::string name = internal::ResolveInput(p, ref).name;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

}  // namespace thund
