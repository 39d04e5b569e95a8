// UpdateKeyColumns (output_mode.h): which output columns of an aggregating
// query are its key, read from the query's logical plan (thund/plan.h).
#include <map>

#include "engine/stream/output_mode.h"
#include "ir/validate_internal.h"
#include "sql/sql_analysis.h"

namespace thund::engine::stream {
namespace {

using internal::Lower;
using plan::Expr;
using plan::ExprKind;
using plan::NodeKind;
using plan::PlanNode;

struct OutputColumn {
  std::string name;  // may be empty for an unnamed aggregate
  bool key = false;
};

bool HasAggregate(const Expr& e) {
  if (e.kind == ExprKind::kSubquery) return false;
  if (e.kind == ExprKind::kAggregate) return true;
  for (const auto& a : e.args) {
    if (HasAggregate(a)) return true;
  }
  return false;
}

arrow::Status Unsupported(const std::string& what) {
  return arrow::Status::Invalid(
      "Update mode cannot tell the key columns of this query: ", what,
      ". Compute the aggregation in the outermost SELECT (or a subquery/CTE it selects from "
      "directly), or use Complete mode");
}

arrow::Result<std::string> KeyName(const Expr& item) {
  if (!item.alias.empty()) return item.alias;
  if (item.kind == ExprKind::kColumn) return item.name;
  return arrow::Status::Invalid(
      "Update mode keys on the non-aggregate output columns, and one of them is an "
      "expression without a name (",
      item.pos.known() ? "line " + std::to_string(item.pos.line) + ", column " +
                             std::to_string(item.pos.column)
                       : std::string("'" + item.sql + "'"),
      "): give it an alias (AS name)");
}

arrow::Result<OutputColumn> Column(const Expr& item, bool key) {
  OutputColumn c;
  c.key = key;
  if (key) {
    ARROW_ASSIGN_OR_RAISE(c.name, KeyName(item));
  } else {
    c.name = item.alias;
  }
  return c;
}

bool PlainStar(const Expr& e) {
  return e.sql == "*" || (e.sql.size() > 2 && e.sql.compare(e.sql.size() - 2, 2, ".*") == 0 &&
                          e.sql.find(' ') == std::string::npos);
}

arrow::Result<std::vector<OutputColumn>> Columns(const PlanNode& node);

// A SELECT that aggregates itself: non-aggregate items are keys.
arrow::Result<std::vector<OutputColumn>> OwnColumns(const PlanNode& project) {
  std::vector<OutputColumn> out;
  for (const auto& item : project.exprs) {
    if (item.kind == ExprKind::kStar) {
      return Unsupported("SELECT * over an aggregation in the same SELECT");
    }
    ARROW_ASSIGN_OR_RAISE(auto c, Column(item, !HasAggregate(item)));
    out.push_back(std::move(c));
  }
  return out;
}

// A projection over an aggregating relation: an item is a key unless it
// reads one of the relation's aggregate columns.
arrow::Result<std::vector<OutputColumn>> Projected(const PlanNode& project,
                                                   const std::vector<OutputColumn>& inner) {
  std::map<std::string, bool> inner_key;
  for (const auto& c : inner) {
    if (!c.name.empty()) inner_key[Lower(c.name)] = c.key;
  }
  std::vector<OutputColumn> out;
  for (const auto& item : project.exprs) {
    if (item.kind == ExprKind::kStar) {
      if (!PlainStar(item)) {
        return Unsupported("a SELECT * with EXCLUDE/REPLACE/COLUMNS over an aggregation");
      }
      out.insert(out.end(), inner.begin(), inner.end());
      continue;
    }
    bool key = true;
    for (const auto& r : item.Columns()) {
      auto it = inner_key.find(Lower(r));
      // An unnamed inner aggregate cannot be referenced by name; a ref not
      // found inside is a struct field or outer name: not an aggregate.
      if (it != inner_key.end() && !it->second) key = false;
    }
    ARROW_ASSIGN_OR_RAISE(auto c, Column(item, key));
    out.push_back(std::move(c));
  }
  return out;
}

arrow::Result<std::vector<OutputColumn>> Columns(const PlanNode& node) {
  switch (node.kind) {
    case NodeKind::kSort:
    case NodeKind::kLimit:
    case NodeKind::kDistinct:
    case NodeKind::kFilter:
      return Columns(*node.input());
    case NodeKind::kUnion:
      if (node.inputs.empty() || !plan::RowPathAggregate(*node.input(0))) {
        return Unsupported("the aggregation is not in the first branch of a set operation");
      }
      return Columns(*node.input(0));
    case NodeKind::kProject: {
      // The same block's aggregate sits right below (through HAVING).
      const PlanNode* below = node.input();
      while (below->kind == NodeKind::kFilter && below->filter_clause == "having") {
        below = below->input();
      }
      if (below->kind == NodeKind::kAggregate) return OwnColumns(node);
      // Else the block reads one relation (through WHERE) that aggregates.
      while (below->kind == NodeKind::kFilter && below->filter_clause == "where") {
        below = below->input();
      }
      const bool derived = below->kind == NodeKind::kProject || below->kind == NodeKind::kSort ||
                           below->kind == NodeKind::kLimit || below->kind == NodeKind::kDistinct ||
                           below->kind == NodeKind::kUnion ||
                           (below->kind == NodeKind::kFilter && below->filter_clause == "qualify");
      if (!derived || !plan::RowPathAggregate(*below)) {
        return Unsupported("the aggregation is inside a join or another nested relation");
      }
      ARROW_ASSIGN_OR_RAISE(auto inner, Columns(*below));
      return Projected(node, inner);
    }
    default:
      return Unsupported(std::string("an unexpected ") + plan::Name(node.kind));
  }
}

}  // namespace

arrow::Result<std::vector<std::string>> UpdateKeyColumns(const std::string& duckdb_select_sql) {
  ARROW_ASSIGN_OR_RAISE(plan::PlanPtr root, sql::PlanQuery(duckdb_select_sql));
  if (!plan::RowPathAggregate(*root)) return std::vector<std::string>{};
  ARROW_ASSIGN_OR_RAISE(auto columns, Columns(*root));
  std::vector<std::string> keys;
  for (const auto& c : columns) {
    if (c.key) keys.push_back(c.name);
  }
  return keys;
}

}  // namespace thund::engine::stream
