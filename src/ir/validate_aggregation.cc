// Does a parsed query aggregate on its row path? Used by the output-mode rule
// (Spark: an aggregation in Append mode needs a window and a watermark).
#include <map>
#include <nlohmann/json.hpp>

#include "ir/duckdb_parser.h"
#include "ir/validate_internal.h"

namespace thund::internal {
namespace {

using Json = nlohmann::ordered_json;

std::string TypeOf(const Json& j) {
  auto it = j.find("type");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool NonEmptyArray(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_array() && !it->empty();
}

// An aggregate call anywhere in an expression tree, not looking inside
// expression subqueries (they aggregate their own rows, not the query's).
bool ExpressionAggregates(const Json& j) {
  if (j.is_array()) {
    for (const auto& v : j) {
      if (ExpressionAggregates(v)) return true;
    }
    return false;
  }
  if (!j.is_object()) return false;
  auto cls = j.find("class");
  if (cls != j.end() && cls->is_string()) {
    const std::string& c = cls->get_ref<const std::string&>();
    if (c == "SUBQUERY") return false;
    if (c == "FUNCTION" || c == "AGGREGATE") {
      auto fn = j.find("function_name");
      if (fn != j.end() && fn->is_string() &&
          AggregateFunctionNames().count(Lower(fn->get<std::string>()))) {
        return true;
      }
    }
  }
  for (const auto& [key, value] : j.items()) {
    if (ExpressionAggregates(value)) return true;
  }
  return false;
}

class AggregationFinder {
 public:
  bool Node(const Json& node) {
    if (!node.is_object()) return false;
    // CTEs: remember which aggregate, visible while this node is walked.
    std::map<std::string, bool> saved = ctes_;
    auto map = node.find("cte_map");
    if (map != node.end() && map->is_object() && map->contains("map") && (*map)["map"].is_array()) {
      for (const auto& entry : (*map)["map"]) {
        if (!entry.is_object() || !entry.contains("key") || !entry["key"].is_string()) continue;
        bool agg = false;
        if (entry.contains("value") && entry["value"].is_object() &&
            entry["value"].contains("query") && entry["value"]["query"].is_object() &&
            entry["value"]["query"].contains("node")) {
          agg = Node(entry["value"]["query"]["node"]);
        }
        ctes_[Lower(entry["key"].get<std::string>())] = agg;
      }
    }
    bool result = NodeBody(node);
    ctes_ = std::move(saved);
    return result;
  }

 private:
  bool NodeBody(const Json& node) {
    const std::string type = TypeOf(node);
    if (type == "SELECT_NODE") {
      if (NonEmptyArray(node, "group_expressions") || NonEmptyArray(node, "group_sets")) {
        return true;
      }
      auto handling = node.find("aggregate_handling");
      if (handling != node.end() && handling->is_string() && *handling == "FORCE_AGGREGATES") {
        return true;
      }
      if (node.contains("select_list") && ExpressionAggregates(node["select_list"])) return true;
      if (node.contains("having") && ExpressionAggregates(node["having"])) return true;
      return node.contains("from_table") && TableRef(node["from_table"]);
    }
    if (type == "CTE_NODE") return node.contains("child") && Node(node["child"]);
    // SET_OPERATION_NODE, RECURSIVE_CTE_NODE: left/right (and n-ary children).
    for (const char* key : {"left", "right"}) {
      if (node.contains(key) && Node(node[key])) return true;
    }
    if (NonEmptyArray(node, "children")) {
      for (const auto& child : node["children"]) {
        if (Node(child)) return true;
      }
    }
    return false;
  }

  // FROM clause: joins, derived tables, PIVOT, and CTE references.
  bool TableRef(const Json& ref) {
    if (!ref.is_object()) return false;
    const std::string type = TypeOf(ref);
    if (type == "JOIN") {
      return (ref.contains("left") && TableRef(ref["left"])) ||
             (ref.contains("right") && TableRef(ref["right"]));
    }
    if (type == "SUBQUERY") {
      return ref.contains("subquery") && ref["subquery"].is_object() &&
             ref["subquery"].contains("node") && Node(ref["subquery"]["node"]);
    }
    if (type == "PIVOT") {  // PIVOT aggregates; UNPIVOT (no aggregates) only reshapes
      return NonEmptyArray(ref, "aggregates") ||
             (ref.contains("source") && TableRef(ref["source"]));
    }
    if (type == "BASE_TABLE") {
      auto schema = ref.find("schema_name");
      auto table = ref.find("table_name");
      if (schema != ref.end() && schema->is_string() && !schema->get<std::string>().empty()) {
        return false;
      }
      if (table == ref.end() || !table->is_string()) return false;
      auto cte = ctes_.find(Lower(table->get<std::string>()));
      return cte != ctes_.end() && cte->second;
    }
    return false;
  }

  std::map<std::string, bool> ctes_;
};

}  // namespace

bool HasAggregation(const nlohmann::ordered_json& query_node) {
  return AggregationFinder().Node(query_node);
}

bool ExpressionHasAggregate(const nlohmann::ordered_json& expression) {
  return ExpressionAggregates(expression);
}

}  // namespace thund::internal
