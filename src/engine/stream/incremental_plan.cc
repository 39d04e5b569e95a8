#include "engine/stream/incremental_plan.h"

#include <algorithm>

#include <arrow/status.h>

#include "engine/stream/cdc_plan.h"
#include "ir/validate_internal.h"
#include "thund/validate.h"

namespace thund::engine::stream {
namespace {

using plan::Expr;
using plan::ExprKind;
using plan::NodeKind;
using plan::PlanNode;

bool HasKind(const Expr& e, ExprKind k) {
  if (e.kind == k) return true;
  for (const auto& a : e.args) {
    if (HasKind(a, k)) return true;
  }
  return e.filter && HasKind(*e.filter, k);
}

const Expr* FindKind(const std::vector<Expr>& exprs, ExprKind k) {
  for (const auto& e : exprs) {
    if (e.kind == k) return &e;
    if (const Expr* in = FindKind(e.args, k)) return in;
  }
  return nullptr;
}

// The first expression subquery in `e`.
const PlanNode* Subquery(const Expr& e) {
  if (e.kind == ExprKind::kSubquery && e.subquery) return e.subquery.get();
  for (const auto& a : e.args) {
    if (const PlanNode* s = Subquery(a)) return s;
  }
  return e.filter ? Subquery(*e.filter) : nullptr;
}

std::string Label(const PlanNode& n) { return NodeLabel(n); }

class Classifier {
 public:
  Classifier(const std::function<bool(const std::string&)>& is_stream, IncrementalPlan* out)
      : is_stream_(is_stream), out_(out) {}

  // Whether the subtree reads a stream (any scan of one).
  bool ReadsStream(const PlanNode& n) const { return stream::ReadsStream(n, is_stream_); }

  // Checks that `n` is stateless over its streams and records each node's
  // operator. Returns false (with out_->fallback set) when it is not.
  bool Stateless(const PlanNode& n, int depth, bool generated) {
    NodeOperator op{&n, depth, "", ""};
    auto fail = [&](const std::string& why) {
      out_->fallback = Label(n) + ": " + why;
      return false;
    };
    for (const Expr* e : Exprs(n)) {
      if (const PlanNode* s = Subquery(*e); s && ReadsStream(*s)) {
        return fail("a subquery over a stream needs all its rows");
      }
    }
    switch (n.kind) {
      case NodeKind::kScan:
        if (n.scan.kind == plan::ScanKind::kDataset && is_stream_(n.scan.Joined())) {
          op.op = "stream scan: each trigger's new rows";
          streams_.push_back(n.scan.Joined());
        } else {
          op.op = "static scan: read whole";
        }
        break;
      case NodeKind::kFilter:
        op.op = "stateless filter";
        break;
      case NodeKind::kProject:
        if (!generated && ReadsStream(n)) {
          if (const Expr* w = FindKind(n.exprs, ExprKind::kWindowFunction)) {
            return fail("window function " + w->sql + " needs every row of its partition");
          }
        }
        op.op = "stateless projection";
        break;
      case NodeKind::kValues:
        op.op = "constant rows";
        break;
      case NodeKind::kSort:
        op.op = "sort (rows are unordered in a stream: ignored per trigger)";
        break;
      case NodeKind::kWindowAssign:
        if (n.window.shape == plan::WindowShape::kSession) {
          return fail("a session window outside an aggregation");
        }
        op.op = std::string("stateless ") + plan::Name(n.window.shape) + " window assignment";
        generated = true;
        break;
      case NodeKind::kUnion:
        if (n.set_op != plan::SetOp::kUnionAll && n.set_op != plan::SetOp::kUnionAllByName &&
            ReadsStream(n)) {
          return fail(std::string(plan::Name(n.set_op)) +
                      " compares rows across triggers (use UNION ALL, or SELECT DISTINCT over "
                      "a UNION ALL)");
        }
        op.op = "union of streams (UNION ALL)";
        break;
      case NodeKind::kJoin: {
        int streaming = 0;
        for (const auto& in : n.inputs) streaming += ReadsStream(*in) ? 1 : 0;
        if (streaming > 1) {
          return fail("a join of two streams keeps both sides' rows");
        }
        const bool left_stream = !n.inputs.empty() && ReadsStream(*n.inputs[0]);
        const auto k = n.join.kind;
        // Row by row in the stream: inner and cross joins, and the joins that
        // keep or test the stream's rows against the static side.
        const bool ok = k == plan::JoinKind::kInner || k == plan::JoinKind::kCross ||
                        ((k == plan::JoinKind::kSemi || k == plan::JoinKind::kAnti ||
                          k == plan::JoinKind::kLeft) &&
                         left_stream) ||
                        (k == plan::JoinKind::kRight && !left_stream) || streaming == 0;
        if (!ok) {
          return fail(std::string("a ") + plan::Name(k) +
                      " join whose kept side is static needs every stream row");
        }
        op.op = streaming ? "stream-static join: each new stream row against the static side"
                          : "static join";
        break;
      }
      case NodeKind::kAggregate:
        if (ReadsStream(n)) return fail("an aggregation below the outermost SELECT block");
        op.op = "static aggregation";
        break;
      case NodeKind::kDistinct:
        if (ReadsStream(n)) {
          return fail("SELECT DISTINCT below the outermost SELECT keeps every distinct row");
        }
        op.op = "static distinct";
        break;
      case NodeKind::kLimit:
        if (ReadsStream(n)) return fail("LIMIT over a stream has no incremental meaning");
        op.op = "static limit";
        break;
      case NodeKind::kOpaque:
        if (ReadsStream(n)) return fail("thund cannot see into this construct");
        op.op = "static";
        break;
    }
    out_->nodes.push_back(op);
    for (const auto& in : n.inputs) {
      if (!Stateless(*in, depth + 1, generated)) return false;
    }
    return true;
  }

  std::vector<std::string> streams_;

 private:
  static std::vector<const Expr*> Exprs(const PlanNode& n) {
    std::vector<const Expr*> out;
    for (const auto& e : n.exprs) out.push_back(&e);
    for (const auto& e : n.group_keys) out.push_back(&e);
    for (const auto& e : n.aggregates) out.push_back(&e);
    if (n.predicate) out.push_back(&*n.predicate);
    return out;
  }

  const std::function<bool(const std::string&)>& is_stream_;
  IncrementalPlan* out_;
};

// Whether a session window's partition is exactly the aggregation's other
// grouping keys (always so for session_window(), whose sessions the dialect
// partitions by them; SESSION(... PARTITION BY k) must group by k alone).
bool SessionPartitionIsGroups(const PlanNode& agg, const PlanNode& window) {
  if (!window.window.from_table_function) return true;
  std::vector<std::string> keys, parts;
  for (const auto& k : agg.group_keys) {
    const std::string n = internal::Lower(k.name);
    if (k.kind != ExprKind::kColumn) return false;
    if (n != "window_start" && n != "window_end") keys.push_back(n);
  }
  for (const auto& p : window.window.partition_keys) {
    std::string n = internal::Lower(p);
    const size_t dot = n.rfind('.');
    parts.push_back(dot == std::string::npos ? n : n.substr(dot + 1));
  }
  std::sort(keys.begin(), keys.end());
  std::sort(parts.begin(), parts.end());
  return keys == parts;
}

std::string AggregateNames(const PlanNode& agg) {
  std::string out;
  for (const auto& a : agg.aggregates) out += (out.empty() ? "" : ", ") + a.sql;
  return out;
}

}  // namespace

const char* Name(IncrementalOperator op) {
  switch (op) {
    case IncrementalOperator::kStateless:
      return "stateless";
    case IncrementalOperator::kPartialAggregate:
      return "partial aggregate";
    case IncrementalOperator::kRowsAggregate:
      return "rows aggregate";
    case IncrementalOperator::kWindowed:
      return "windowed";
    case IncrementalOperator::kStreamJoin:
      return "stream join";
    case IncrementalOperator::kDedup:
      return "deduplicate";
    case IncrementalOperator::kCdc:
      return "auto cdc";
  }
  return "?";
}

namespace {

using Decomposable = std::function<arrow::Status(const PlanNode& block)>;

void ListNodes(const PlanNode& n, int depth,
               const std::vector<std::pair<const PlanNode*, std::string>>& notes,
               std::vector<NodeOperator>* out);
std::string ReachText(const std::vector<RowReach>& reach, bool windowed);

// The operators of a plan with at most one stateful node, the outermost
// aggregation (kStateless, kPartialAggregate, kRowsAggregate), or the
// aggregation of a join of two streams without a window (kPartialAggregate
// with join_input).
IncrementalPlan PlanOutermost(const PlanNode& root,
                              const std::function<bool(const std::string&)>& is_stream,
                              const Decomposable& decomposable) {
  IncrementalPlan out;
  Classifier c(is_stream, &out);
  const PlanNode* agg = plan::RowPathAggregate(root);
  if (!agg) {
    out.runnable = c.Stateless(root, 0, false);
    out.stream_inputs = c.streams_;
    out.op = IncrementalOperator::kStateless;
    return out;
  }
  // The aggregation must be the outermost SELECT block:
  // [Sort] Project [Filter having] Aggregate.
  std::vector<const PlanNode*> chain;
  const PlanNode* n = &root;
  while (n && n != agg) {
    chain.push_back(n);
    n = n->inputs.size() == 1 ? n->input() : nullptr;
  }
  size_t i = 0;
  if (i < chain.size() && chain[i]->kind == NodeKind::kSort) ++i;
  bool shape_ok = n == agg && i < chain.size() && chain[i]->kind == NodeKind::kProject;
  if (shape_ok) ++i;
  if (shape_ok && i < chain.size() && chain[i]->kind == NodeKind::kFilter &&
      chain[i]->filter_clause == "having") {
    ++i;
  }
  shape_ok = shape_ok && i == chain.size();
  if (!shape_ok || agg->kind != NodeKind::kAggregate) {
    const PlanNode* at = (!chain.empty() && i < chain.size()) ? chain[i] : agg;
    out.fallback = Label(*at) + ": aggregate " + (agg->kind == NodeKind::kAggregate
                                                      ? AggregateNames(*agg)
                                                      : std::string("(PIVOT)")) +
                   " is not the outermost SELECT block (the incremental aggregate runs there)";
    return out;
  }
  if (agg->grouping_sets) {
    out.fallback = Label(*agg) + ": grouping sets (ROLLUP, CUBE, GROUPING SETS) aggregate " +
                   "each set apart";
    return out;
  }
  for (size_t k = 0; k < chain.size(); ++k) {
    NodeOperator op{chain[k], static_cast<int>(k), "", ""};
    op.op = chain[k]->kind == NodeKind::kFilter ? "HAVING over each emitted group"
            : chain[k]->kind == NodeKind::kProject ? "projection of each emitted group"
                                                   : "sort (ignored per trigger)";
    out.nodes.push_back(op);
  }
  const size_t agg_index = out.nodes.size();
  out.nodes.push_back({agg, static_cast<int>(chain.size()), "", ""});
  out.aggregate = agg;
  out.window = plan::AggregateWindow(*agg);
  // The aggregation's input must be stateless over its streams, or (without
  // a window) an inner join of two streams.
  const int below = static_cast<int>(chain.size()) + 1;
  if (!c.Stateless(*agg->input(), below, false)) {
    if (out.window && out.window->window.shape == plan::WindowShape::kSession) {
      // A session window under the aggregation is the aggregate's own.
      out.fallback.clear();
      out.nodes.resize(agg_index + 1);
    } else {
      if (out.window) return out;
      StreamJoinShape j = AnalyzeStreamJoin(*agg->input(), is_stream);
      if (!j.ok) {
        if (j.join && !j.why.empty()) out.fallback = j.why;
        return out;
      }
      out.fallback.clear();
      out.nodes.resize(agg_index + 1);
      out.join_input = true;
      out.reach = j.reach;
      ListNodes(*agg->input(), below,
                {{j.join, "stream join: each side's new rows against the other side's kept "
                          "and new rows; the joined rows go to the aggregation"}},
                &out.nodes);
      for (auto& n : out.nodes) {
        if (n.node == j.join) n.state = ReachText(j.reach, false);
      }
    }
  }
  out.stream_inputs = c.streams_;
  if (out.join_input) {
    out.stream_inputs.clear();
    for (const auto& r : out.reach) out.stream_inputs.push_back(r.input);
  }
  const bool session = out.window && out.window->window.shape == plan::WindowShape::kSession;
  if (session) {
    // The session assignment sits in the window node's subtree (not checked
    // node by node): the streams are its scans.
    out.stream_inputs.clear();
    for (const auto* scan : plan::PlanInputs(*agg)) {
      if (scan->kind == plan::ScanKind::kDataset && is_stream(scan->Joined())) {
        out.stream_inputs.push_back(scan->Joined());
      }
    }
  }
  arrow::Status verdict = decomposable(root);
  if (verdict.ok() && session && !SessionPartitionIsGroups(*agg, *out.window)) {
    verdict = arrow::Status::NotImplemented(
        "SESSION(... PARTITION BY ...) partitions by other keys than the GROUP BY");
  }
  if (verdict.ok()) {
    out.op = IncrementalOperator::kPartialAggregate;
  } else if (verdict.IsNotImplemented()) {
    std::vector<std::string> streams;
    for (const auto& s : out.stream_inputs) {
      if (std::find(streams.begin(), streams.end(), s) == streams.end()) streams.push_back(s);
    }
    if (streams.size() != 1 || out.join_input) {
      out.fallback = Label(*agg) + ": aggregate " + AggregateNames(*agg) + " (" +
                     verdict.message() + ") keeps rows, which needs exactly one stream input";
      return out;
    }
    out.op = IncrementalOperator::kRowsAggregate;
  } else {
    out.fallback = Label(*agg) + ": " + verdict.message();
    return out;
  }
  NodeOperator& a = out.nodes[agg_index];
  const std::string per = out.window ? "(window, group)" : "group";
  if (out.op == IncrementalOperator::kPartialAggregate) {
    a.op = session ? "partial aggregate: DuckDB pre-aggregates each trigger's new rows into "
                     "sessions, which merge with the open sessions of their key"
           : out.join_input ? "partial aggregate: DuckDB pre-aggregates each trigger's new "
                              "joined rows, partials merge into the state"
                            : "partial aggregate: DuckDB pre-aggregates each trigger's new rows, "
                              "partials merge into the state";
    a.state = session ? "one row of partials per open (session, group); a session leaves when "
                        "the watermark passes its end"
                      : "one row of partials per " + per +
                            (out.window ? "; a window leaves when the watermark passes its end"
                                        : "; kept for the stream's life");
  } else {
    a.op = "rows aggregate: aggregates the kept rows when groups are emitted";
    a.state = out.window ? "the input rows of open windows; rows leave when all their windows "
                           "close"
                         : "every input row (no window bounds the state)";
  }
  if (session) {
    out.nodes.push_back(
        {out.window, a.depth + 1,
         out.op == IncrementalOperator::kPartialAggregate
             ? "session windows of each trigger's new rows (merged by the aggregate)"
             : "session windows merged per key over the kept rows",
         ""});
  }
  out.runnable = true;
  return out;
}

// Every node of the plan in pre-order (not into expression subqueries), each
// with its note or the stateless operator its kind is.
void ListNodes(const PlanNode& n, int depth,
               const std::vector<std::pair<const PlanNode*, std::string>>& notes,
               std::vector<NodeOperator>* out) {
  NodeOperator op{&n, depth, "", ""};
  for (const auto& [node, what] : notes) {
    if (node == &n) op.op = what;
  }
  if (op.op.empty()) {
    switch (n.kind) {
      case NodeKind::kScan:
        op.op = n.scan.kind == plan::ScanKind::kDataset ? "scan" : "table function";
        break;
      case NodeKind::kFilter:
        op.op = "filter";
        break;
      case NodeKind::kProject:
        op.op = "projection";
        break;
      case NodeKind::kJoin:
        op.op = "join";
        break;
      default:
        op.op = plan::Name(n.kind);
        break;
    }
  }
  out->push_back(op);
  for (const auto& in : n.inputs) ListNodes(*in, depth + 1, notes, out);
}

std::string ReachText(const std::vector<RowReach>& reach, bool windowed) {
  std::string out;
  for (const auto& r : reach) {
    out += out.empty() ? "" : "; ";
    if (r.unbounded) {
      out += r.input + ": every row (no time bound: grows with the stream unless the flow sets "
             "state_ttl)";
      if (!r.join_key.empty()) {
        out += ", hashed by " + r.join_key + " so a trigger reads only the rows of its keys";
      }
    } else if (windowed) {
      out += r.input + ": rows until W passes " + r.time_column + " + " +
             std::to_string(r.to_us / 1000) + " ms";
    } else {
      out += r.input + ": rows while " + r.time_column + " + " + std::to_string(r.to_us / 1000) +
             " ms >= W";
    }
    if (!windowed && !r.keep_sql.empty()) out += ", only those where " + r.keep_sql;
  }
  return out;
}

// An outer query over a derived table (or CTE reference) that is an
// aggregation without a window (kPartialAggregate, its input stateless or a
// join of two streams). `*found` tells whether such a block was there (its
// fallback is then the most specific one).
IncrementalPlan PlanNested(const PlanNode& root,
                           const std::function<bool(const std::string&)>& is_stream,
                           const Decomposable& decomposable, bool* found) {
  IncrementalPlan out;
  *found = false;
  // Down the outer query's chain of one-input nodes to the first relation
  // its FROM names.
  std::vector<const PlanNode*> outer;
  const PlanNode* n = &root;
  while (n == &root || (n->alias.empty() && n->cte.empty())) {
    const bool chain = n->inputs.size() == 1 &&
                       (n->kind == NodeKind::kProject || n->kind == NodeKind::kFilter ||
                        n->kind == NodeKind::kAggregate || n->kind == NodeKind::kSort ||
                        n->kind == NodeKind::kLimit || n->kind == NodeKind::kDistinct);
    if (!chain) return out;
    outer.push_back(n);
    n = n->input();
  }
  if (!plan::RowPathAggregate(*n)) return out;
  *found = true;
  const PlanNode* block = n;
  for (const PlanNode* o : outer) {
    std::vector<const Expr*> exprs;
    for (const auto& e : o->exprs) exprs.push_back(&e);
    for (const auto& e : o->group_keys) exprs.push_back(&e);
    for (const auto& e : o->aggregates) exprs.push_back(&e);
    if (o->predicate) exprs.push_back(&*o->predicate);
    for (const Expr* e : exprs) {
      if (const PlanNode* s = Subquery(*e); s && stream::ReadsStream(*s, is_stream)) {
        out.fallback = Label(*o) + ": a subquery over a stream needs all its rows";
        return out;
      }
    }
  }
  IncrementalPlan inner = PlanOutermost(*block, is_stream, decomposable);
  if (!inner.runnable) return inner;
  if (inner.op != IncrementalOperator::kPartialAggregate || inner.window) {
    out.fallback = Label(*inner.aggregate) + ": aggregate " + AggregateNames(*inner.aggregate) +
                   (inner.window ? " per window" : " (kept rows)") +
                   " under an outer query (thund runs an outer query over a decomposable "
                   "aggregation without a window)";
    return out;
  }
  out = std::move(inner);
  out.inner_block = block;
  const int shift = static_cast<int>(outer.size());
  for (auto& op : out.nodes) op.depth += shift;
  std::vector<NodeOperator> nodes;
  for (size_t k = 0; k < outer.size(); ++k) {
    nodes.push_back({outer[k], static_cast<int>(k),
                     k == 0 ? "outer query: runs over the aggregation's whole result when it "
                              "changed (Complete), or at the end of input (Append)"
                            : "part of the outer query",
                     ""});
  }
  nodes.insert(nodes.end(), out.nodes.begin(), out.nodes.end());
  out.nodes = std::move(nodes);
  return out;
}

}  // namespace

IncrementalPlan PlanIncremental(const PlanNode& root,
                                const std::function<bool(const std::string&)>& is_stream,
                                const Decomposable& decomposable) {
  IncrementalPlan basic = PlanOutermost(root, is_stream, decomposable);
  if (basic.runnable) return basic;
  // Window-local queries, then a join of two streams.
  WindowLocalShape w = AnalyzeWindowLocal(root, is_stream);
  if (w.ok) {
    IncrementalPlan out;
    out.runnable = true;
    out.op = IncrementalOperator::kWindowed;
    out.reach = w.reach;
    out.emit_delay_us = w.emit_delay_us;
    for (const auto& r : w.reach) out.stream_inputs.push_back(r.input);
    ListNodes(root, 0, w.notes, &out.nodes);
    out.nodes.front().state = "per stream input, the rows of windows still open (" +
                              ReachText(w.reach, true) + ")";
    return out;
  }
  StreamJoinShape j = AnalyzeStreamJoin(root, is_stream);
  if (j.ok) {
    IncrementalPlan out;
    out.runnable = true;
    out.op = IncrementalOperator::kStreamJoin;
    out.reach = j.reach;
    for (const auto& r : j.reach) out.stream_inputs.push_back(r.input);
    const std::string bound = j.reach.front().unbounded ? "equi-join" : "interval join";
    ListNodes(root, 0,
              {{j.join, "stream " + bound + ": each side's new rows against the other side's "
                                        "kept and new rows"}},
              &out.nodes);
    for (auto& n : out.nodes) {
      if (n.node == j.join) n.state = ReachText(j.reach, false);
    }
    return out;
  }
  DedupShape d = AnalyzeDedup(root, is_stream);
  if (d.ok) {
    IncrementalPlan out;
    out.runnable = true;
    out.op = IncrementalOperator::kDedup;
    out.stream_inputs = {d.input};
    out.dedup = d;
    ListNodes(root, 0, {}, &out.nodes);
    NodeOperator& top = out.nodes.front();
    if (d.first_row) {
      top.op = "first row per key: one candidate row per key until the watermark passes it";
      top.state = "a candidate row per undecided key, and every decided key (grows with the "
                  "number of keys)";
    } else {
      top.op = "deduplication: each trigger emits its distinct rows not emitted before";
      top.state = "every distinct row emitted; with the watermark column among the output "
                  "columns, rows older than the watermark leave";
    }
    return out;
  }
  bool nested_found = false;
  IncrementalPlan nested = PlanNested(root, is_stream, decomposable, &nested_found);
  if (nested.runnable) return nested;
  // The most specific reason: the stream join's, the window-local query's
  // when the plan windows a stream, an aggregation's under an outer query,
  // else the outermost aggregation's.
  bool windows_stream = false;
  for (const PlanNode* n : plan::Nodes(root)) {
    windows_stream |= n->kind == NodeKind::kWindowAssign;
  }
  const PlanNode* top = root.kind == NodeKind::kSort ? root.input() : &root;
  if (j.join && !j.why.empty()) {
    basic.fallback = j.why;
  } else if (windows_stream && !w.why.empty()) {
    basic.fallback = w.why;
  } else if (top->kind == NodeKind::kDistinct && !d.why.empty()) {
    basic.fallback = d.why;
  } else if (nested_found && !nested.fallback.empty()) {
    basic.fallback = nested.fallback;
  }
  return basic;
}

namespace {

// The input of `n` when it is the filter `<the window's time column> IS NOT
// NULL` (which window() and the session expansion add; the C++ partials leave
// out rows without a time anyway); else null.
const PlanNode* UnderTimeNotNull(const PlanNode* n, const PlanNode& window) {
  if (!n || n->kind != NodeKind::kFilter || !n->predicate || n->inputs.size() != 1) return nullptr;
  const Expr& p = *n->predicate;
  if (p.kind != ExprKind::kOperator || p.name != "is not null" || p.args.size() != 1 ||
      p.args[0].kind != ExprKind::kColumn) {
    return nullptr;
  }
  if (internal::Lower(p.args[0].name) != internal::Lower(window.window.TimeColumnName())) {
    return nullptr;
  }
  return n->input();
}

// The scan a window reads its rows from when only what the dialect adds lies
// between them: nothing (TUMBLE, HOP) or window()'s time filter, or the
// session expansion of a stream (sql::SessionRelation) with no WHERE of the
// user's folded into it: three SELECT lists that keep every column (a star,
// no REPLACE) and add the session columns, over the time filter. Else null.
const PlanNode* ScanUnderWindow(const PlanNode& window) {
  const PlanNode* n = window.inputs.size() == 1 ? window.input() : nullptr;
  if (window.window.shape != plan::WindowShape::kSession) {
    return n && n->kind == NodeKind::kFilter ? UnderTimeNotNull(n, window) : n;
  }
  for (int i = 0; i < 3; ++i) {
    if (!n || n->kind != NodeKind::kProject || n->exprs.empty() ||
        n->exprs[0].kind != ExprKind::kStar || !n->exprs[0].star_replace.empty() ||
        n->inputs.size() != 1) {
      return nullptr;
    }
    n = n->input();
  }
  return UnderTimeNotNull(n, window);
}

}  // namespace

arrow::Result<FlowIncremental> PlanFlowIncremental(const Pipeline& p, const Flow& flow,
                                                   const plan::PlanNode& root,
                                                   const std::string& state_name,
                                                   bool hop_panes) {
  FlowIncremental out;
  auto dataset = [&](const std::string& name) -> const Dataset* {
    for (const auto& d : p.datasets) {
      if (internal::Lower(d.name) == internal::Lower(name)) return &d;
    }
    return nullptr;
  };
  auto is_stream = [&](const std::string& name) {
    const Dataset* d = dataset(name);
    if (!d) return false;
    if (d->kind == DatasetKind::kStreamingTable) return true;
    for (const Flow* g : p.FlowsInto(d->name)) {
      if (IsStreamingFlow(p, *g)) return true;
    }
    return false;
  };
  int64_t size_us = 0;
  std::vector<std::string> names;
  std::optional<sql::HopPanes> panes;
  if (const plan::PlanNode* agg = plan::RowPathAggregate(root)) {
    if (agg->kind == plan::NodeKind::kAggregate) {
      if (const plan::PlanNode* w = plan::AggregateWindow(*agg)) {
        size_us = w->window.size_us;
        // Panes: the plan's only window, hopping by a slide that divides its
        // size, with no join between the rows and the aggregation.
        int windows = 0, joins = 0;
        for (const plan::PlanNode* n : plan::Nodes(root)) {
          windows += n->kind == NodeKind::kWindowAssign;
          joins += n->kind == NodeKind::kJoin;
        }
        const plan::WindowInfo& wi = w->window;
        if (hop_panes && windows == 1 && joins == 0 &&
            wi.shape == plan::WindowShape::kHopping && wi.slide_us > 0 &&
            wi.size_us > wi.slide_us && wi.size_us % wi.slide_us == 0) {
          panes = sql::HopPanes{wi.size_us / wi.slide_us, wi.slide_us};
        }
      }
    }
  }
  // The output names of the SELECT list (the plan binds them): a grouping
  // key or aggregate replaced by a state column keeps its name.
  const plan::PlanNode* project = &root;
  if (project->kind == plan::NodeKind::kSort && !project->inputs.empty()) {
    project = project->input();
  }
  if (project->kind == plan::NodeKind::kProject) {
    for (const auto& e : project->exprs) names.push_back(e.OutputName());
  }
  auto decomposable = [&](const plan::PlanNode& block) -> arrow::Status {
    if (&block != &root) {
      // A derived table's block (PlanNested): no window, its own names.
      std::vector<std::string> inner_names;
      const plan::PlanNode* b = &block;
      if (b->kind == plan::NodeKind::kSort && !b->inputs.empty()) b = b->input();
      if (b->kind == plan::NodeKind::kProject) {
        for (const auto& e : b->exprs) inner_names.push_back(e.OutputName());
      }
      auto d = sql::DecomposeAggregation(block.sql, state_name, nullptr, 0, std::nullopt,
                                         inner_names);
      if (!d.ok()) return d.status();
      out.agg = *d;
      return arrow::Status::OK();
    }
    auto d = sql::DecomposeAggregation(flow.sql, state_name, nullptr, size_us, panes, names);
    if (!d.ok()) return d.status();
    out.agg = *d;
    return arrow::Status::OK();
  };
  out.plan = PlanIncremental(root, is_stream, decomposable);
  if (flow.cdc) PlanCdcOperator(*flow.cdc, &out.plan);
  if (!out.plan.runnable) return out;
  // The partial aggregation in C++ needs the window right on the stream's
  // scan, with only what the dialect adds between them (ScanUnderWindow): the
  // input rows are then exactly what the window assigns.
  if (out.agg.direct.usable) {
    const PlanNode* agg = out.plan.aggregate;
    const PlanNode* w = agg && agg->inputs.size() == 1 ? agg->input() : nullptr;
    const bool session = w && w->window.shape == plan::WindowShape::kSession;
    const PlanNode* scan = w ? ScanUnderWindow(*w) : nullptr;
    const bool fits =
        w && w == out.plan.window && scan && scan->kind == NodeKind::kScan &&
        scan->scan.kind == plan::ScanKind::kDataset && out.plan.stream_inputs.size() == 1 &&
        internal::Lower(scan->scan.Joined()) == internal::Lower(out.plan.stream_inputs[0]) &&
        (w->window.shape == plan::WindowShape::kTumbling || session ||
         (w->window.shape == plan::WindowShape::kHopping && out.agg.pane_windows > 0));
    if (!fits) out.agg.direct = {};
  }
  if (out.agg.direct.usable) {
    for (auto& n : out.plan.nodes) {
      if (n.node != out.plan.aggregate) continue;
      n.op = out.plan.window && out.plan.window->window.shape == plan::WindowShape::kSession
                 ? "partial aggregate: each trigger's new rows fold into sessions and partials "
                   "in C++ (no query), which merge with the open sessions of their key"
                 : "partial aggregate: each trigger's new rows fold into partials in C++ (no "
                   "query), which merge into the state";
    }
  }
  if (out.agg.pane_windows > 0) {
    for (auto& n : out.plan.nodes) {
      if (n.node != out.plan.window) continue;
      n.op = "hopping windows as panes: each row joins its newest window only (one pane per "
             "slide); the merge expands each pane's partials to the " +
             std::to_string(out.agg.pane_windows) + " windows that hold it";
    }
  }
  for (const auto& in : out.plan.stream_inputs) {
    const Dataset* d = dataset(in);
    // A stream view hands each trigger's rows to its readers like a
    // streaming table; any other view over streams is a query over them.
    if (d && (d->kind == DatasetKind::kView || d->kind == DatasetKind::kTemporaryView) &&
        !IsStreamView(p, *d)) {
      out.plan.runnable = false;
      out.plan.fallback = "Scan " + in + ": a view over streams is read whole (read its "
                          "streams instead)";
      return out;
    }
    for (const Flow* g : p.FlowsInto(d ? d->name : in)) {
      const OutputMode m = g->streaming ? g->streaming->output_mode : OutputMode::kAppend;
      // Update without aggregation appends (as in Spark).
      bool aggregates = false;
      if (!g->source && m == OutputMode::kUpdate) {
        auto facts = sql::AnalyzeSql(g->sql);
        aggregates = !facts.ok() || facts->aggregates;
      }
      if (g->cdc || m == OutputMode::kComplete || aggregates) {
        out.plan.runnable = false;
        out.plan.fallback = "Scan " + in + ": flow '" + g->name + "' writes it " +
                            (g->cdc ? std::string("with AUTO CDC")
                                    : std::string("in ") + Name(m) + " mode") +
                            ", so it is not an append-only stream";
        return out;
      }
    }
  }
  return out;
}

std::string DescribeIncremental(const IncrementalPlan& p) {
  if (!p.runnable) return "falls back to Recompute: " + p.fallback + "\n";
  std::string out;
  for (const auto& n : p.nodes) {
    std::string name = n.node ? plan::Name(n.node->kind) : "AutoCdc";
    if (n.node && n.node->kind == NodeKind::kScan) name += " " + n.node->scan.Joined();
    out += std::string(2 * n.depth, ' ') + name + "  -> " + n.op;
    if (!n.state.empty()) out += "; state: " + n.state;
    out += "\n";
  }
  return out;
}

}  // namespace thund::engine::stream
