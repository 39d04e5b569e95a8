// Rewrites of a query's parse tree, rendered back to DuckDB SQL.
#include "sql/duckdb_parser.h"
#include "sql/duckdb_types.h"
#include "ir/validate_internal.h"
#include "sql/plan_json.h"
#include "sql/plan_walk.h"
#include "thund/json_text.h"

namespace thund::sql {

using namespace plan_json;  // NOLINT: the parse-tree helpers of this module

namespace {

// `stmt` (one statement of a parse tree) rendered back to DuckDB SQL;
// `what` names the query in the error.
arrow::Result<std::string> RenderStatement(const Json& stmt, const char* what) {
  Json doc;
  doc["error"] = false;
  doc["statements"] = Json::array({stmt});
  ARROW_ASSIGN_OR_RAISE(auto rendered, internal::RenderSqlJson({JsonText(doc)}));
  if (rendered.empty() || !rendered[0].ok()) {
    return arrow::Status::UnknownError(what, " does not render");
  }
  return *rendered[0];
}

}  // namespace

arrow::Result<std::string> AddWindowEndColumn(std::string_view duck_sql, const std::string& name) {
  ARROW_ASSIGN_OR_RAISE(Json statements, internal::ParseSqlToJson(duck_sql));
  if (statements.size() != 1 || !Field(statements[0], "node")) {
    return arrow::Status::Invalid("expected one query");
  }
  Json stmt = statements[0];
  Json& node = stmt["node"];
  if (Str(node, "type") != "SELECT_NODE") {
    return arrow::Status::NotImplemented("the windowed aggregation is not the outermost SELECT");
  }
  const std::string quoted = QuoteIdent(name);
  const Json* key = nullptr;
  const Json* tvf = nullptr;  // the window_start key of a TUMBLE / HOP
  if (const Json* g = Field(node, "group_expressions"); g && g->is_array()) {
    for (const auto& k : *g) {
      if (IsWindowKey(k)) key = &k;
      if (LastColumnName(k) == "window_start") tvf = &k;
    }
  }
  std::string tmpl;
  if (key) {
    tmpl = "SELECT max(struct_extract(__thund_window_key, 'end')) AS " + quoted;
  } else if (tvf) {
    // window_end under the qualifier of window_start (x.window_start: a
    // join may have several).
    std::string end;
    if (const Json* names = Field(*tvf, "column_names"); names && names->is_array()) {
      for (size_t i = 0; i + 1 < names->size(); ++i) {
        if ((*names)[i].is_string()) end += QuoteIdent((*names)[i].get<std::string>()) + ".";
      }
    }
    tmpl = "SELECT max(" + end + "window_end) AS " + quoted;
  } else {
    return arrow::Status::NotImplemented(
        "the outermost SELECT does not group by a time window");
  }
  ARROW_ASSIGN_OR_RAISE(Json parsed, internal::ParseSqlToJson(tmpl));
  Json item = parsed[0]["node"]["select_list"][0];
  if (key) ReplaceColumn(&item, "__thund_window_key", Unaliased(*key));
  node["select_list"].push_back(item);
  return RenderStatement(stmt, "the query with its window end");
}

namespace {

// Every SUBQUERY table reference in `j`, depth first (pre-order), each with
// how many of the references after it lie inside it.
void SubqueryRefs(Json* j, std::vector<std::pair<Json*, size_t>>* out) {
  if (j->is_array()) {
    for (auto& v : *j) SubqueryRefs(&v, out);
    return;
  }
  if (!j->is_object()) return;
  size_t self = out->size();
  const Json* sub = Str(*j, "type") == "SUBQUERY" && !j->contains("class")
                        ? Field(*j, "subquery")
                        : nullptr;
  if (sub && Field(*sub, "node")) {
    out->emplace_back(j, 0);
  } else {
    self = static_cast<size_t>(-1);
  }
  for (auto& [k, v] : j->items()) SubqueryRefs(&v, out);
  if (self != static_cast<size_t>(-1)) (*out)[self].second = out->size() - self - 1;
}

}  // namespace

arrow::Result<std::string> ReplaceDerivedTables(
    std::string_view duck_sql, const std::vector<std::pair<std::string, std::string>>& tables) {
  ARROW_ASSIGN_OR_RAISE(Json statements, internal::ParseSqlToJson(duck_sql));
  if (statements.size() != 1 || !Field(statements[0], "node")) {
    return arrow::Status::Invalid("expected one query");
  }
  Json stmt = statements[0];
  std::vector<std::pair<Json*, size_t>> refs;
  SubqueryRefs(&stmt["node"], &refs);
  // Each derived table's SELECT as the plan renders a block's SQL (no
  // modifiers, QUALIFY or CTEs of its own: the plan's nodes for those sit
  // above the block, and such a table does not match).
  std::vector<std::string> docs;
  for (const auto& [r, inside] : refs) {
    Json node = (*r)["subquery"]["node"];
    if (Str(node, "type") == "SELECT_NODE") {
      node["modifiers"] = Json::array();
      node["qualify"] = nullptr;
      node["cte_map"] = Json{{"map", Json::array()}};
    }
    docs.push_back(StatementDocument(node));
  }
  ARROW_ASSIGN_OR_RAISE(auto rendered, internal::RenderSqlJson(docs));
  // First which references to replace (never one inside another chosen: the
  // replacement frees what it held), then the replacements.
  std::vector<std::pair<size_t, size_t>> chosen;  // (reference, table)
  std::vector<bool> used(tables.size(), false);
  for (size_t i = 0; i < refs.size() && i < rendered.size(); ++i) {
    if (!rendered[i].ok()) continue;
    const Json& original = (*refs[i].first)["subquery"]["node"];
    const bool plain = !NonEmptyArray(original, "modifiers") && !Field(original, "qualify");
    for (size_t t = 0; t < tables.size(); ++t) {
      if (used[t] || !plain || *rendered[i] != tables[t].first) continue;
      chosen.emplace_back(i, t);
      used[t] = true;
      i += refs[i].second;  // skip the references inside it
      break;
    }
  }
  for (const auto& [i, t] : chosen) {
    ARROW_ASSIGN_OR_RAISE(Json parsed, internal::ParseSqlToJson(
                                           "SELECT * FROM " + QuoteIdent(tables[t].second)));
    Json ref = parsed[0]["node"]["from_table"];
    ref["alias"] = Str(*refs[i].first, "alias");
    *refs[i].first = std::move(ref);
  }
  const size_t replaced = chosen.size();
  if (replaced != tables.size()) {
    return arrow::Status::NotImplemented("a derived table to replace is not in the query's FROM");
  }
  return RenderStatement(stmt, "the query with its derived tables replaced");
}

namespace {

// Every table reference in `j` naming `cte` (lower case) without a schema.
void CteRefs(Json* j, const std::string& cte, std::vector<Json*>* out) {
  if (j->is_array()) {
    for (auto& v : *j) CteRefs(&v, cte, out);
    return;
  }
  if (!j->is_object()) return;
  if (Str(*j, "type") == "BASE_TABLE" && !j->contains("class") &&
      Str(*j, "schema_name").empty() && Str(*j, "catalog_name").empty() &&
      internal::Lower(Str(*j, "table_name")) == cte) {
    out->push_back(j);
    return;
  }
  for (auto& [k, v] : j->items()) CteRefs(&v, cte, out);
}

}  // namespace

arrow::Result<std::string> ReplaceCteReferences(std::string_view duck_sql, const std::string& cte,
                                                const std::string& table) {
  ARROW_ASSIGN_OR_RAISE(Json statements, internal::ParseSqlToJson(duck_sql));
  if (statements.size() != 1 || !Field(statements[0], "node")) {
    return arrow::Status::Invalid("expected one query");
  }
  Json stmt = statements[0];
  Json& node = stmt["node"];
  const std::string name = internal::Lower(cte);
  // The CTE's definition (its column aliases), taken out of the query.
  Json aliases = Json::array();
  bool defined = false;
  if (Json* map = node.contains("cte_map") ? &node["cte_map"]["map"] : nullptr;
      map && map->is_array()) {
    for (auto it = map->begin(); it != map->end(); ++it) {
      if (internal::Lower(Str(*it, "key")) != name) continue;
      if (const Json* v = Field(*it, "value"); v && Field(*v, "aliases")) {
        aliases = (*v)["aliases"];
      }
      map->erase(it);
      defined = true;
      break;
    }
  }
  if (!defined) return arrow::Status::NotImplemented("the query defines no CTE ", cte);
  std::vector<Json*> refs;
  CteRefs(&node, name, &refs);
  if (refs.empty()) return arrow::Status::NotImplemented("no FROM reads the CTE ", cte);
  for (Json* r : refs) {
    const std::string alias = Str(*r, "alias").empty() ? Str(*r, "table_name") : Str(*r, "alias");
    (*r)["table_name"] = table;
    (*r)["alias"] = alias;
    if (!NonEmptyArray(*r, "column_name_alias") && aliases.is_array() && !aliases.empty()) {
      (*r)["column_name_alias"] = aliases;
    }
  }
  return RenderStatement(stmt, "the query with its CTE replaced");
}

}  // namespace thund::sql
