// DecomposeAggregation: the SQL of the incremental aggregate operator, made
// from the query's parse tree (the one place thund reads it: src/sql/).
//
// The query's outermost SELECT block
//   SELECT <items> FROM <from> WHERE <where> GROUP BY <keys> HAVING <having>
// becomes
//   partial: SELECT <key_i> AS __g<i>, <partial_j> AS __p<j> FROM <from>
//            WHERE <where> GROUP BY <keys>
//   final:   SELECT <items'> FROM <state> WHERE <having'>
// where items' / having' are the items and HAVING with every grouping key
// replaced by its __g column and every aggregate call by its finalizer over
// the __p columns (avg(x) -> __ps / __pc). Partials of one group merge by
// sum (counts, sums), min, max, bool_and, bool_or: the caller folds each
// trigger's partials into its state with those.
#include "ir/validate_internal.h"
#include "sql/duckdb_parser.h"
#include "sql/duckdb_types.h"
#include "sql/plan_json.h"
#include "sql/sql_analysis.h"
#include "sql/sql_dialect_internal.h"
#include "thund/sql_dialect.h"
#include "thund/json_text.h"

namespace thund::sql {

using namespace plan_json;  // NOLINT: the parse-tree helpers of this module

namespace {

// `j` without query locations and aliases: equal parse trees of the same
// expression written in two places (GROUP BY and SELECT) compare equal.
Json Canon(const Json& j) {
  if (j.is_array()) {
    Json out = Json::array();
    for (const auto& v : j) out.push_back(Canon(v));
    return out;
  }
  if (!j.is_object()) return j;
  Json out = Json::object();
  for (const auto& [k, v] : j.items()) {
    if (k == "query_location" || k == "alias") continue;
    out[k] = Canon(v);
  }
  return out;
}

bool IsAggregateCall(const Json& j) {
  return Str(j, "class") == "FUNCTION" &&
         internal::AggregateFunctionNames().count(internal::Lower(Str(j, "function_name"))) > 0;
}

bool ContainsAggregate(const Json& j) {
  if (j.is_array()) {
    for (const auto& v : j) {
      if (ContainsAggregate(v)) return true;
    }
    return false;
  }
  if (!j.is_object()) return false;
  if (IsAggregateCall(j)) return true;
  if (Str(j, "class") == "SUBQUERY") return false;
  for (const auto& [k, v] : j.items()) {
    if (ContainsAggregate(v)) return true;
  }
  return false;
}

// Parses one expression written as SQL (a template of this module).
arrow::Result<Json> ParseExpr(const std::string& expr) {
  ARROW_ASSIGN_OR_RAISE(Json statements, internal::ParseSqlToJson("SELECT " + expr));
  return statements[0]["node"]["select_list"][0];
}

std::string Render(const Json& e) { return JsonText(e); }

// Whether `j` reads a column the window assignment adds (or its helper).
bool ReadsWindowColumn(const Json& j) {
  if (j.is_array()) {
    for (const auto& v : j) {
      if (ReadsWindowColumn(v)) return true;
    }
    return false;
  }
  if (!j.is_object()) return false;
  if (Str(j, "class") == "COLUMN_REF") {
    for (const auto& n : ColumnNames(j)) {
      const std::string l = internal::Lower(n);
      if (l == "window" || l == "window_start" || l == "window_end" || l == "__thund_ws") {
        return true;
      }
    }
    return false;
  }
  for (const auto& [k, v] : j.items()) {
    if (ReadsWindowColumn(v)) return true;
  }
  return false;
}

class Decomposer {
 public:
  Decomposer(const Json& node, const std::set<std::string>* input_columns, int64_t window_size_us)
      : node_(node), input_columns_(input_columns), window_size_us_(window_size_us) {}

  arrow::Result<AggregateDecomposition> Run(const std::string& state_name);
  // With hopping panes: only the grouping keys that are the window read it.
  bool PanesFit() const;
  void FillDirect();

 private:
  arrow::Status CollectKeys();
  // Replaces keys and aggregate calls inside `j` (a select item or HAVING).
  arrow::Status Substitute(Json* j);
  arrow::Result<Json> Finalizer(const Json& call);
  std::string AddPartial(const Json& call_without_alias, const std::string& function,
                         const std::string& merge);

  Json node_;
  const std::set<std::string>* input_columns_;
  int64_t window_size_us_;
  std::vector<Json> keys_;       // unaliased parse trees
  std::vector<Json> key_canon_;
  std::vector<Json> partials_;   // select items of the partial query
  std::vector<std::string> partial_canon_;  // dedup of partial calls
  AggregateDecomposition out_;
};

arrow::Status Decomposer::CollectKeys() {
  const Json& items = node_["select_list"];
  if (Str(node_, "aggregate_handling") == "FORCE_AGGREGATES") {
    // GROUP BY ALL: every item without an aggregate call is a key.
    for (const auto& item : items) {
      if (!ContainsAggregate(item)) keys_.push_back(Unaliased(item));
    }
  } else {
    if (const Json* sets = Field(node_, "group_sets"); sets && sets->size() > 1) {
      return arrow::Status::NotImplemented("grouping sets (ROLLUP, CUBE, GROUPING SETS)");
    }
    if (const Json* g = Field(node_, "group_expressions")) {
      for (const auto& k : *g) {
        Json key = Unaliased(k);
        if (Str(k, "class") == "CONSTANT" && k["value"]["value"].is_number_integer()) {
          const int64_t i = k["value"]["value"].get<int64_t>();
          if (i < 1 || i > static_cast<int64_t>(items.size())) {
            return arrow::Status::Invalid("GROUP BY ", i, " is not a select item");
          }
          key = Unaliased(items[i - 1]);
        } else if (ColumnNames(k).size() == 1) {
          // GROUP BY an alias of the select list: DuckDB takes an input column
          // of that name first. Without the input's columns, an alias of an
          // expression that is not that very column counts.
          const std::string n = internal::Lower(ColumnNames(k)[0]);
          const bool is_input = input_columns_ && input_columns_->count(n) > 0;
          for (const auto& item : items) {
            if (is_input || internal::Lower(Str(item, "alias")) != n) continue;
            const bool same = LastColumnName(item) == n;
            if (!same) key = Unaliased(item);
          }
        }
        keys_.push_back(std::move(key));
      }
    }
  }
  for (const auto& k : keys_) {
    if (ContainsAggregate(k)) return arrow::Status::Invalid("an aggregate in GROUP BY");
    key_canon_.push_back(Canon(k));
  }
  return arrow::Status::OK();
}

std::string Decomposer::AddPartial(const Json& call, const std::string& function,
                                   const std::string& merge) {
  Json c = Unaliased(call);
  c["function_name"] = function;
  if (function == "count_star") c["children"] = Json::array();
  const std::string canon = Render(Canon(c));
  for (size_t i = 0; i < partial_canon_.size(); ++i) {
    if (partial_canon_[i] == canon) return "__p" + std::to_string(i);
  }
  const std::string name = "__p" + std::to_string(partials_.size());
  c["alias"] = name;
  partials_.push_back(c);
  partial_canon_.push_back(canon);
  out_.merge.push_back(merge);
  return name;
}

arrow::Result<Json> Decomposer::Finalizer(const Json& call) {
  const std::string fn = internal::Lower(Str(call, "function_name"));
  if (call["distinct"].is_boolean() && call["distinct"].get<bool>()) {
    return arrow::Status::NotImplemented(fn, "(DISTINCT ...) keeps the distinct values");
  }
  if (const Json* ob = Field(call, "order_bys"); ob && NonEmptyArray(*ob, "orders")) {
    return arrow::Status::NotImplemented(fn, "(... ORDER BY ...) depends on row order");
  }
  const size_t nargs = call["children"].is_array() ? call["children"].size() : 0;
  if (fn == "count_star" || (fn == "count" && nargs == 0)) {
    return ParseExpr(AddPartial(call, "count_star", "sum"));
  }
  if (fn == "count" && nargs == 1) return ParseExpr(AddPartial(call, "count", "sum"));
  if ((fn == "sum" || fn == "min" || fn == "max") && nargs == 1) {
    return ParseExpr(AddPartial(call, fn, fn));
  }
  if ((fn == "bool_and" || fn == "bool_or") && nargs == 1) {
    return ParseExpr(AddPartial(call, fn, fn));
  }
  if ((fn == "avg" || fn == "mean") && nargs == 1) {
    const std::string s = AddPartial(call, "sum", "sum");
    const std::string c = AddPartial(call, "count", "sum");
    return ParseExpr("CASE WHEN " + c + " = 0 THEN NULL ELSE " + s + " / " + c + " END");
  }
  return arrow::Status::NotImplemented(fn, "(...) is not decomposable into partials");
}

arrow::Status Decomposer::Substitute(Json* j) {
  if (j->is_array()) {
    for (auto& v : *j) ARROW_RETURN_NOT_OK(Substitute(&v));
    return arrow::Status::OK();
  }
  if (!j->is_object()) return arrow::Status::OK();
  const std::string alias = Str(*j, "alias");
  const Json canon = Canon(*j);
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (canon == key_canon_[i]) {
      *j = ColumnRef({"__g" + std::to_string(i)}, alias);
      return arrow::Status::OK();
    }
  }
  const std::string cls = Str(*j, "class");
  if (cls == "SUBQUERY") return arrow::Status::NotImplemented("a subquery beside the aggregates");
  if (cls == "WINDOW") return arrow::Status::NotImplemented("a window function (OVER)");
  if (IsAggregateCall(*j)) {
    ARROW_ASSIGN_OR_RAISE(Json f, Finalizer(*j));
    f["alias"] = alias;
    *j = std::move(f);
    return arrow::Status::OK();
  }
  if (cls == "COLUMN_REF") {
    // `window.start` reads a field of the grouped `window`; `t.k` is the
    // grouped `k` qualified by its table.
    std::vector<std::string> names = ColumnNames(*j);
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (Str(keys_[i], "class") != "COLUMN_REF" || names.size() < 2) continue;
      const auto key = ColumnNames(keys_[i]);
      if (key.size() == 1 && internal::Lower(key[0]) == internal::Lower(names[0])) {
        names[0] = "__g" + std::to_string(i);
        *j = ColumnRef(names, alias);
        return arrow::Status::OK();
      }
      if (internal::Lower(key.back()) == internal::Lower(names.back())) {
        *j = ColumnRef({"__g" + std::to_string(i)}, alias);
        return arrow::Status::OK();
      }
    }
    return arrow::Status::NotImplemented("column ", names.empty() ? "?" : names.back(),
                                         " is neither grouped nor aggregated");
  }
  for (auto& [k, v] : j->items()) ARROW_RETURN_NOT_OK(Substitute(&v));
  return arrow::Status::OK();
}

arrow::Result<AggregateDecomposition> Decomposer::Run(const std::string& state_name) {
  if (Str(node_, "type") != "SELECT_NODE") {
    return arrow::Status::NotImplemented("the outermost query is not one SELECT block");
  }
  if (Field(node_, "qualify")) return arrow::Status::NotImplemented("QUALIFY");
  for (const auto& m : node_["modifiers"]) {
    if (Str(m, "type") != "ORDER_MODIFIER") {
      return arrow::Status::NotImplemented("LIMIT / DISTINCT on an aggregation");
    }
  }
  ARROW_RETURN_NOT_OK(CollectKeys());
  Json items = node_["select_list"];
  ARROW_RETURN_NOT_OK(Substitute(&items));
  Json having = node_.contains("having") ? node_["having"] : Json();
  if (!having.is_null()) ARROW_RETURN_NOT_OK(Substitute(&having));

  // Partial query: the same block with keys and partial calls as its items.
  Json partial = node_;
  Json list = Json::array();
  for (size_t i = 0; i < keys_.size(); ++i) {
    Json k = keys_[i];
    k["alias"] = "__g" + std::to_string(i);
    list.push_back(k);
  }
  for (const auto& p : partials_) list.push_back(p);
  partial["select_list"] = list;
  partial["group_expressions"] = keys_;
  Json set = Json::array();
  for (size_t i = 0; i < keys_.size(); ++i) set.push_back(i);
  partial["group_sets"] = keys_.empty() ? Json::array() : Json::array({set});
  partial["aggregate_handling"] = "STANDARD_HANDLING";
  partial["having"] = nullptr;
  partial["modifiers"] = Json::array();

  // Final query over the state.
  ARROW_ASSIGN_OR_RAISE(Json from_state,
                        internal::ParseSqlToJson("SELECT * FROM " + QuoteIdent(state_name)));
  Json final_node = from_state[0]["node"];
  final_node["select_list"] = items;
  final_node["where_clause"] = having;
  final_node["cte_map"] = Json{{"map", Json::array()}};

  ARROW_ASSIGN_OR_RAISE(auto rendered, internal::RenderSqlJson({StatementDocument(partial),
                                                                StatementDocument(final_node)}));
  if (rendered.size() != 2 || !rendered[0].ok() || !rendered[1].ok()) {
    return arrow::Status::NotImplemented("the aggregation's parts do not render back to SQL");
  }
  out_.partial_sql = *rendered[0];
  out_.final_sql = *rendered[1];
  out_.num_groups = static_cast<int>(keys_.size());
  // A final query that only names state columns (no HAVING, no expression).
  if (having.is_null()) {
    for (const auto& item : items) {
      const std::vector<std::string> names = ColumnNames(item);
      const bool state_column = Str(item, "class") == "COLUMN_REF" && names.size() == 1 &&
                                (names[0].rfind("__g", 0) == 0 || names[0].rfind("__p", 0) == 0);
      if (!state_column) {
        out_.final_columns.clear();
        break;
      }
      const std::string alias = Str(item, "alias");
      out_.final_columns.push_back({names[0], alias.empty() ? names[0] : alias});
    }
  }

  // The window end of a state row, from the grouping key that is the window:
  // a struct (window(), session_window()), or window_start / window_end
  // columns (the table functions).
  for (size_t i = 0; i < keys_.size(); ++i) {
    const std::string name = LastColumnName(keys_[i]);
    if (IsWindowKey(keys_[i]) && out_.window_struct_key < 0) {
      out_.window_struct_key = static_cast<int>(i);
    } else if (name == "window_start" && out_.window_start_key < 0) {
      out_.window_start_key = static_cast<int>(i);
    } else if (name == "window_end" && out_.window_end_key < 0) {
      out_.window_end_key = static_cast<int>(i);
    }
  }
  if (out_.window_struct_key >= 0) {
    out_.window_end_sql =
        "struct_extract(__g" + std::to_string(out_.window_struct_key) + ", 'end')";
  } else if (out_.window_end_key >= 0) {
    out_.window_end_sql = "__g" + std::to_string(out_.window_end_key);
  } else if (out_.window_start_key >= 0 && window_size_us_ > 0) {
    out_.window_end_sql = "__g" + std::to_string(out_.window_start_key) + " + to_microseconds(" +
                          std::to_string(window_size_us_) + ")";
    out_.window_size_us = window_size_us_;
  }
  FillDirect();
  return out_;
}

// Whether `j` is `<one column> IS NOT NULL`.
bool IsNotNullOfColumn(const Json& j) {
  if (Str(j, "class") != "OPERATOR" || Str(j, "type") != "OPERATOR_IS_NOT_NULL") return false;
  const Json* args = Field(j, "children");
  return args && args->is_array() && args->size() == 1 &&
         Str((*args)[0], "class") == "COLUMN_REF";
}

void Decomposer::FillDirect() {
  AggregateDecomposition::Direct& d = out_.direct;
  // No WHERE, or only `<column> IS NOT NULL`, which window() adds over its
  // time column (the planner checks it is that column: the C++ partials leave
  // out rows without a time anyway).
  const bool no_where = !node_.contains("where_clause") || node_["where_clause"].is_null();
  d.usable = no_where || IsNotNullOfColumn(node_["where_clause"]);
  for (size_t i = 0; i < keys_.size() && d.usable; ++i) {
    const int k = static_cast<int>(i);
    if (k == out_.window_struct_key || k == out_.window_start_key || k == out_.window_end_key) {
      d.keys.push_back("");
    } else if (Str(keys_[i], "class") == "COLUMN_REF" && ColumnNames(keys_[i]).size() == 1) {
      d.keys.push_back(ColumnNames(keys_[i])[0]);
    } else {
      d.usable = false;
    }
  }
  for (const auto& p : partials_) {
    if (!d.usable) break;
    const std::string fn = internal::Lower(Str(p, "function_name"));
    const bool filtered = p.contains("filter") && !p["filter"].is_null();
    const bool distinct = p["distinct"].is_boolean() && p["distinct"].get<bool>();
    const Json* args = Field(p, "children");
    const size_t n = args && args->is_array() ? args->size() : 0;
    if (filtered || distinct) {
      d.usable = false;
    } else if (fn == "count_star" && n == 0) {
      d.partials.push_back({fn, ""});
    } else if ((fn == "count" || fn == "sum" || fn == "min" || fn == "max") && n == 1 &&
               Str((*args)[0], "class") == "COLUMN_REF" && ColumnNames((*args)[0]).size() == 1) {
      d.partials.push_back({fn, ColumnNames((*args)[0])[0]});
    } else {
      d.usable = false;
    }
  }
  if (!d.usable) d = AggregateDecomposition::Direct{};
}

bool Decomposer::PanesFit() const {
  if (node_.contains("where_clause") && ReadsWindowColumn(node_["where_clause"])) return false;
  for (const auto& p : partials_) {
    if (ReadsWindowColumn(p)) return false;
  }
  for (size_t i = 0; i < keys_.size(); ++i) {
    const int k = static_cast<int>(i);
    if (k == out_.window_struct_key || k == out_.window_start_key || k == out_.window_end_key) {
      continue;
    }
    if (ReadsWindowColumn(keys_[i])) return false;
  }
  return out_.window_struct_key >= 0 || out_.window_start_key >= 0 || out_.window_end_key >= 0;
}

// The decomposition, with the query's hopping window as panes when `panes`
// is given; nullopt when panes were asked for and do not fit.
arrow::Result<std::optional<AggregateDecomposition>> Decompose(
    const std::string& sql, const std::string& state_name,
    const std::set<std::string>* input_columns, int64_t window_size_us,
    std::optional<HopPanes> panes, const std::vector<std::string>& output_names) {
  ARROW_ASSIGN_OR_RAISE(std::string duck_sql, TranslateToDuckDb(sql, panes.has_value()));
  ARROW_ASSIGN_OR_RAISE(Json statements, internal::ParseSqlToJson(duck_sql));
  if (statements.size() != 1 || !Field(statements[0], "node")) {
    return arrow::Status::Invalid("expected one query");
  }
  Json node = statements[0]["node"];
  if (Str(node, "type") == "SELECT_NODE") {
    Json& items = node["select_list"];
    if (items.size() != output_names.size()) {
      return arrow::Status::NotImplemented("the select list's output names are not known");
    }
    for (size_t i = 0; i < items.size(); ++i) {
      if (Str(items[i], "alias").empty()) items[i]["alias"] = output_names[i];
    }
  }
  Decomposer d(node, input_columns, window_size_us);
  ARROW_ASSIGN_OR_RAISE(AggregateDecomposition out, d.Run(state_name));
  if (panes) {
    if (!d.PanesFit()) return std::nullopt;  // the window is read beside its keys
    out.pane_windows = panes->windows;
    out.pane_slide_us = panes->slide_us;
  }
  return out;
}

}  // namespace

arrow::Result<AggregateDecomposition> DecomposeAggregation(
    const std::string& sql, const std::string& state_name,
    const std::set<std::string>* input_columns, int64_t window_size_us,
    std::optional<HopPanes> panes, const std::vector<std::string>& output_names) {
  if (panes && panes->windows > 1 && panes->slide_us > 0) {
    ARROW_ASSIGN_OR_RAISE(
        auto with_panes,
        Decompose(sql, state_name, input_columns, window_size_us, panes, output_names));
    if (with_panes) return *with_panes;
  }
  ARROW_ASSIGN_OR_RAISE(
      auto plain,
      Decompose(sql, state_name, input_columns, window_size_us, std::nullopt, output_names));
  return *plain;
}

}  // namespace thund::sql
