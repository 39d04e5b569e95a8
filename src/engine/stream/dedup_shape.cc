#include "engine/stream/dedup_shape.h"

#include "ir/validate_internal.h"

namespace thund::engine::stream {
namespace {

using plan::Expr;
using plan::ExprKind;
using plan::NodeKind;
using plan::PlanNode;

// The streams a subtree scans, and whether everything in it is row by row
// (filters, projections and scans only).
bool RowByRow(const PlanNode& n, const std::function<bool(const std::string&)>& is_stream,
              std::vector<std::string>* streams) {
  switch (n.kind) {
    case NodeKind::kScan:
      if (n.scan.kind == plan::ScanKind::kDataset && is_stream(n.scan.Joined())) {
        streams->push_back(n.scan.Joined());
      }
      return true;
    case NodeKind::kFilter:
    case NodeKind::kProject:
      for (const auto& e : n.exprs) {
        if (e.kind == ExprKind::kWindowFunction || e.kind == ExprKind::kSubquery) return false;
      }
      return RowByRow(*n.input(), is_stream, streams);
    default:
      return false;
  }
}

// `rn = 1`, `rn <= 1` or `rn < 2` (either side): the column compared.
std::string FirstRankColumn(const Expr& p) {
  if (p.kind != ExprKind::kOperator || p.args.size() != 2) return "";
  const Expr *col = &p.args[0], *lit = &p.args[1];
  std::string op = p.name;
  if (col->kind != ExprKind::kColumn) {
    std::swap(col, lit);
    if (op == "<=") op = ">=";
    if (op == "<") op = ">";
  }
  if (col->kind != ExprKind::kColumn || lit->kind != ExprKind::kLiteral) return "";
  const bool first = (op == "=" && lit->sql == "1") || (op == "<=" && lit->sql == "1") ||
                     (op == "<" && lit->sql == "2");
  return first ? internal::Lower(col->name) : "";
}

}  // namespace

DedupShape AnalyzeDedup(const PlanNode& root,
                        const std::function<bool(const std::string&)>& is_stream) {
  DedupShape out;
  const PlanNode* n = &root;
  if (n->kind == NodeKind::kSort) n = n->input();
  if (n->kind == NodeKind::kDistinct) {
    if (!n->exprs.empty()) {
      out.why = "Distinct: DISTINCT ON over a stream";
      return out;
    }
    const PlanNode* proj = n->input();
    std::vector<std::string> streams;
    if (proj->kind != NodeKind::kProject || !RowByRow(*proj, is_stream, &streams) ||
        streams.size() != 1) {
      out.why = "Distinct: SELECT DISTINCT over anything but filters and projections of one "
                "stream";
      return out;
    }
    for (const auto& e : proj->exprs) {
      if (e.kind == ExprKind::kColumn) out.passed_columns.push_back({e.OutputName(), e.name});
    }
    out.input = streams[0];
    out.ok = true;
    return out;
  }
  // [Project] <- Filter(rn = 1) <- Project(row_number() ...)
  if (n->kind == NodeKind::kProject && n->input()->kind == NodeKind::kFilter) n = n->input();
  if (n->kind != NodeKind::kFilter || !n->predicate ||
      n->input()->kind != NodeKind::kProject) {
    out.why = "not a deduplication";
    return out;
  }
  const std::string rn = FirstRankColumn(*n->predicate);
  const PlanNode* ranked = n->input();
  const Expr* rank = nullptr;
  for (const auto& e : ranked->exprs) {
    if (e.kind == ExprKind::kWindowFunction && internal::Lower(e.OutputName()) == rn) rank = &e;
    if (e.kind == ExprKind::kWindowFunction && internal::Lower(e.OutputName()) != rn) {
      out.why = "Project: window function " + e.sql + " over a stream";
      return out;
    }
  }
  if (rn.empty() || !rank || rank->name != "row_number") {
    out.why = "Filter: not a row_number() = 1 deduplication";
    return out;
  }
  std::vector<std::string> streams;
  const PlanNode* in = ranked->input();
  // The ranked rows must be the stream's own rows (the operator keeps them
  // as candidates): filters over its scan.
  const PlanNode* below = in;
  while (below->kind == NodeKind::kFilter) below = below->input();
  if (below->kind != NodeKind::kScan || !RowByRow(*in, is_stream, &streams) ||
      streams.size() != 1) {
    out.why = "Project: row_number() over anything but the rows of one stream (filtered)";
    return out;
  }
  const int orders = static_cast<int>(rank->args.size()) - rank->function_args -
                     rank->partition_args;
  if (rank->partition_args == 0 || orders != 1 ||
      rank->args.back().kind != ExprKind::kColumn) {
    out.why = "Project: " + rank->sql + " must partition by keys and order by one column";
    return out;
  }
  for (int i = rank->function_args; i < rank->function_args + rank->partition_args; ++i) {
    if (rank->args[i].kind != ExprKind::kColumn) {
      out.why = "Project: " + rank->sql + " must partition by columns";
      return out;
    }
    out.partition_columns.push_back(rank->args[i].name);
  }
  out.order_column = rank->args.back().name;
  out.order_descending = !rank->order_descending.empty() && rank->order_descending.back();
  out.ranked_input = in;
  out.input = streams[0];
  out.first_row = true;
  out.ok = true;
  return out;
}

}  // namespace thund::engine::stream
