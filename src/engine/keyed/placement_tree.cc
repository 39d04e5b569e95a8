#include "engine/keyed/placement_tree.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <set>
#include "common/text.h"

namespace thund::engine::keyed::placement_internal {

std::string Lower(std::string s) { return text::AsciiLower(s); }

namespace {

using plan::Expr;
using plan::ExprKind;
using plan::NodeKind;
using plan::PlanNode;

bool Any(const Expr& e, const std::function<bool(const Expr&)>& pred) {
  if (pred(e)) return true;
  for (const auto& a : e.args) {
    if (Any(a, pred)) return true;
  }
  return e.filter && Any(*e.filter, pred);
}

bool HasWindowFunction(const Expr& e) {
  return Any(e, [](const Expr& x) { return x.kind == ExprKind::kWindowFunction; });
}

bool HasAggregateOrSubquery(const Expr& e) {
  return Any(e, [](const Expr& x) {
    return x.kind == ExprKind::kSubquery || x.kind == ExprKind::kWindowFunction ||
           x.kind == ExprKind::kAggregate;
  });
}

// The node below `n` through the filters of one clause ("where", "having").
const PlanNode* Below(const PlanNode* n, const char* clause) {
  while (n->kind == NodeKind::kFilter && n->filter_clause == clause) n = n->input();
  return n;
}

class Planner {
 public:
  explicit Planner(const std::vector<SourceSchema>& sources) : sources_(sources) {}

  QueryColumns Node(const PlanNode& node) {
    if (!node.cte.empty()) return Opaque("the query has a WITH clause");
    switch (node.kind) {
      case NodeKind::kLimit:
        return Opaque("the query has a LIMIT");
      case NodeKind::kDistinct:
        if (!node.exprs.empty()) return Opaque("the query has DISTINCT ON");
        return Node(*node.input());
      case NodeKind::kSort:
        return Node(*node.input());
      case NodeKind::kFilter:
        if (node.filter_clause == "qualify") return Opaque("the query uses window functions");
        return Opaque("the query filters after its SELECT");
      case NodeKind::kProject:
        return Select(node);
      case NodeKind::kUnion:
        return SetOperation(node);
      default:
        return Opaque(std::string("the query is a ") + plan::Name(node.kind));
    }
  }

 private:
  static QueryColumns Opaque(std::string why) {
    QueryColumns r;
    r.opaque = true;
    r.why = std::move(why);
    return r;
  }

  QueryColumns SetOperation(const PlanNode& node) {
    const bool by_name =
        node.set_op == plan::SetOp::kUnionByName || node.set_op == plan::SetOp::kUnionAllByName;
    if (node.set_op != plan::SetOp::kUnion && node.set_op != plan::SetOp::kUnionAll && !by_name) {
      std::string op = plan::Name(node.set_op);
      std::transform(op.begin(), op.end(), op.begin(), ::toupper);
      return Opaque("the query uses " + op.substr(0, op.find(' ')));
    }
    QueryColumns out;
    for (size_t b = 0; b < node.inputs.size(); ++b) {
      QueryColumns branch = Node(*node.input(b));
      if (branch.opaque) return branch;
      if (b == 0) {
        out.columns = branch.columns;
        continue;
      }
      for (size_t i = 0; i < out.columns.size(); ++i) {
        const OutColumn* other = nullptr;
        if (!by_name) {
          if (i < branch.columns.size()) other = &branch.columns[i];
        } else {
          for (const auto& c : branch.columns) {
            if (Lower(c.name) == Lower(out.columns[i].name)) other = &c;
          }
        }
        if (other == nullptr || !other->plain) {
          out.columns[i].plain = false;
          out.columns[i].origins.clear();
          continue;
        }
        out.columns[i].origins.insert(out.columns[i].origins.end(), other->origins.begin(),
                                      other->origins.end());
      }
    }
    return out;
  }

  // Relations of a FROM clause, left to right.
  std::vector<Relation> From(const PlanNode& node, bool preserved, std::string* why) {
    if (!node.cte.empty()) {
      Relation rel;
      rel.opaque = true;
      rel.alias = node.alias;
      *why = "the query has a WITH clause";
      return {rel};
    }
    if (node.kind == NodeKind::kScan && node.scan.kind == plan::ScanKind::kDataset) {
      Relation rel;
      const std::string table = node.scan.name.empty() ? "" : node.scan.name.back();
      rel.alias = node.scan.alias.empty() ? table : node.scan.alias;
      rel.preserved = preserved;
      const SourceSchema* src = nullptr;
      for (const auto& s : sources_) {
        if (Lower(s.name) == Lower(table) && node.scan.name.size() == 1) src = &s;
      }
      if (src == nullptr) {
        rel.opaque = true;
        *why = "'" + table + "' is not a source of this write";
        return {rel};
      }
      for (const auto& f : src->schema->fields()) {
        rel.columns.push_back(OutColumn{f->name(), true, {Origin{src->name, f->name()}}});
      }
      const auto& names = node.scan.column_aliases;
      for (size_t i = 0; i < names.size() && i < rel.columns.size(); ++i) {
        rel.columns[i].name = names[i];
      }
      return {rel};
    }
    if (node.kind == NodeKind::kJoin) {
      using plan::JoinKind;
      bool left_ok = false, right_ok = false, right_visible = true;
      switch (node.join.kind) {
        case JoinKind::kPositional:
          *why = "a POSITIONAL JOIN pairs rows by position";
          break;
        case JoinKind::kInner:
        case JoinKind::kCross:
        case JoinKind::kAsOf:
          left_ok = right_ok = true;
          break;
        case JoinKind::kLeft:
          left_ok = true;
          break;
        case JoinKind::kRight:
          right_ok = true;
          break;
        case JoinKind::kSemi:
        case JoinKind::kAnti:
          left_ok = true;
          right_visible = false;
          break;
        case JoinKind::kFull:
          *why = "a FULL join can null-supply both sides";
          break;
      }
      std::vector<Relation> out = From(*node.input(0), preserved && left_ok, why);
      std::vector<Relation> right = From(*node.input(1), preserved && right_ok, why);
      for (auto& r : right) r.visible = r.visible && right_visible;
      out.insert(out.end(), right.begin(), right.end());
      return out;
    }
    if (node.kind == NodeKind::kProject || node.kind == NodeKind::kUnion ||
        node.kind == NodeKind::kSort || node.kind == NodeKind::kLimit ||
        node.kind == NodeKind::kDistinct || node.kind == NodeKind::kFilter) {
      // A derived table.
      QueryColumns sub = Node(node);
      Relation rel;
      rel.alias = node.alias;
      rel.preserved = preserved;
      rel.opaque = sub.opaque;
      rel.columns = sub.columns;
      if (sub.opaque) *why = sub.why;
      return {rel};
    }
    Relation rel;
    rel.opaque = true;
    rel.alias = node.kind == NodeKind::kScan ? node.scan.alias : node.alias;
    return {rel};  // table functions, VALUES, ...: no source columns
  }

  // Resolves a column reference in `rels`.
  std::optional<OutColumn> Column(const std::vector<Relation>& rels, const Expr& ref) {
    const std::string col = Lower(ref.name);
    std::vector<const OutColumn*> found;
    bool preserved = true;
    for (const auto& rel : rels) {
      if (!rel.visible) continue;
      if (!ref.qualifier.empty() && Lower(rel.alias) != Lower(ref.qualifier.back())) continue;
      for (const auto& c : rel.columns) {
        if (Lower(c.name) == col) {
          found.push_back(&c);
          preserved = preserved && rel.preserved && !rel.opaque;
        }
      }
    }
    if (found.size() != 1 || !preserved) return std::nullopt;  // ambiguous/USING/null-supplied
    return *found[0];
  }

  QueryColumns Select(const PlanNode& project) {
    const PlanNode* below = Below(project.input(), "having");
    if (below->kind == NodeKind::kAggregate || below != project.input()) {
      return Opaque("the query aggregates (GROUP BY / HAVING)");
    }
    for (const auto& e : project.exprs) {
      if (HasWindowFunction(e)) return Opaque("the query uses window functions");
    }
    std::string why;
    std::vector<Relation> rels;
    const PlanNode* from = Below(below, "where");
    if (from->kind != NodeKind::kValues || !from->rows.empty()) rels = From(*from, true, &why);
    QueryColumns out;
    for (const auto& expr : project.exprs) {
      if (expr.kind == ExprKind::kColumn) {
        auto c = Column(rels, expr);
        OutColumn oc = c.value_or(OutColumn{});
        oc.name = expr.alias.empty() ? expr.name : expr.alias;
        if (!c || !c->plain) {
          oc.plain = false;
          oc.origins.clear();
        }
        out.columns.push_back(std::move(oc));
      } else if (expr.kind == ExprKind::kStar) {
        std::set<std::string> excluded, replaced;
        for (const auto& e : expr.star_exclude) excluded.insert(Lower(e));
        for (const auto& e : expr.star_replace) replaced.insert(Lower(e));
        const std::string qualifier = expr.qualifier.empty() ? "" : Lower(expr.qualifier.back());
        for (const auto& rel : rels) {
          if (!rel.visible || (!qualifier.empty() && Lower(rel.alias) != qualifier)) continue;
          if (rel.opaque) return Opaque(why.empty() ? "`*` over an unknown relation" : why);
          for (OutColumn c : rel.columns) {
            if (excluded.count(Lower(c.name))) continue;
            if (replaced.count(Lower(c.name)) || !rel.preserved) {
              c.plain = false;
              c.origins.clear();
            }
            out.columns.push_back(std::move(c));
          }
        }
      } else if (expr.kind == ExprKind::kOther && expr.name == "columns") {
        return Opaque("the query uses COLUMNS(...)");
      } else {
        out.columns.push_back(OutColumn{expr.alias, false, {}});
      }
    }
    if (out.why.empty()) out.why = why;
    return out;
  }

  const std::vector<SourceSchema>& sources_;
};

}  // namespace

QueryColumns AnalyzeQuery(const plan::PlanNode& root, const std::vector<SourceSchema>& sources,
                          std::map<std::string, int>* references) {
  // Every read of a relation anywhere (FROM, subqueries in WHERE, ...).
  for (const PlanNode* n : plan::Nodes(root)) {
    if (n->kind == NodeKind::kScan && n->scan.kind == plan::ScanKind::kDataset &&
        !n->scan.name.empty()) {
      ++(*references)[Lower(n->scan.name.back())];
    }
  }
  return Planner(sources).Node(root);
}

bool IsRowWise(const plan::PlanNode& root, const std::vector<SourceSchema>& sources) {
  if (sources.size() != 1 || root.kind != NodeKind::kProject) return false;
  const PlanNode* below = root.input();
  std::vector<const Expr*> checked;
  for (const auto& e : root.exprs) checked.push_back(&e);
  while (below->kind == NodeKind::kFilter && below->filter_clause == "where") {
    checked.push_back(&*below->predicate);
    below = below->input();
  }
  if (below->kind != NodeKind::kScan || below->scan.kind != plan::ScanKind::kDataset ||
      !below->cte.empty() || below->scan.name.size() != 1 ||
      Lower(below->scan.name[0]) != Lower(sources[0].name)) {
    return false;
  }
  return std::none_of(checked.begin(), checked.end(),
                      [](const Expr* e) { return HasAggregateOrSubquery(*e); });
}

}  // namespace thund::engine::keyed::placement_internal
