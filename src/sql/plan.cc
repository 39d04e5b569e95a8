// thund/plan.h: names, the questions consumers ask, and the printed forms.
#include "thund/plan.h"

#include <arrow/type.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ir/validate_internal.h"
#include "thund/type_names.h"
#include "thund/json_text.h"

namespace thund::plan {
namespace {

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

void ColumnsOf(const Expr& e, std::vector<std::string>* out) {
  if (e.kind == ExprKind::kSubquery) return;
  if (e.kind == ExprKind::kColumn) {
    out->push_back(e.name);
    return;
  }
  for (const auto& a : e.args) ColumnsOf(a, out);
  if (e.filter) ColumnsOf(*e.filter, out);
}

std::string SchemaText(const PlanNode& n) {
  if (!n.schema) return n.bind_error.empty() ? "(unbound)" : "(unbound: " + n.bind_error + ")";
  std::string out = "(";
  for (int i = 0; i < n.schema->num_fields(); ++i) {
    const auto& f = n.schema->field(i);
    out += (i ? ", " : "") + f->name() + " " + FormatTypeName(*f->type());
  }
  return out + ")";
}

std::string ExprList(const std::vector<Expr>& exprs) {
  std::string out;
  for (size_t i = 0; i < exprs.size(); ++i) {
    out += (i ? ", " : "") + exprs[i].sql;
    if (!exprs[i].alias.empty()) out += " AS " + exprs[i].alias;
  }
  return out;
}

std::string Details(const PlanNode& n) {
  switch (n.kind) {
    case NodeKind::kScan:
      return (n.scan.kind == ScanKind::kTableFunction ? "function " : "") + n.scan.Joined() +
             (n.scan.stream ? " stream" : "") +
             (n.scan.files.empty() ? "" : " files=[" + Join(n.scan.files, ", ") + "]");
    case NodeKind::kFilter:
      return n.filter_clause + " " + (n.predicate ? n.predicate->sql : "");
    case NodeKind::kProject:
      return "[" + ExprList(n.exprs) + "]";
    case NodeKind::kAggregate:
      return std::string("keys=[") + ExprList(n.group_keys) + "] aggs=[" +
             ExprList(n.aggregates) + "]" + (n.grouping_sets ? " grouping_sets" : "");
    case NodeKind::kWindowAssign: {
      const WindowInfo& w = n.window;
      std::string out = std::string(Name(w.shape)) + " on " + w.time_column;
      if (w.shape == WindowShape::kSession) {
        out += " gap=" + std::to_string(w.gap_us) + "us";
      } else {
        out += " size=" + std::to_string(w.size_us) + "us";
        if (w.shape == WindowShape::kHopping) out += " slide=" + std::to_string(w.slide_us) + "us";
      }
      return out + " -> [" + Join(w.output_columns, ", ") + "]";
    }
    case NodeKind::kJoin: {
      std::string out = Name(n.join.kind);
      std::vector<std::string> keys;
      for (const auto& [l, r] : n.join.equi_keys) keys.push_back(l.sql + " = " + r.sql);
      if (!keys.empty()) out += " keys=[" + Join(keys, ", ") + "]";
      if (!n.join.using_columns.empty()) out += " using=[" + Join(n.join.using_columns, ", ") + "]";
      if (n.join.residual) out += " residual=" + n.join.residual->sql;
      if (n.join.time_bound) {
        out += " time_bound=" + n.join.time_bound->right_time.sql + " in [" +
               n.join.time_bound->lower_sql + ", " + n.join.time_bound->upper_sql + "]";
      }
      return out;
    }
    case NodeKind::kUnion:
      return Name(n.set_op);
    case NodeKind::kDistinct:
      return n.exprs.empty() ? "" : "on=[" + ExprList(n.exprs) + "]";
    case NodeKind::kSort: {
      std::vector<std::string> keys;
      for (const auto& k : n.order) keys.push_back(k.expr.sql + (k.descending ? " desc" : ""));
      return "[" + Join(keys, ", ") + "]";
    }
    case NodeKind::kLimit:
      return (n.limit ? "limit=" + *n.limit : "") + (n.offset ? " offset=" + *n.offset : "");
    case NodeKind::kValues:
      return n.rows.empty() ? "" : std::to_string(n.rows.size()) + " rows";
    case NodeKind::kOpaque:
      return n.opaque_reason;
  }
  return "";
}

void Print(const PlanNode& n, int depth, bool with_schemas, std::ostringstream& out) {
  out << std::string(static_cast<size_t>(depth) * 2, ' ') << Name(n.kind);
  std::string d = Details(n);
  if (!d.empty()) out << " " << d;
  if (with_schemas) out << " -> " << SchemaText(n);
  out << "\n";
  for (const auto& in : n.inputs) Print(*in, depth + 1, with_schemas, out);
}

nlohmann::ordered_json ExprJson(const Expr& e) {
  nlohmann::ordered_json j;
  j["kind"] = Name(e.kind);
  if (!e.name.empty()) j["name"] = e.name;
  j["sql"] = e.sql;
  if (!e.alias.empty()) j["alias"] = e.alias;
  if (e.type) j["type"] = FormatTypeName(*e.type);
  return j;
}

nlohmann::ordered_json NodeJson(const PlanNode& n) {
  nlohmann::ordered_json j;
  j["kind"] = Name(n.kind);
  const std::string d = Details(n);
  if (!d.empty()) j["detail"] = d;
  if (n.kind == NodeKind::kScan) j["relation"] = n.scan.Joined();
  if (n.kind == NodeKind::kAggregate) {
    for (const auto& k : n.group_keys) j["group_keys"].push_back(ExprJson(k));
    for (const auto& a : n.aggregates) j["aggregates"].push_back(ExprJson(a));
  }
  if (n.kind == NodeKind::kProject) {
    for (const auto& e : n.exprs) j["exprs"].push_back(ExprJson(e));
  }
  if (n.schema) {
    for (const auto& f : n.schema->fields()) {
      j["schema"].push_back({{"name", f->name()}, {"type", FormatTypeName(*f->type())}});
    }
  } else if (!n.bind_error.empty()) {
    j["bind_error"] = n.bind_error;
  }
  if (n.pos.known()) j["position"] = std::to_string(n.pos.line) + ":" + std::to_string(n.pos.column);
  j["inputs"] = nlohmann::ordered_json::array();
  for (const auto& in : n.inputs) j["inputs"].push_back(NodeJson(*in));
  return j;
}

}  // namespace

const char* Name(ExprKind k) {
  switch (k) {
    case ExprKind::kColumn: return "column";
    case ExprKind::kLiteral: return "literal";
    case ExprKind::kStar: return "star";
    case ExprKind::kFunction: return "function";
    case ExprKind::kOperator: return "operator";
    case ExprKind::kAggregate: return "aggregate";
    case ExprKind::kWindowFunction: return "window_function";
    case ExprKind::kCast: return "cast";
    case ExprKind::kCase: return "case";
    case ExprKind::kSubquery: return "subquery";
    case ExprKind::kOther: return "other";
  }
  return "?";
}

const char* Name(NodeKind k) {
  switch (k) {
    case NodeKind::kScan: return "Scan";
    case NodeKind::kFilter: return "Filter";
    case NodeKind::kProject: return "Project";
    case NodeKind::kAggregate: return "Aggregate";
    case NodeKind::kWindowAssign: return "WindowAssign";
    case NodeKind::kJoin: return "Join";
    case NodeKind::kUnion: return "Union";
    case NodeKind::kDistinct: return "Distinct";
    case NodeKind::kSort: return "Sort";
    case NodeKind::kLimit: return "Limit";
    case NodeKind::kValues: return "Values";
    case NodeKind::kOpaque: return "Opaque";
  }
  return "?";
}

const char* Name(WindowShape s) {
  switch (s) {
    case WindowShape::kTumbling: return "tumbling";
    case WindowShape::kHopping: return "hopping";
    case WindowShape::kSession: return "session";
  }
  return "?";
}

const char* Name(JoinKind k) {
  switch (k) {
    case JoinKind::kInner: return "inner";
    case JoinKind::kLeft: return "left";
    case JoinKind::kRight: return "right";
    case JoinKind::kFull: return "full";
    case JoinKind::kSemi: return "semi";
    case JoinKind::kAnti: return "anti";
    case JoinKind::kCross: return "cross";
    case JoinKind::kAsOf: return "asof";
    case JoinKind::kPositional: return "positional";
  }
  return "?";
}

const char* Name(SetOp s) {
  switch (s) {
    case SetOp::kUnion: return "union";
    case SetOp::kUnionAll: return "union all";
    case SetOp::kExcept: return "except";
    case SetOp::kExceptAll: return "except all";
    case SetOp::kIntersect: return "intersect";
    case SetOp::kIntersectAll: return "intersect all";
    case SetOp::kUnionByName: return "union by name";
    case SetOp::kUnionAllByName: return "union all by name";
  }
  return "?";
}

std::string Expr::OutputName() const {
  if (!alias.empty()) return alias;
  if (kind == ExprKind::kColumn) return name;
  return sql;
}

std::vector<std::string> Expr::Columns() const {
  std::vector<std::string> out;
  ColumnsOf(*this, &out);
  return out;
}

std::string ScanInfo::Joined() const { return Join(name, "."); }

std::string WindowInfo::TimeColumnName() const {
  std::string unquoted;
  for (char c : time_column) {
    if (c != '"') unquoted += c;
  }
  const size_t dot = unquoted.rfind('.');
  return dot == std::string::npos ? unquoted : unquoted.substr(dot + 1);
}

namespace {

// Calls `f` with the root of each subquery in the expressions of `n` (not in
// its inputs, and not nested deeper than those roots).
void ForEachSubquery(const PlanNode& n, const std::function<void(const PlanNode&)>& f) {
  std::function<void(const Expr&)> expr = [&](const Expr& e) {
    if (e.subquery) f(*e.subquery);
    for (const auto& a : e.args) expr(a);
    if (e.filter) expr(*e.filter);
  };
  for (const auto* list : {&n.exprs, &n.group_keys, &n.aggregates, &n.scan.args}) {
    for (const auto& e : *list) expr(e);
  }
  if (n.predicate) expr(*n.predicate);
  if (n.join.residual) expr(*n.join.residual);
  for (const auto& k : n.order) expr(k.expr);
  for (const auto& row : n.rows) {
    for (const auto& e : row) expr(e);
  }
}

}  // namespace

std::vector<const PlanNode*> Nodes(const PlanNode& root) {
  std::vector<const PlanNode*> out;
  std::set<const PlanNode*> seen;
  std::function<void(const PlanNode&)> visit = [&](const PlanNode& n) {
    if (!seen.insert(&n).second) return;
    out.push_back(&n);
    for (const auto& in : n.inputs) visit(*in);
    ForEachSubquery(n, visit);
  };
  visit(root);
  return out;
}

namespace {

bool HasStar(const std::vector<Expr>& exprs) {
  for (const auto& e : exprs) {
    if (e.kind == ExprKind::kStar) return true;
  }
  return false;
}

// The nodes whose every output column someone needs: the root (its rows are
// the result), a subquery's root, and the inputs of a node that is itself so
// and passes its input's columns on (all but a SELECT list and an
// aggregation; a SELECT list with a star passes them on). A set operation or
// DISTINCT compares whole rows, so its inputs are always so.
std::set<const PlanNode*> WholeRowNodes(const PlanNode& root) {
  std::set<const PlanNode*> whole, seen;
  std::function<void(const PlanNode&, bool)> need = [&](const PlanNode& n, bool all) {
    if (all ? !whole.insert(&n).second : !seen.insert(&n).second) return;
    bool pass = all;
    switch (n.kind) {
      case NodeKind::kProject: pass = all && HasStar(n.exprs); break;
      case NodeKind::kAggregate: pass = false; break;
      case NodeKind::kUnion:
      case NodeKind::kDistinct: pass = true; break;
      default: break;
    }
    for (const auto& in : n.inputs) need(*in, pass);
    ForEachSubquery(n, [&](const PlanNode& sub) { need(sub, true); });
  };
  need(root, true);
  return whole;
}

}  // namespace

std::optional<std::set<std::string>> ColumnNamesRead(const PlanNode& root) {
  // A star in a SELECT list whose columns only named references read further
  // up (SELECT a FROM (SELECT *, ... FROM t): the session-window expansion)
  // adds no name of its own; one whose every column is needed has no bound.
  const std::set<const PlanNode*> whole = WholeRowNodes(root);
  std::set<std::string> names;
  std::set<std::string> bare;       // unqualified references
  std::set<std::string> relations;  // names and aliases of the relations in the plan
  bool unbounded = false;
  std::function<void(const Expr&)> expr = [&](const Expr& e) {
    if (e.kind == ExprKind::kStar || e.kind == ExprKind::kOther) {
      unbounded = true;
      return;
    }
    if (e.kind == ExprKind::kColumn) {
      names.insert(internal::Lower(e.name));
      if (e.qualifier.empty()) bare.insert(internal::Lower(e.name));
      for (const auto& q : e.qualifier) names.insert(internal::Lower(q));
    }
    for (const auto& a : e.args) expr(a);  // (a subquery's nodes come from Nodes())
    if (e.filter) expr(*e.filter);
  };
  // A window's time column is SQL text: its identifiers, and the whole name
  // unquoted.
  auto text = [&](const std::string& sql) {
    std::string word, whole;
    for (char c : sql + " ") {
      if (c != '"' && c != '`') whole += c;
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
          static_cast<unsigned char>(c) >= 0x80) {
        word += c;
      } else if (!word.empty()) {
        names.insert(internal::Lower(word));
        word.clear();
      }
    }
    names.insert(internal::Lower(whole.substr(0, whole.size() - 1)));
  };
  for (const PlanNode* n : Nodes(root)) {
    if (!n->alias.empty()) relations.insert(internal::Lower(n->alias));
    if (!n->cte.empty()) relations.insert(internal::Lower(n->cte));
    switch (n->kind) {
      case NodeKind::kOpaque:
        return std::nullopt;
      case NodeKind::kScan:
        if (!n->scan.column_aliases.empty()) return std::nullopt;
        for (const auto& part : n->scan.name) relations.insert(internal::Lower(part));
        if (!n->scan.alias.empty()) relations.insert(internal::Lower(n->scan.alias));
        break;
      case NodeKind::kJoin: {
        const JoinInfo& j = n->join;
        if (j.equi_keys.empty() && !j.residual && j.using_columns.empty() &&
            j.kind != JoinKind::kCross && j.kind != JoinKind::kPositional) {
          return std::nullopt;
        }
        for (const auto& [l, r] : j.equi_keys) {
          expr(l);
          expr(r);
        }
        if (j.residual) expr(*j.residual);
        if (j.time_bound) {
          for (const Expr* e : {&j.time_bound->left_time, &j.time_bound->right_time,
                                &j.time_bound->lower, &j.time_bound->upper}) {
            expr(*e);
          }
        }
        for (const auto& c : j.using_columns) names.insert(internal::Lower(c));
        break;
      }
      case NodeKind::kWindowAssign:
        text(n->window.time_column);
        for (const auto& k : n->window.partition_keys) text(k);
        break;
      default:
        break;
    }
    const bool passes_through = n->kind == NodeKind::kProject && whole.count(n) == 0;
    for (const auto& e : n->exprs) {
      if (passes_through && e.kind == ExprKind::kStar) {
        // Its columns reach only references by name. EXCLUDE's columns must
        // still be there (DuckDB checks them); a REPLACE expression reads
        // columns the plan does not see (it keeps no expression).
        for (const auto& x : e.star_exclude) names.insert(internal::Lower(x));
        if (!e.star_replace.empty()) unbounded = true;
        continue;
      }
      expr(e);
    }
    for (const auto* list : {&n->group_keys, &n->aggregates, &n->scan.args}) {
      for (const auto& e : *list) expr(e);
    }
    if (n->predicate) expr(*n->predicate);
    for (const auto& k : n->order) expr(k.expr);
    for (const auto& row : n->rows) {
      for (const auto& e : row) expr(e);
    }
    if (unbounded) return std::nullopt;
  }
  for (const auto& r : relations) {
    if (bare.count(r) > 0) return std::nullopt;
  }
  return names;
}

std::vector<const ScanInfo*> PlanInputs(const PlanNode& root) {
  std::vector<std::pair<TextPos, const ScanInfo*>> scans;
  std::vector<const PlanNode*> nodes = Nodes(root);
  for (const PlanNode* n : nodes) {
    if (n->kind == NodeKind::kScan && n->scan.kind == ScanKind::kDataset) {
      scans.emplace_back(n->pos, &n->scan);
    }
  }
  std::stable_sort(scans.begin(), scans.end(), [](const auto& a, const auto& b) {
    auto key = [](const TextPos& p) {
      return p.known() ? std::pair<int, int>{p.line, p.column} : std::pair<int, int>{1 << 30, 0};
    };
    return key(a.first) < key(b.first);
  });
  std::vector<const ScanInfo*> out;
  std::set<std::string> seen;
  for (const auto& [pos, scan] : scans) {
    if (seen.insert(internal::Lower(scan->Joined())).second) out.push_back(scan);
  }
  return out;
}

const PlanNode* RowPathAggregate(const PlanNode& root) {
  const PlanNode* n = &root;
  while (n) {
    switch (n->kind) {
      case NodeKind::kAggregate:
        return n;
      case NodeKind::kProject:
      case NodeKind::kFilter:
      case NodeKind::kSort:
      case NodeKind::kLimit:
      case NodeKind::kDistinct:
        n = n->inputs.empty() ? nullptr : n->input();
        break;
      case NodeKind::kUnion:
        for (const auto& in : n->inputs) {
          if (const PlanNode* a = RowPathAggregate(*in)) return a;
        }
        return nullptr;
      case NodeKind::kJoin:
        for (const auto& in : n->inputs) {
          if (const PlanNode* a = RowPathAggregate(*in)) return a;
        }
        return nullptr;
      case NodeKind::kOpaque:
        // PIVOT aggregates; other opaque constructs are not seen into.
        return n->opaque_reason == "PIVOT" ? n : nullptr;
      default:
        return nullptr;
    }
  }
  return nullptr;
}

const PlanNode* AggregateWindow(const PlanNode& aggregate) {
  if (aggregate.kind != NodeKind::kAggregate || aggregate.inputs.empty()) return nullptr;
  const PlanNode* n = aggregate.input();
  while (n) {
    if (n->kind == NodeKind::kWindowAssign) return n;
    if (n->kind == NodeKind::kFilter || n->kind == NodeKind::kProject) {
      n = n->inputs.empty() ? nullptr : n->input();
      continue;
    }
    if (n->kind == NodeKind::kJoin) {
      for (const auto& in : n->inputs) {
        if (in->kind == NodeKind::kWindowAssign) return in.get();
      }
    }
    return nullptr;
  }
  return nullptr;
}

std::string ToText(const PlanNode& root, bool with_schemas) {
  std::ostringstream out;
  Print(root, 0, with_schemas, out);
  return out.str();
}

std::string ToJson(const PlanNode& root) { return JsonText(NodeJson(root), 2); }

}  // namespace thund::plan
