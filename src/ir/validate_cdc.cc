// Rules on change data capture (AUTO CDC / apply_changes) settings.
#include <arrow/type.h>

#include <algorithm>
#include <set>

#include "ir/validate_internal.h"

namespace thund::internal {

void CheckCdc(const ValidateContext& ctx, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  for (size_t i = 0; i < p.flows.size(); ++i) {
    const Flow& f = p.flows[i];
    if (!f.cdc) continue;
    const Cdc& c = *f.cdc;
    auto err = [&](const char* code, const char* field, std::string msg, std::string hint) {
      out->push_back(FlowDiag(p, i, Severity::kError, code, std::string("cdc.") + field,
                              std::move(msg), std::move(hint)));
    };
    const bool blank_key =
        std::any_of(c.keys.begin(), c.keys.end(), [](const std::string& k) { return k.empty(); });
    if (c.keys.empty() || blank_key) {
      err("cdc-keys", "keys",
          c.keys.empty() ? "CDC has no keys" : "CDC keys contain an empty column name",
          "list the columns that identify a row (KEYS (id))");
    }
    if (c.sequence_by.empty()) {
      err("cdc-sequence", "sequence_by", "CDC has no sequence_by column",
          "name the column that orders changes to one key (SEQUENCE BY updated_at)");
    }
    if (c.scd_type != 1 && c.scd_type != 2) {
      err("cdc-scd-type", "scd_type",
          "CDC scd_type must be 1 or 2, got " + std::to_string(c.scd_type),
          "use 1 (keep the latest row per key) or 2 (keep history)");
    }
    const std::set<std::string> keys(c.keys.begin(), c.keys.end());
    for (const auto& col : c.except_columns) {
      if (keys.count(col)) {
        err("cdc-except-key", "except_columns", "CDC except_columns drops key column " + Quote(col),
            "remove " + Quote(col) + " from except_columns; keys must stay in the target");
      }
    }
    if (!c.columns.empty() && !c.except_columns.empty()) {
      err("cdc-columns", "columns", "CDC lists both the columns to keep and those to leave out",
          "give one of COLUMNS (a, b) / column_list and COLUMNS * EXCEPT (a, b) / "
          "except_column_list");
    }
    if (!c.columns.empty()) {
      std::set<std::string> listed;
      for (const auto& col : c.columns) listed.insert(Lower(col));
      for (const auto& k : c.keys) {
        if (!k.empty() && !listed.count(Lower(k))) {
          err("cdc-columns-key", "columns", "CDC columns leave out key column " + Quote(k),
              "add " + Quote(k) + " to the column list; keys must stay in the target");
        }
      }
    }
    if (!c.track_history.empty() || !c.track_history_except.empty()) {
      if (c.scd_type != 2) {
        err("cdc-track-history", "track_history",
            "CDC tracks history on chosen columns, but the target is SCD type " +
                std::to_string(c.scd_type),
            "use STORED AS SCD TYPE 2 (stored_as_scd_type=2), or remove TRACK HISTORY ON");
      }
      if (!c.track_history.empty() && !c.track_history_except.empty()) {
        err("cdc-track-history", "track_history",
            "CDC lists both the columns whose history is tracked and those whose history is not",
            "give one of TRACK HISTORY ON (a, b) and TRACK HISTORY ON * EXCEPT (a, b)");
      }
    }
    // Columns against the target's declared schema, when there is one.
    const Dataset* target = ctx.Find(f.target);
    if (!target || !target->schema.declared()) continue;
    std::vector<std::string> names;
    for (const auto& field : target->schema.arrow->fields()) names.push_back(field->name());
    auto check = [&](const std::string& col, const char* field, const char* role) {
      if (col.empty() || target->schema.arrow->GetFieldByName(col)) return;
      err("cdc-column", field,
          std::string("CDC ") + role + " " + Quote(col) + " is not in the declared schema of " +
              Quote(target->name) + DidYouMean(col, names),
          "add " + Quote(col) + " to the schema of " + Quote(target->name) +
              ", or name an existing column");
    };
    // Keys always reach the target; sequence_by may be dropped with
    // except_columns, so it is not checked here.
    for (const auto& k : c.keys) check(k, "keys", "key");
  }
}

}  // namespace thund::internal
