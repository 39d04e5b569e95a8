// UpdateKeyColumns (output_mode.h): which output columns of an aggregating
// query are its key, read from DuckDB's parse tree (json_serialize_sql).
#include <map>
#include <nlohmann/json.hpp>

#include "engine/stream/output_mode.h"
#include "ir/duckdb_parser.h"
#include "ir/validate_internal.h"

namespace thund::engine::stream {
namespace {

using Json = nlohmann::ordered_json;
using internal::Lower;

struct OutputColumn {
  std::string name;  // may be empty for an unnamed aggregate
  bool key = false;
};

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool NonEmpty(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && !it->is_null() && !(it->is_array() && it->empty()) &&
         !(it->is_object() && it->empty());
}

// The node aggregates by itself: GROUP BY, grouping sets, GROUP BY ALL, or an
// aggregate in its select list or HAVING (not counting its FROM clause).
bool SelfAggregates(const Json& select) {
  if (NonEmpty(select, "group_expressions") || NonEmpty(select, "group_sets")) return true;
  if (Str(select, "aggregate_handling") == "FORCE_AGGREGATES") return true;
  if (select.contains("select_list") && internal::ExpressionHasAggregate(select["select_list"])) {
    return true;
  }
  return select.contains("having") && internal::ExpressionHasAggregate(select["having"]);
}

// Last name part of every column reference in an expression (not inside
// expression subqueries).
void ColumnRefs(const Json& j, std::vector<std::string>* out) {
  if (j.is_array()) {
    for (const auto& v : j) ColumnRefs(v, out);
    return;
  }
  if (!j.is_object()) return;
  const std::string cls = Str(j, "class");
  if (cls == "SUBQUERY") return;
  if (cls == "COLUMN_REF") {
    auto names = j.find("column_names");
    if (names != j.end() && names->is_array() && !names->empty() && names->back().is_string()) {
      out->push_back(names->back().get<std::string>());
    }
    return;
  }
  for (const auto& [key, value] : j.items()) ColumnRefs(value, out);
}

arrow::Status Unsupported(const std::string& what) {
  return arrow::Status::Invalid(
      "Update mode cannot tell the key columns of this query: ", what,
      ". Compute the aggregation in the outermost SELECT (or a subquery/CTE it selects from "
      "directly), or use Complete mode");
}

class KeyFinder {
 public:
  arrow::Result<std::vector<OutputColumn>> Node(const Json& node) {
    std::map<std::string, const Json*> saved = ctes_;
    auto map = node.find("cte_map");
    if (map != node.end() && map->is_object() && map->contains("map") && (*map)["map"].is_array()) {
      for (const auto& entry : (*map)["map"]) {
        if (!entry.is_object() || !entry.contains("key") || !entry["key"].is_string()) continue;
        if (!entry.contains("value")) continue;
        // (A pointer into `node`, which outlives this walk.)
        const Json* query = QueryNode(entry["value"]);
        if (query) ctes_[Lower(entry["key"].get<std::string>())] = query;
      }
    }
    auto result = NodeBody(node);
    ctes_ = std::move(saved);
    return result;
  }

 private:
  // {"query": {"node": ...}} -> the node.
  static const Json* QueryNode(const Json& holder) {
    if (!holder.is_object() || !holder.contains("query")) return nullptr;
    const Json& q = holder["query"];
    if (!q.is_object() || !q.contains("node") || !q["node"].is_object()) return nullptr;
    return &q["node"];
  }

  arrow::Result<std::vector<OutputColumn>> NodeBody(const Json& node) {
    const std::string type = Str(node, "type");
    if (type == "CTE_NODE") {
      std::map<std::string, const Json*> saved = ctes_;
      const Json* query = QueryNode(node);
      if (query) ctes_[Lower(Str(node, "ctename"))] = query;
      if (!node.contains("child")) return Unsupported("an empty WITH");
      auto result = Node(node["child"]);
      ctes_ = std::move(saved);
      return result;
    }
    if (type == "SET_OPERATION_NODE") {
      const Json* first = nullptr;
      if (node.contains("left")) first = &node["left"];
      if (!first && NonEmpty(node, "children")) first = &node["children"][0];
      if (!first || !internal::HasAggregation(*first)) {
        return Unsupported("the aggregation is not in the first branch of a set operation");
      }
      return Node(*first);
    }
    if (type != "SELECT_NODE") return Unsupported("an unexpected " + type);
    if (SelfAggregates(node)) return OwnColumns(node);
    const Json* inner = node.contains("from_table") ? FromNode(node["from_table"]) : nullptr;
    if (!inner || !internal::HasAggregation(*inner)) {
      return Unsupported("the aggregation is inside a join or another nested relation");
    }
    ARROW_ASSIGN_OR_RAISE(auto inner_columns, Node(*inner));
    return Projected(node, inner_columns);
  }

  // The query node a FROM clause reads when it is one subquery or CTE.
  const Json* FromNode(const Json& from) const {
    if (!from.is_object()) return nullptr;
    const std::string type = Str(from, "type");
    if (type == "SUBQUERY" && from.contains("subquery")) return QueryNodeOf(from["subquery"]);
    if (type == "BASE_TABLE" && Str(from, "schema_name").empty()) {
      auto it = ctes_.find(Lower(Str(from, "table_name")));
      if (it != ctes_.end()) return it->second;
    }
    return nullptr;
  }
  static const Json* QueryNodeOf(const Json& statement) {
    if (!statement.is_object() || !statement.contains("node")) return nullptr;
    return &statement["node"];
  }

  static arrow::Result<std::string> Name(const Json& item) {
    std::string alias = Str(item, "alias");
    if (!alias.empty()) return alias;
    if (Str(item, "class") == "COLUMN_REF") {
      std::vector<std::string> refs;
      ColumnRefs(item, &refs);
      if (refs.size() == 1) return refs[0];
    }
    return arrow::Status::Invalid(
        "Update mode keys on the non-aggregate output columns, and one of them is an "
        "expression without a name (at offset ",
        item.contains("query_location") ? item["query_location"].dump() : std::string("?"),
        "): give it an alias (AS name)");
  }

  // An output column: a key needs a name (Name); an aggregate keeps its alias.
  static arrow::Result<OutputColumn> Column(const Json& item, bool key) {
    OutputColumn c;
    c.key = key;
    if (key) {
      ARROW_ASSIGN_OR_RAISE(c.name, Name(item));
    } else {
      c.name = Str(item, "alias");
    }
    return c;
  }

  static arrow::Status NoStar() {
    return Unsupported("SELECT * over an aggregation in the same SELECT");
  }

  // A SELECT that aggregates itself: non-aggregate items are keys.
  static arrow::Result<std::vector<OutputColumn>> OwnColumns(const Json& select) {
    std::vector<OutputColumn> out;
    for (const auto& item : select["select_list"]) {
      if (Str(item, "class") == "STAR") return NoStar();
      ARROW_ASSIGN_OR_RAISE(auto c, Column(item, !internal::ExpressionHasAggregate(item)));
      out.push_back(std::move(c));
    }
    return out;
  }

  // A projection over an aggregating relation: an item is a key unless it
  // reads one of the relation's aggregate columns.
  static arrow::Result<std::vector<OutputColumn>> Projected(
      const Json& select, const std::vector<OutputColumn>& inner) {
    std::map<std::string, bool> inner_key;
    for (const auto& c : inner) {
      if (!c.name.empty()) inner_key[Lower(c.name)] = c.key;
    }
    std::vector<OutputColumn> out;
    for (const auto& item : select["select_list"]) {
      if (Str(item, "class") == "STAR") {
        const bool columns =
            item.contains("columns") && item["columns"].is_boolean() && item["columns"].get<bool>();
        if (columns || NonEmpty(item, "exclude_list") || NonEmpty(item, "replace_list") ||
            NonEmpty(item, "qualified_exclude_list") || NonEmpty(item, "rename_list") ||
            NonEmpty(item, "expr")) {
          return Unsupported("a SELECT * with EXCLUDE/REPLACE/COLUMNS over an aggregation");
        }
        out.insert(out.end(), inner.begin(), inner.end());
        continue;
      }
      std::vector<std::string> refs;
      ColumnRefs(item, &refs);
      bool key = true;
      for (const auto& r : refs) {
        auto it = inner_key.find(Lower(r));
        // An unnamed inner aggregate cannot be referenced by name; a ref
        // not found inside is a struct field or outer name: not an aggregate.
        if (it != inner_key.end() && !it->second) key = false;
      }
      ARROW_ASSIGN_OR_RAISE(auto c, Column(item, key));
      out.push_back(std::move(c));
    }
    return out;
  }

  std::map<std::string, const Json*> ctes_;
};

}  // namespace

arrow::Result<std::vector<std::string>> UpdateKeyColumns(const std::string& duckdb_select_sql) {
  ARROW_ASSIGN_OR_RAISE(Json statements, internal::ParseSqlToJson(duckdb_select_sql));
  if (statements.size() != 1 || !statements[0].is_object() || !statements[0].contains("node")) {
    return arrow::Status::Invalid("Update mode needs exactly one SELECT query, got ",
                                  statements.size(), " statements");
  }
  const Json& node = statements[0]["node"];
  if (!internal::HasAggregation(node)) return std::vector<std::string>{};
  ARROW_ASSIGN_OR_RAISE(auto columns, KeyFinder().Node(node));
  std::vector<std::string> keys;
  for (const auto& c : columns) {
    if (c.key) keys.push_back(c.name);
  }
  return keys;
}

}  // namespace thund::engine::stream
