#include "engine/stream/window_panes.h"

#include <cctype>
#include <map>
#include <numeric>

#include "engine/duckdb/sql_quote.h"
#include "engine/stream/window_local.h"
#include "ir/validate_internal.h"

namespace thund::engine::stream {
namespace {

using plan::Expr;
using plan::ExprKind;
using plan::NodeKind;
using plan::PlanNode;

// A plain identifier (as the window's time column must be written).
bool PanePlainIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// What a column of the window assignment's output is: start, end, or the
// struct of both (window()); nullopt for anything else.
enum class PaneWindowPart { kStart, kEnd, kStruct };
std::optional<PaneWindowPart> PaneWindowColumn(const Expr& e, const plan::WindowInfo& w) {
  if (e.kind != ExprKind::kColumn) return std::nullopt;
  const std::string name = internal::Lower(e.name);
  bool is_output = false;
  for (const auto& c : w.output_columns) is_output |= internal::Lower(c) == name;
  if (is_output && name == "window_start") return PaneWindowPart::kStart;
  if (is_output && name == "window_end") return PaneWindowPart::kEnd;
  if (is_output && e.qualifier.empty()) return PaneWindowPart::kStruct;
  // window.start / window.end of the struct window() adds.
  if (!e.qualifier.empty()) {
    bool struct_output = false;
    const std::string owner = internal::Lower(e.qualifier.back());
    for (const auto& c : w.output_columns) struct_output |= internal::Lower(c) == owner;
    if (struct_output && name == "start") return PaneWindowPart::kStart;
    if (struct_output && name == "end") return PaneWindowPart::kEnd;
  }
  return std::nullopt;
}

// The parent of every node of the plan (its inputs; subqueries are not
// followed: a stream read in one makes the shape fail).
void PaneParents(const PlanNode& n, std::map<const PlanNode*, const PlanNode*>* out) {
  for (const auto& in : n.inputs) {
    (*out)[in.get()] = &n;
    PaneParents(*in, out);
  }
}

}  // namespace

WindowPanesShape AnalyzeWindowPanes(const plan::PlanNode& root,
                                    const std::function<bool(const std::string&)>& is_stream) {
  WindowPanesShape out;
  auto fail = [&](const PlanNode& n, const std::string& why) {
    out.ok = false;
    out.why = NodeLabel(n) + ": " + why;
    out.blocks.clear();
    return out;
  };
  std::map<const PlanNode*, const PlanNode*> parent;
  PaneParents(root, &parent);
  for (const PlanNode* n : plan::Nodes(root)) {
    if (n->kind != NodeKind::kScan || !ReadsStream(*n, is_stream)) continue;
    auto up = [&](const PlanNode* c) -> const PlanNode* {
      auto it = parent.find(c);
      return it == parent.end() ? nullptr : it->second;
    };
    const PlanNode* assign = up(n);
    if (!assign || assign->kind != NodeKind::kWindowAssign ||
        assign->window.shape == plan::WindowShape::kSession) {
      return fail(*n, "the stream is not read straight into a tumbling or hopping window");
    }
    const plan::WindowInfo& w = assign->window;
    if (!PanePlainIdentifier(w.time_column) || w.size_us <= 0 || w.slide_us <= 0) {
      return fail(*assign, "the window's time is not a plain column");
    }
    const PlanNode* agg = up(assign);
    if (!agg || agg->kind != NodeKind::kAggregate || agg->group_by_all || agg->grouping_sets) {
      return fail(*assign, "the window is not grouped by one plain aggregation");
    }
    const PlanNode* block = up(agg);
    if (!block || block->kind != NodeKind::kProject || block == &root || up(block) == nullptr) {
      return fail(*agg, "the aggregation is not the SELECT of a derived table");
    }
    PaneBlock b;
    b.block = block;
    b.input = n->scan.Joined();
    b.time_column = w.time_column;
    b.size_us = w.size_us;
    b.slide_us = w.slide_us;
    b.offset_us = w.offset_us;
    b.pane_us = std::gcd(w.size_us, w.slide_us);
    bool grouped_by_window = false;
    for (const Expr& k : agg->group_keys) {
      if (auto part = PaneWindowColumn(k, w)) {
        grouped_by_window = true;
        if (*part == PaneWindowPart::kStruct) {
          return fail(*agg, "the window is grouped as a struct column; panes need its bounds");
        }
        continue;
      }
      if (k.kind != ExprKind::kColumn || !k.qualifier.empty()) {
        return fail(*agg, "a grouping key is not a plain column");
      }
      b.key_sql.push_back(k.sql);
      b.key_columns.push_back(k.name);
    }
    if (!grouped_by_window) return fail(*agg, "the aggregation does not group by the window");
    for (const Expr& a : agg->aggregates) {
      const std::string f = internal::Lower(a.name);
      const bool star = f == "count_star" && a.args.empty();
      const bool one_column = (f == "count" || f == "sum" || f == "min" || f == "max") &&
                              a.args.size() == 1 && a.args[0].kind == ExprKind::kColumn &&
                              a.args[0].qualifier.empty() && !PaneWindowColumn(a.args[0], w);
      if (a.kind != ExprKind::kAggregate || a.distinct || a.filter || (!star && !one_column)) {
        return fail(*agg, "aggregate " + a.sql + " is not count, sum, min or max of a column");
      }
      b.aggregates.push_back(
          {f, star ? std::string() : a.args[0].sql, star ? std::string() : a.args[0].name});
    }
    for (const Expr& e : block->exprs) {
      PaneBlock::Column c;
      c.name = e.OutputName();
      if (auto part = PaneWindowColumn(e, w)) {
        if (*part == PaneWindowPart::kStruct) {
          return fail(*block, "the window struct is selected; panes give its bounds only");
        }
        c.kind = *part == PaneWindowPart::kStart ? PaneBlock::Column::kStart
                                             : PaneBlock::Column::kEnd;
      } else if (e.kind == ExprKind::kAggregate) {
        c.kind = PaneBlock::Column::kAggregate;
        c.index = -1;
        for (size_t i = 0; i < agg->aggregates.size(); ++i) {
          if (agg->aggregates[i].sql == e.sql) c.index = static_cast<int>(i);
        }
        if (c.index < 0) return fail(*block, e.sql + " is not one of the aggregation's calls");
      } else if (e.kind == ExprKind::kColumn && e.qualifier.empty()) {
        c.kind = PaneBlock::Column::kKey;
        c.index = -1;
        for (size_t i = 0; i < b.key_sql.size(); ++i) {
          if (internal::Lower(b.key_sql[i]) == internal::Lower(e.sql)) {
            c.index = static_cast<int>(i);
          }
        }
        if (c.index < 0) return fail(*block, e.sql + " is not a grouping key");
      } else {
        return fail(*block, e.sql + " is not a grouping key, a window bound or an aggregate");
      }
      b.columns.push_back(std::move(c));
    }
    out.blocks.push_back(std::move(b));
  }
  if (out.blocks.empty()) {
    out.why = NodeLabel(root) + ": no stream is read";
    return out;
  }
  // Blocks of one aggregation (q5 computes its count twice) share partials.
  for (size_t i = 0; i < out.blocks.size(); ++i) {
    PaneBlock& b = out.blocks[i];
    for (size_t j = 0; j < i && b.shares < 0; ++j) {
      const PaneBlock& a = out.blocks[j];
      bool same = a.shares < 0 && internal::Lower(a.input) == internal::Lower(b.input) &&
                  internal::Lower(a.time_column) == internal::Lower(b.time_column) &&
                  a.size_us == b.size_us && a.slide_us == b.slide_us &&
                  a.offset_us == b.offset_us && a.key_sql == b.key_sql &&
                  a.aggregates.size() == b.aggregates.size();
      for (size_t k = 0; same && k < a.aggregates.size(); ++k) {
        same = a.aggregates[k].function == b.aggregates[k].function &&
               a.aggregates[k].arg_sql == b.aggregates[k].arg_sql;
      }
      if (same) b.shares = static_cast<int>(j);
    }
  }
  out.ok = true;
  return out;
}

namespace {

std::string PaneNum(int64_t v) { return std::to_string(v) + "::BIGINT"; }

// The start of the grid cell of length `len` (aligned at `offset`) holding x.
std::string PaneFloor(const std::string& x, int64_t len, int64_t offset) {
  const std::string n = PaneNum(len);
  return "(" + x + " - (((" + x + " - " + PaneNum(offset) + ") % " + n + ") + " + n + ") % " + n +
         ")";
}

}  // namespace

std::string PanePartialSql(const PaneBlock& b, const std::string& in) {
  const std::string t = "epoch_us(" + QuoteIdentifier(b.time_column) + ")";
  std::string sql = "SELECT ";
  for (size_t i = 0; i < b.key_sql.size(); ++i) {
    sql += b.key_sql[i] + " AS __k" + std::to_string(i) + ", ";
  }
  sql += PaneFloor(t, b.pane_us, b.offset_us) + " AS __pane";
  for (size_t i = 0; i < b.aggregates.size(); ++i) {
    const PaneAggregate& a = b.aggregates[i];
    // Counts as DOUBLE: their merge, a sum, then stays in doubles (exact below
    // 2^53 rows) instead of DuckDB's 128-bit integer sum.
    sql += ", " + (a.function == "count_star" ? std::string("count(*)::DOUBLE")
                   : a.function == "count"    ? "count(" + a.arg_sql + ")::DOUBLE"
                                              : a.function + "(" + a.arg_sql + ")") +
           " AS __a" + std::to_string(i);
  }
  return sql + " FROM " + QuoteIdentifier(in) + " WHERE " + QuoteIdentifier(b.time_column) +
         " IS NOT NULL GROUP BY ALL";
}

std::string PaneMergeSql(const PaneBlock& b, const std::string& panes,
                         std::optional<int64_t> lo, std::optional<int64_t> hi) {
  // Each pane p lies in the windows starting at S on the slide grid with
  // S <= p < S + size: from the last start at or before p, back by slides.
  // At most ceil(size / slide) of them: a cross join with range(), not a
  // list per pane (DuckDB sizes each generate_series list in 128-bit math).
  const std::string s_max = PaneFloor("__pane", b.slide_us, b.offset_us);
  const int64_t starts = (b.size_us + b.slide_us - 1) / b.slide_us;
  // Only panes inside a window that may end in (lo, hi].
  std::string panes_in = "SELECT *, " + s_max + " AS __smax FROM " + QuoteIdentifier(panes);
  std::vector<std::string> where;
  if (lo) where.push_back("__pane + " + PaneNum(b.size_us) + " > " + PaneNum(*lo));
  if (hi) where.push_back("__pane < " + PaneNum(*hi));
  for (size_t i = 0; i < where.size(); ++i) panes_in += (i == 0 ? " WHERE " : " AND ") + where[i];
  const std::string expand = "SELECT * FROM (SELECT *, __smax - __i * " + PaneNum(b.slide_us) +
                             " AS __s FROM (" + panes_in + "), range(" + std::to_string(starts) +
                             ") AS __r(__i)) WHERE __s + " + PaneNum(b.size_us) + " > __pane";
  std::string merged = "SELECT ";
  for (size_t i = 0; i < b.key_sql.size(); ++i) merged += "__k" + std::to_string(i) + ", ";
  merged += "__s";
  for (size_t i = 0; i < b.aggregates.size(); ++i) {
    const std::string col = "__a" + std::to_string(i);
    const std::string& f = b.aggregates[i].function;
    merged += ", " + (f == "count_star" || f == "count" ? "sum(" + col + ")::BIGINT"
                                                        : f + "(" + col + ")") +
              " AS " + col;
  }
  merged += " FROM (" + expand + ")";
  std::vector<std::string> ends;
  if (lo) ends.push_back("__s + " + PaneNum(b.size_us) + " > " + PaneNum(*lo));
  if (hi) ends.push_back("__s + " + PaneNum(b.size_us) + " <= " + PaneNum(*hi));
  for (size_t i = 0; i < ends.size(); ++i) merged += (i == 0 ? " WHERE " : " AND ") + ends[i];
  return merged + " GROUP BY ALL";
}

std::string PaneBlockSql(const PaneBlock& b, const std::string& merged, bool time_zone) {
  // Microseconds as the time column's type (TIMESTAMPTZ from the epoch: the
  // same instant in any session time zone; thund's function, not ICU's
  // calendar arithmetic).
  auto time = [&](const std::string& us) {
    return time_zone ? "thund_add_micros('epoch'::TIMESTAMPTZ, " + us + ")"
                       : "make_timestamp(" + us + ")";
  };
  std::string sql = "SELECT ";
  for (size_t i = 0; i < b.columns.size(); ++i) {
    const PaneBlock::Column& c = b.columns[i];
    if (i > 0) sql += ", ";
    switch (c.kind) {
      case PaneBlock::Column::kKey: sql += "__k" + std::to_string(c.index); break;
      case PaneBlock::Column::kStart: sql += time("__s"); break;
      case PaneBlock::Column::kEnd: sql += time("__s + " + PaneNum(b.size_us)); break;
      case PaneBlock::Column::kAggregate: sql += "__a" + std::to_string(c.index); break;
    }
    sql += " AS " + QuoteIdentifier(c.name);
  }
  return sql + " FROM " + QuoteIdentifier(merged);
}

}  // namespace thund::engine::stream
