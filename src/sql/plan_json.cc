#include "sql/plan_json.h"

#include "ir/validate_internal.h"
#include "thund/json_text.h"


namespace thund::sql::plan_json {

std::string Str(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Json* Field(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

bool NonEmptyArray(const Json& j, const char* key) {
  const Json* f = Field(j, key);
  return f && f->is_array() && !f->empty();
}

const std::map<std::string, std::string>& OperatorNames() {
  static const std::map<std::string, std::string> kNames = {
      {"COMPARE_EQUAL", "="},
      {"COMPARE_NOTEQUAL", "<>"},
      {"COMPARE_LESSTHAN", "<"},
      {"COMPARE_GREATERTHAN", ">"},
      {"COMPARE_LESSTHANOREQUALTO", "<="},
      {"COMPARE_GREATERTHANOREQUALTO", ">="},
      {"COMPARE_DISTINCT_FROM", "is distinct from"},
      {"COMPARE_NOT_DISTINCT_FROM", "is not distinct from"},
      {"COMPARE_IN", "in"},
      {"COMPARE_NOT_IN", "not in"},
      {"COMPARE_BETWEEN", "between"},
      {"COMPARE_NOT_BETWEEN", "not between"},
      {"CONJUNCTION_AND", "and"},
      {"CONJUNCTION_OR", "or"},
      {"OPERATOR_NOT", "not"},
      {"OPERATOR_IS_NULL", "is null"},
      {"OPERATOR_IS_NOT_NULL", "is not null"},
      {"OPERATOR_COALESCE", "coalesce"},
      {"ARRAY_EXTRACT", "array_extract"},
      {"ARRAY_SLICE", "array_slice"},
      {"STRUCT_EXTRACT", "struct_extract"},
      {"ARRAY_CONSTRUCTOR", "array"},
  };
  return kNames;
}

// A statement document holding one query node, in json_serialize_sql's shape.
std::string StatementDocument(const Json& query_node) {
  Json doc;
  doc["error"] = false;
  Json stmt;
  stmt["node"] = query_node;
  stmt["named_param_map"] = Json::array();
  doc["statements"] = Json::array({stmt});
  return JsonText(doc);
}

Json EmptyFrom() {
  Json j;
  j["type"] = "EMPTY";
  j["alias"] = "";
  j["sample"] = nullptr;
  j["query_location"] = static_cast<uint64_t>(-1);
  return j;
}

Json StarExpr() {
  Json j;
  j["class"] = "STAR";
  j["type"] = "STAR";
  j["alias"] = "";
  j["query_location"] = static_cast<uint64_t>(-1);
  j["relation_name"] = "";
  j["exclude_list"] = Json::array();
  j["replace_list"] = Json::array();
  j["rename_list"] = Json::array();
  j["columns"] = false;
  j["expr"] = nullptr;
  j["unpacked"] = false;
  return j;
}

Json BareSelect(const Json& from) {
  Json j;
  j["type"] = "SELECT_NODE";
  j["modifiers"] = Json::array();
  j["cte_map"] = Json{{"map", Json::array()}};
  j["select_list"] = Json::array({StarExpr()});
  j["from_table"] = from;
  j["where_clause"] = nullptr;
  j["group_expressions"] = Json::array();
  j["group_sets"] = Json::array();
  j["aggregate_handling"] = "STANDARD_HANDLING";
  j["having"] = nullptr;
  j["sample"] = nullptr;
  j["qualify"] = nullptr;
  return j;
}

// A window column among the group keys (the dialect's forms: a "window" /
// "session_window" column, a {'start', 'end'} struct for a tumbling
// window(), window_start / window_end from the table functions).
Json Unaliased(const Json& e) {
  Json c = e;
  if (c.is_object() && c.contains("alias")) c["alias"] = "";
  return c;
}

Json ColumnRef(const std::vector<std::string>& names, const std::string& alias) {
  Json j;
  j["class"] = "COLUMN_REF";
  j["type"] = "COLUMN_REF";
  j["alias"] = alias;
  j["query_location"] = static_cast<uint64_t>(-1);
  j["column_names"] = names;
  return j;
}

std::vector<std::string> ColumnNames(const Json& ref) {
  std::vector<std::string> out;
  if (Str(ref, "class") != "COLUMN_REF") return out;
  if (const Json* n = Field(ref, "column_names"); n && n->is_array()) {
    for (const auto& s : *n) out.push_back(s.is_string() ? s.get<std::string>() : "");
  }
  return out;
}

std::string LastColumnName(const Json& ref) {
  const auto names = ColumnNames(ref);
  return names.empty() ? "" : internal::Lower(names.back());
}

bool IsWindowKey(const Json& k) {
  const std::string cls = Str(k, "class");
  if (cls == "COLUMN_REF") {
    const std::string n = LastColumnName(k);
    return n == "window" || n == "session_window";
  }
  if (cls == "FUNCTION" && Str(k, "function_name") == "struct_pack") {
    const Json* children = Field(k, "children");
    if (!children || children->size() != 2) return false;
    return Str((*children)[0], "alias") == "start" && Str((*children)[1], "alias") == "end";
  }
  return false;
}


Json CountStar() {
  Json j;
  j["class"] = "FUNCTION";
  j["type"] = "FUNCTION";
  j["alias"] = "";
  j["query_location"] = static_cast<uint64_t>(-1);
  j["function_name"] = "count_star";
  j["schema"] = "";
  j["children"] = Json::array();
  j["filter"] = nullptr;
  j["order_bys"] = Json{{"type", "ORDER_MODIFIER"}, {"orders", Json::array()}};
  j["distinct"] = false;
  j["is_operator"] = false;
  j["export_state"] = false;
  j["catalog"] = "";
  return j;
}

void ReplaceColumn(Json* j, const std::string& placeholder, const Json& with) {
  if (j->is_array()) {
    for (auto& v : *j) ReplaceColumn(&v, placeholder, with);
    return;
  }
  if (!j->is_object()) return;
  if (Str(*j, "class") == "COLUMN_REF" && j->contains("column_names") &&
      (*j)["column_names"].size() == 1 && (*j)["column_names"][0] == placeholder) {
    *j = with;
    return;
  }
  for (auto& [k, v] : j->items()) ReplaceColumn(&v, placeholder, with);
}

}  // namespace thund::sql::plan_json
