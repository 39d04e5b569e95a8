// Rewrites of a query's parse tree, rendered back to DuckDB SQL.
#include "sql/duckdb_parser.h"
#include "sql/duckdb_types.h"
#include "ir/validate_internal.h"
#include "sql/plan_json.h"
#include "sql/plan_walk.h"
#include "thund/json_text.h"

namespace thund::sql {

using namespace plan_json;  // NOLINT: the parse-tree helpers of this module

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
  Json doc;
  doc["error"] = false;
  doc["statements"] = Json::array({stmt});
  ARROW_ASSIGN_OR_RAISE(auto rendered, internal::RenderSqlJson({JsonText(doc)}));
  if (rendered.empty() || !rendered[0].ok()) {
    return arrow::Status::UnknownError("the query with its window end does not render");
  }
  return *rendered[0];
}

}  // namespace thund::sql
