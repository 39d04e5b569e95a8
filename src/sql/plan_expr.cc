#include "sql/plan_expr.h"

#include "sql/duckdb_parser.h"
#include "ir/validate_internal.h"
#include "sql/plan_json.h"

namespace thund::sql {

using namespace plan_json;  // NOLINT: the parse-tree helpers of this module
using plan::Expr;
using plan::ExprKind;

plan::TextPos ExprConverter::PosOf(const Json& j) const {
  const Json* loc = Field(j, "query_location");
  if (!loc || !loc->is_number_unsigned()) return {};
  const uint64_t off = loc->get<uint64_t>();
  if (off >= duck_sql_.size()) return {};
  internal::TextPosition p = internal::PositionOf(duck_sql_, off);
  return {p.line, p.column};
}


bool ExprConverter::IsAggregateCall(const Json& j) {
  if (Str(j, "class") != "FUNCTION") return false;
  return internal::AggregateFunctionNames().count(internal::Lower(Str(j, "function_name"))) > 0;
}


Expr ExprConverter::FirstColumn(const Expr& e) {
  if (e.kind == ExprKind::kColumn) return e;
  for (const auto& a : e.args) {
    Expr c = FirstColumn(a);
    if (c.kind == ExprKind::kColumn) return c;
  }
  return Expr{};
}


void FilesOf(const Json& arg, std::vector<std::string>* out) {
  auto constant = [](const Json& j) -> const std::string* {
    if (Str(j, "class") != "CONSTANT" || !j.contains("value")) return nullptr;
    const Json& v = j["value"];
    if (!v.is_object() || (v.contains("is_null") && v["is_null"].is_boolean() &&
                           v["is_null"].get<bool>())) {
      return nullptr;
    }
    auto inner = v.find("value");
    if (inner == v.end() || !inner->is_string()) return nullptr;
    return &inner->get_ref<const std::string&>();
  };
  if (const std::string* s = constant(arg)) {
    out->push_back(*s);
  } else if (Str(arg, "function_name") == "list_value" && arg.contains("children")) {
    for (const auto& item : arg["children"]) {
      if (const std::string* s = constant(item)) out->push_back(*s);
    }
  }
}

Expr ExprConverter::Convert(const Json& j) {
  Expr e;
  e.alias = Str(j, "alias");
  e.pos = PosOf(j);
  const std::string cls = Str(j, "class");
  const std::string type = Str(j, "type");
  auto children = [&](const char* key) {
    if (const Json* c = Field(j, key); c && c->is_array()) {
      for (const auto& x : *c) e.args.push_back(Convert(x));
    }
  };
  if (cls == "COLUMN_REF") {
    e.kind = ExprKind::kColumn;
    const Json& names = j["column_names"];
    for (size_t i = 0; names.is_array() && i < names.size(); ++i) {
      if (!names[i].is_string()) continue;
      if (i + 1 == names.size()) {
        e.name = names[i].get<std::string>();
      } else {
        e.qualifier.push_back(names[i].get<std::string>());
      }
    }
  } else if (cls == "CONSTANT") {
    e.kind = ExprKind::kLiteral;
  } else if (cls == "STAR") {
    e.kind = ExprKind::kStar;
    if (!Str(j, "relation_name").empty()) e.qualifier.push_back(Str(j, "relation_name"));
    const bool columns = j.contains("columns") && j["columns"].is_boolean() &&
                         j["columns"].get<bool>();
    if (columns || Field(j, "expr")) {
      e.kind = ExprKind::kOther;  // COLUMNS(...): a set of expressions, not a star
      e.name = "columns";
    }
    if (const Json* ex = Field(j, "exclude_list"); ex && ex->is_array()) {
      for (const auto& x : *ex) {
        if (x.is_string()) {
          e.star_exclude.push_back(x.get<std::string>());
        } else if (x.is_object() && x.contains("column_names") && x["column_names"].is_array() &&
                   !x["column_names"].empty() && x["column_names"].back().is_string()) {
          e.star_exclude.push_back(x["column_names"].back().get<std::string>());
        }
      }
    }
    if (const Json* rep = Field(j, "replace_list"); rep && rep->is_array()) {
      for (const auto& x : *rep) {
        if (x.is_object() && x.contains("key") && x["key"].is_string()) {
          e.star_replace.push_back(x["key"].get<std::string>());
        }
      }
    }
  } else if (cls == "FUNCTION") {
    e.name = internal::Lower(Str(j, "function_name"));
    e.kind = IsAggregateCall(j) ? ExprKind::kAggregate : ExprKind::kFunction;
    children("children");
    e.distinct = j.contains("distinct") && j["distinct"].is_boolean() && j["distinct"].get<bool>();
    if (const Json* f = Field(j, "filter")) e.filter = std::make_shared<Expr>(Convert(*f));
  } else if (cls == "WINDOW") {
    e.kind = ExprKind::kWindowFunction;
    e.name = internal::Lower(Str(j, "function_name"));
    children("children");
    e.function_args = static_cast<int>(e.args.size());
    children("partitions");
    e.partition_args = static_cast<int>(e.args.size()) - e.function_args;
    if (const Json* orders = Field(j, "orders"); orders && orders->is_array()) {
      for (const auto& o : *orders) {
        if (const Json* x = Field(o, "expression")) {
          e.args.push_back(Convert(*x));
          // DuckDB 1.4 writes "DESCENDING" (older versions "ORDER_DESCENDING").
          const std::string type = Str(o, "type");
          e.order_descending.push_back(type == "DESCENDING" || type == "ORDER_DESCENDING");
        }
      }
    }
  } else if (cls == "CAST") {
    e.kind = ExprKind::kCast;
    if (const Json* c = Field(j, "child")) e.args.push_back(Convert(*c));
    if (const Json* t = Field(j, "cast_type"); t && t->is_object()) e.name = Str(*t, "id");
  } else if (cls == "CASE") {
    e.kind = ExprKind::kCase;
    if (const Json* checks = Field(j, "case_checks"); checks && checks->is_array()) {
      for (const auto& c : *checks) {
        if (const Json* w = Field(c, "when_expr")) e.args.push_back(Convert(*w));
        if (const Json* t = Field(c, "then_expr")) e.args.push_back(Convert(*t));
      }
    }
    if (const Json* el = Field(j, "else_expr")) e.args.push_back(Convert(*el));
  } else if (cls == "SUBQUERY") {
    e.kind = ExprKind::kSubquery;
    if (const Json* c = Field(j, "child")) e.args.push_back(Convert(*c));
    const Json* sub = Field(j, "subquery");
    const Json* node = sub ? Field(*sub, "node") : nullptr;
    if (node) e.subquery = subquery_(*node);
  } else if (cls == "COMPARISON" || cls == "CONJUNCTION" || cls == "OPERATOR" ||
             cls == "BETWEEN") {
    e.kind = ExprKind::kOperator;
    auto it = OperatorNames().find(type);
    e.name = it != OperatorNames().end() ? it->second : internal::Lower(type);
    for (const char* key : {"left", "right", "input", "lower", "upper"}) {
      if (const Json* c = Field(j, key)) e.args.push_back(Convert(*c));
    }
    children("children");
  } else {
    e.kind = ExprKind::kOther;
    e.name = internal::Lower(cls);
  }
  // The expression's text, without its alias.
  Json item = Unaliased(j);
  Json q = BareSelect(EmptyFrom());
  q["select_list"] = Json::array({item});
  pending_.push_back(std::make_unique<Expr>(e));
  renders_->push_back({StatementDocument(q), &pending_.back()->sql, true});
  e.sql = kPendingMark + std::to_string(pending_.size() - 1);
  return e;
}


void ExprConverter::FillExpr(Expr& e) const {
  if (e.sql.rfind(kPendingMark, 0) == 0) {
    const size_t idx = std::stoul(e.sql.substr(1));
    e.sql = idx < pending_.size() ? pending_[idx]->sql : std::string();
  }
  for (auto& a : e.args) FillExpr(a);
  if (e.sql.empty() && e.kind == ExprKind::kOperator && e.name == "and") {
    // A conjunction the walk put together (a join's residual conjuncts).
    for (size_t i = 0; i < e.args.size(); ++i) e.sql += (i ? " AND " : "(") + e.args[i].sql;
    e.sql += ")";
  }
  if (e.filter) {
    auto f = std::make_shared<Expr>(*e.filter);
    FillExpr(*f);
    e.filter = f;
  }
}

void ExprConverter::FillText(std::string* s) const {
  Expr tmp;
  tmp.sql = *s;
  FillExpr(tmp);
  *s = tmp.sql;
}

void ExprConverter::Fill(plan::PlanNode& n) const {
  for (auto* list : {&n.exprs, &n.group_keys, &n.aggregates, &n.scan.args}) {
    for (auto& e : *list) FillExpr(e);
  }
  if (n.predicate) FillExpr(*n.predicate);
  for (auto& k : n.order) FillExpr(k.expr);
  for (auto& row : n.rows) {
    for (auto& e : row) FillExpr(e);
  }
  for (auto& [l, r] : n.join.equi_keys) {
    FillExpr(l);
    FillExpr(r);
  }
  if (n.join.residual) FillExpr(*n.join.residual);
  if (n.join.time_bound) {
    FillExpr(n.join.time_bound->left_time);
    FillExpr(n.join.time_bound->right_time);
    FillText(&n.join.time_bound->lower_sql);
    FillText(&n.join.time_bound->upper_sql);
    FillExpr(n.join.time_bound->lower);
    FillExpr(n.join.time_bound->upper);
  }
  if (n.limit) FillText(&*n.limit);
  if (n.offset) FillText(&*n.offset);
}

}  // namespace thund::sql
