#include "engine/stream/cdc_apply.h"

#include <algorithm>
#include <set>

#include "engine/duckdb/sql_quote.h"
#include "ir/validate_internal.h"

namespace thund::engine::stream {
namespace {

using internal::Lower;

// Resolves `name` against `columns` case-insensitively; returns the spelling
// in `columns`.
arrow::Result<std::string> Resolve(const std::vector<std::string>& columns, const std::string& name,
                                   const std::string& role) {
  for (const auto& c : columns) {
    if (Lower(c) == Lower(name)) return c;
  }
  return arrow::Status::Invalid(
      "CDC ", role, " ", internal::Quote(name), " is not a column of the change feed",
      internal::DidYouMean(name, columns),
      "; its columns are: ", internal::JoinNames(columns, ", "), ". Name an existing column.");
}

// A column name for the query's own bookkeeping that no input column takes.
std::string Fresh(const std::string& base, const std::vector<std::string>& columns) {
  std::set<std::string> taken;
  for (const auto& c : columns) taken.insert(Lower(c));
  std::string name = base;
  for (int i = 1; taken.count(Lower(name)); ++i) name = base + "_" + std::to_string(i);
  return name;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::vector<std::string> Quoted(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(QuoteIdentifier(n));
  return out;
}

struct Resolved {
  std::vector<std::string> keys;
  std::string sequence;
  std::vector<std::string> output;   // change columns minus except and arrival
  std::vector<std::string> tracked;  // output minus keys and sequence (SCD2)
};

arrow::Result<Resolved> ResolveColumns(const Cdc& cdc, const std::vector<std::string>& columns,
                                       const std::string& arrival_column) {
  if (cdc.scd_type != 1 && cdc.scd_type != 2) {
    return arrow::Status::Invalid("CDC scd_type must be 1 or 2, got ", cdc.scd_type);
  }
  if (cdc.keys.empty()) {
    return arrow::Status::Invalid("CDC has no keys: list the columns that identify a row");
  }
  if (cdc.sequence_by.empty()) {
    return arrow::Status::Invalid(
        "CDC has no sequence_by column: name the column that orders changes to one key");
  }
  ARROW_ASSIGN_OR_RAISE(std::string arrival, Resolve(columns, arrival_column, "arrival column"));
  Resolved r;
  std::set<std::string> keys_lower;
  for (const auto& k : cdc.keys) {
    ARROW_ASSIGN_OR_RAISE(std::string key, Resolve(columns, k, "key column"));
    if (keys_lower.insert(Lower(key)).second) r.keys.push_back(key);
  }
  ARROW_ASSIGN_OR_RAISE(r.sequence, Resolve(columns, cdc.sequence_by, "sequence_by column"));
  std::set<std::string> except_lower;
  for (const auto& e : cdc.except_columns) {
    ARROW_ASSIGN_OR_RAISE(std::string col, Resolve(columns, e, "except_columns entry"));
    if (keys_lower.count(Lower(col))) {
      return arrow::Status::Invalid("CDC except_columns drops key column ", internal::Quote(col),
                                    ": keys must stay in the target; remove it from "
                                    "except_columns");
    }
    except_lower.insert(Lower(col));
  }
  // A column list keeps only its columns: the others are left out.
  if (!cdc.columns.empty()) {
    if (!cdc.except_columns.empty()) {
      return arrow::Status::Invalid("CDC lists both columns and except_columns; give one");
    }
    std::set<std::string> listed;
    for (const auto& c : cdc.columns) {
      ARROW_ASSIGN_OR_RAISE(std::string col, Resolve(columns, c, "columns entry"));
      listed.insert(Lower(col));
    }
    for (const auto& k : r.keys) {
      if (!listed.count(Lower(k))) {
        return arrow::Status::Invalid("CDC columns leave out key column ", internal::Quote(k),
                                      ": keys must stay in the target; add it to the list");
      }
    }
    for (const auto& c : columns) {
      if (c != arrival && !listed.count(Lower(c))) except_lower.insert(Lower(c));
    }
  }
  // SCD2 history tracked on chosen columns.
  if (!cdc.track_history.empty() || !cdc.track_history_except.empty()) {
    if (cdc.scd_type != 2) {
      return arrow::Status::Invalid("CDC track_history needs SCD type 2");
    }
    if (!cdc.track_history.empty() && !cdc.track_history_except.empty()) {
      return arrow::Status::Invalid(
          "CDC lists both track_history and track_history_except; give one");
    }
  }
  std::set<std::string> track_lower, untracked_lower;
  for (const auto& t : cdc.track_history) {
    ARROW_ASSIGN_OR_RAISE(std::string col, Resolve(columns, t, "track_history entry"));
    track_lower.insert(Lower(col));
  }
  for (const auto& t : cdc.track_history_except) {
    ARROW_ASSIGN_OR_RAISE(std::string col, Resolve(columns, t, "track_history_except entry"));
    untracked_lower.insert(Lower(col));
  }
  for (const auto& c : columns) {
    if (c == arrival || except_lower.count(Lower(c))) continue;
    r.output.push_back(c);
    if (cdc.scd_type == 2) {
      const std::string lower = Lower(c);
      if (lower == "__start_at" || lower == "__end_at") {
        return arrow::Status::Invalid(
            "CDC SCD type 2 adds columns __START_AT and __END_AT, but the change feed already "
            "has a column ",
            internal::Quote(c), ": add it to except_columns or rename it");
      }
      const bool chosen = track_lower.empty() ? !untracked_lower.count(lower)
                                              : track_lower.count(lower) > 0;
      if (!keys_lower.count(lower) && lower != Lower(r.sequence) && chosen) {
        r.tracked.push_back(c);
      }
    }
  }
  return r;
}

}  // namespace

arrow::Result<CdcQuery> MakeCdcQuery(const Cdc& cdc, const std::string& changes,
                                     const std::vector<std::string>& columns,
                                     const std::string& arrival_column) {
  ARROW_ASSIGN_OR_RAISE(Resolved r, ResolveColumns(cdc, columns, arrival_column));
  const std::string arrival =
      QuoteIdentifier(*std::find_if(columns.begin(), columns.end(), [&](const std::string& c) {
        return Lower(c) == Lower(arrival_column);
      }));
  const std::string seq = QuoteIdentifier(r.sequence);
  const std::string keys = Join(Quoted(r.keys), ", ");
  const std::string out = Join(Quoted(r.output), ", ");
  const std::string del = QuoteIdentifier(Fresh("__thund_cdc_delete", columns));

  std::vector<std::string> not_null, is_null;
  for (const auto& k : r.keys) {
    not_null.push_back(QuoteIdentifier(k) + " IS NOT NULL");
    is_null.push_back(QuoteIdentifier(k) + " IS NULL");
  }
  not_null.push_back(seq + " IS NOT NULL");
  is_null.push_back(seq + " IS NULL");

  CdcQuery q;
  q.ignored_count_sql =
      "SELECT count(*) AS ignored FROM " + changes + " WHERE " + Join(is_null, " OR ");

  const std::string predicate =
      cdc.apply_as_deletes.empty() ? "false" : "COALESCE((" + cdc.apply_as_deletes + "), false)";
  // Valid changes, each marked as delete or upsert.
  std::string sql = "WITH __thund_valid AS (SELECT *, " + predicate + " AS " + del + " FROM " +
                    changes + " WHERE " + Join(not_null, " AND ") + ")\n";

  if (cdc.scd_type == 1) {
    // The last change per key decides: its values, or no row for a delete.
    const std::string rank = QuoteIdentifier(Fresh("__thund_cdc_rank", columns));
    sql += "SELECT " + out + " FROM (SELECT *, row_number() OVER (PARTITION BY " + keys +
           " ORDER BY " + seq + " DESC, " + arrival + " DESC) AS " + rank +
           " FROM __thund_valid) WHERE " + rank + " = 1 AND NOT " + del;
    q.sql = std::move(sql);
    return q;
  }

  // SCD2. After an upsert the open version holds that upsert's tracked values
  // (it either opened the version or matched it), so comparing each change
  // with the previous one per key tells whether it opens a version.
  const std::string prev_del = QuoteIdentifier(Fresh("__thund_cdc_prev_delete", columns));
  const std::string changed = QuoteIdentifier(Fresh("__thund_cdc_changed", columns));
  const std::string end = QuoteIdentifier(Fresh("__thund_cdc_end", columns));
  const std::string window = "(PARTITION BY " + keys + " ORDER BY " + seq + ")";
  std::vector<std::string> diffs;
  for (const auto& t : r.tracked) {
    const std::string c = QuoteIdentifier(t);
    diffs.push_back("LAG(" + c + ") OVER " + window + " IS DISTINCT FROM " + c);
  }
  const std::string changed_expr = diffs.empty() ? "false" : Join(diffs, " OR ");
  // Of changes with equal (key, sequence) only the last arrival counts.
  sql += ", __thund_last AS (SELECT * FROM __thund_valid QUALIFY row_number() OVER (PARTITION BY " +
         keys + ", " + seq + " ORDER BY " + arrival + " DESC) = 1)\n";
  sql += ", __thund_lag AS (SELECT *, LAG(" + del + ") OVER " + window + " AS " + prev_del + ", " +
         changed_expr + " AS " + changed + " FROM __thund_last)\n";
  // Changes that open a version (upsert after nothing, after a delete, or
  // with new tracked values) or close one (delete after an upsert).
  sql += ", __thund_events AS (SELECT * FROM __thund_lag WHERE (NOT " + del + " AND (" + prev_del +
         " IS NULL OR " + prev_del + " OR " + changed + ")) OR (" + del + " AND " + prev_del +
         " IS NOT NULL AND NOT " + prev_del + "))\n";
  sql += "SELECT " + out + ", " + seq + " AS \"__START_AT\", " + end +
         " AS \"__END_AT\" FROM (SELECT *, LEAD(" + seq + ") OVER " + window + " AS " + end +
         " FROM __thund_events) WHERE NOT " + del;
  q.sql = std::move(sql);
  return q;
}

}  // namespace thund::engine::stream
