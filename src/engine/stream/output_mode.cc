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
                                    const std::string& window_end, int64_t w_prev) {
  if (w_prev == kNoWatermark) return Empty(result);
  return SelectAll(result) + " WHERE " + Micros(window_end) + " <= " + std::to_string(w_prev) +
         " EXCEPT ALL " + SelectAll(previous);
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
