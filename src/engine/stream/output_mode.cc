#include "engine/stream/output_mode.h"

#include <arrow/type.h>

#include "engine/duckdb/sql_quote.h"
#include "ir/validate_internal.h"

namespace thund::engine::stream {
namespace {

std::string SelectAll(const std::string& relation) { return "SELECT * FROM " + relation; }

std::string Empty(const std::string& relation) { return SelectAll(relation) + " WHERE false"; }

std::string Micros(const std::string& window_end) { return "epoch_us(" + window_end + ")"; }

}  // namespace

std::string AppendDeltaSql(const std::string& result, const std::string& previous_result) {
  return SelectAll(result) + " EXCEPT ALL " + SelectAll(previous_result);
}

std::optional<std::string> FindWindowEnd(const arrow::Schema& schema) {
  for (const char* name : {"window", "session_window"}) {
    for (const auto& field : schema.fields()) {
      if (internal::Lower(field->name()) != name || field->type()->id() != arrow::Type::STRUCT) {
        continue;
      }
      for (const auto& child : field->type()->fields()) {
        if (internal::Lower(child->name()) == "end") {
          return "struct_extract(" + QuoteIdentifier(field->name()) + ", " +
                 QuoteString(child->name()) + ")";
        }
      }
    }
  }
  for (const auto& field : schema.fields()) {
    if (internal::Lower(field->name()) == "window_end") return QuoteIdentifier(field->name());
  }
  return std::nullopt;
}

namespace {

// Which part of the window an output expression is: "window" (the struct),
// "start", "end", or "" (none).
std::string WindowPart(const plan::Expr& e) {
  using plan::ExprKind;
  auto is_window_struct = [](const plan::Expr& x) {
    if (x.kind == ExprKind::kColumn) {
      const std::string n = internal::Lower(x.name);
      return n == "window" || n == "session_window";
    }
    return x.kind == ExprKind::kFunction && x.name == "struct_pack" && x.args.size() == 2 &&
           x.args[0].alias == "start" && x.args[1].alias == "end";
  };
  if (is_window_struct(e)) return "window";
  if (e.kind == ExprKind::kColumn) {
    const std::string n = internal::Lower(e.name);
    if (n == "window_start") return "start";
    if (n == "window_end") return "end";
    if (!e.qualifier.empty()) {
      const std::string q = internal::Lower(e.qualifier.back());
      if ((q == "window" || q == "session_window") && (n == "start" || n == "end")) return n;
    }
  }
  // (x).start parses as an operator, struct_extract(x, 'start') as a function.
  if ((e.kind == ExprKind::kOperator || e.kind == ExprKind::kFunction) &&
      e.name == "struct_extract" && e.args.size() == 2 && is_window_struct(e.args[0])) {
    const std::string field = internal::Lower(e.args[1].sql);
    if (field == "'start'") return "start";
    if (field == "'end'") return "end";
  }
  return "";
}

}  // namespace

std::optional<std::string> PlanWindowEnd(const plan::PlanNode& root) {
  const plan::PlanNode* agg = plan::RowPathAggregate(root);
  if (!agg || agg->kind != plan::NodeKind::kAggregate) return std::nullopt;
  const plan::PlanNode* window = plan::AggregateWindow(*agg);
  if (!window) return std::nullopt;
  // The SELECT list over the aggregate: the first projection on the row path.
  const plan::PlanNode* n = &root;
  while (n && n->kind != plan::NodeKind::kProject && !n->inputs.empty()) n = n->input();
  if (!n || n->kind != plan::NodeKind::kProject) return std::nullopt;
  std::optional<std::string> from_start;
  for (const auto& e : n->exprs) {
    const std::string part = WindowPart(e);
    const std::string name = QuoteIdentifier(e.OutputName());
    if (part == "window") return "struct_extract(" + name + ", 'end')";
    if (part == "end") return name;
    if (part == "start" && !from_start && window->window.shape != plan::WindowShape::kSession) {
      from_start = "(" + name + " + to_microseconds(" + std::to_string(window->window.size_us) +
                   "))";
    }
  }
  return from_start;
}

std::string WindowedAppendDeltaSql(const std::string& result, const std::string& window_end,
                                   int64_t w_prev, int64_t w_now) {
  if (w_now <= w_prev) return Empty(result);
  const std::string e = Micros(window_end);
  std::string lower = w_prev == kNoWatermark ? "" : e + " > " + std::to_string(w_prev);
  if (w_now == kEndOfInput) {
    if (lower.empty()) return SelectAll(result);
    return SelectAll(result) + " WHERE " + lower + " OR (" + window_end + ") IS NULL";
  }
  std::string where = e + " <= " + std::to_string(w_now);
  if (!lower.empty()) where = lower + " AND " + where;
  return SelectAll(result) + " WHERE " + where;
}

std::string ChangedClosedWindowsSql(const std::string& result, const std::string& previous,
                                    const std::string& window_end, int64_t w_prev,
                                    const std::string& hidden) {
  if (w_prev == kNoWatermark) return Empty(result);
  std::string closed =
      SelectAll(result) + " WHERE " + Micros(window_end) + " <= " + std::to_string(w_prev);
  if (!hidden.empty()) closed = "SELECT * EXCLUDE (" + hidden + ") FROM (" + closed + ")";
  return closed + " EXCEPT ALL " + SelectAll(previous);
}

std::string UpdateDeltaSql(const std::string& result, const std::string& previous) {
  return SelectAll(result) + " EXCEPT " + SelectAll(previous);
}

std::string UpsertStateSql(const std::string& previous, const std::string& delta,
                           const std::vector<std::string>& keys) {
  std::string match = "true";
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string k = QuoteIdentifier(keys[i]);
    match += " AND __thund_d." + k + " IS NOT DISTINCT FROM __thund_p." + k;
  }
  return "SELECT __thund_p.* FROM " + previous + " AS __thund_p WHERE NOT EXISTS (SELECT 1 FROM " +
         delta + " AS __thund_d WHERE " + match + ") UNION ALL " + SelectAll(delta);
}

}  // namespace thund::engine::stream
