// Output modes of a streaming flow in Recompute mode, as DuckDB SQL for one
// trigger. Pure string builders: the trigger loop registers the relations and
// runs the SQL.
//
// Relations (names are SQL already: quoted by the caller if needed; all have
// the same columns in the same order):
//  * `result`   - the flow's query over every input row seen so far.
//  * `previous` - what the flow's output state held after the previous
//                 trigger (an empty relation with the same columns on the
//                 first trigger).
//  * `delta`    - what a sink receives for this trigger.
//
// The modes (the trigger loop keeps the state):
//  * Complete: delta = state = result (no SQL needed).
//  * Append, no aggregation: delta = AppendDeltaSql(result, previous_result);
//    state = previous + delta. For a monotone query (rows are only ever
//    added) previous_result, the query's result at the previous trigger,
//    equals the rows emitted so far.
//  * Append, windowed aggregation: a result row is final once the watermark
//    passes the end of its window; delta = WindowedAppendDeltaSql(...) (the
//    windows that closed during this trigger); state = previous + delta.
//    Without a window-end column (FindWindowEnd() is nullopt) nothing is
//    final before the end of a bounded input, when the whole result is.
//  * Update: an UPSERT delta, not a retraction stream: delta holds the rows
//    whose key is new or whose values changed since the previous trigger;
//    a sink applies each delta row as "insert or replace by key". Rows are
//    never retracted: a group that vanishes from the result (e.g. its input
//    rows are filtered away later) stays in the state with its last values.
//    delta = UpdateDeltaSql(result, previous);
//    state = UpsertStateSql(previous, delta, UpdateKeyColumns(query)).
//    A query without aggregation has no key: Update behaves as Append (as in
//    Spark), and UpdateKeyColumns returns an empty list for it.
//
// Watermarks are int64 microseconds since the Unix epoch; kNoWatermark means
// "no watermark yet", kEndOfInput means "+infinity" (a bounded input is
// exhausted: every window is final).
#pragma once

#include <arrow/result.h>
#include <arrow/type_fwd.h>

#include "thund/plan.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace thund::engine::stream {

inline constexpr int64_t kNoWatermark = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kEndOfInput = std::numeric_limits<int64_t>::max();

// Append without aggregation: the rows of `result` beyond those of
// `previous_result`, as a multiset difference (EXCEPT ALL): a row that occurs
// n times now and m times before is emitted max(n - m, 0) times.
std::string AppendDeltaSql(const std::string& result, const std::string& previous_result);

// The window-end expression of an output schema, for windowed Append:
// `window`.end or `session_window`.end (a struct column with a field `end`,
// as window() / session_window() produce) or a column `window_end` (as the
// TUMBLE / HOP / SESSION table functions produce); names match
// case-insensitively, the first kind found in that order wins. nullopt when
// there is none. The expression is a TIMESTAMP [WITH TIME ZONE].
std::optional<std::string> FindWindowEnd(const arrow::Schema& schema);

// The window end of each output row of a windowed aggregation, as an SQL
// expression over the output columns, read from the query's logical plan:
// the aggregate groups by a time window, and the SELECT keeps the window
// (`window` / `session_window`), its end (`window.end AS we`, `window_end`),
// or its start (`window.start AS ws`: end = ws + size, tumbling and hopping).
// nullopt when the output keeps none of them.
std::optional<std::string> PlanWindowEnd(const plan::PlanNode& root);

// Windowed Append: the rows of `result` whose window end E (the SQL
// expression `window_end`) satisfies w_prev < E <= w_now (in microseconds).
// w_prev may be kNoWatermark (no lower bound); w_now may be kEndOfInput
// (no upper bound, and rows with a NULL end are emitted too). Empty when
// w_now <= w_prev.
std::string WindowedAppendDeltaSql(const std::string& result, const std::string& window_end,
                                   int64_t w_prev, int64_t w_now);

// Diagnostics for windowed Append: the rows of `result` in windows already
// closed at w_prev (E <= w_prev) that are not among the emitted rows
// `previous` (EXCEPT ALL): aggregates that late rows changed, or windows that
// appeared behind the watermark. The output never reflects them; the trigger
// loop reports their count. Empty when w_prev is kNoWatermark.
// `hidden` (may be empty) names a column of `result` that `previous` lacks
// (the window end a query carries only for this; PlanWindowEnd): it is
// dropped after the filter, before the comparison.
std::string ChangedClosedWindowsSql(const std::string& result, const std::string& previous,
                                    const std::string& window_end, int64_t w_prev,
                                    const std::string& hidden = "");

// Update: the rows of `result` that are not in `previous` (EXCEPT, on whole
// rows, NULLs equal): new keys and changed values.
std::string UpdateDeltaSql(const std::string& result, const std::string& previous);

// Update: the new state, `previous` rows whose key (the `keys` columns, NULLs
// equal) is not in `delta`, plus every row of `delta`. `keys` are column
// names (quoted here). With no keys (a global aggregate, one row) a non-empty
// delta replaces the whole state. REQUIRES: the query aggregates (for a
// query without aggregation use the Append builders).
std::string UpsertStateSql(const std::string& previous, const std::string& delta,
                           const std::vector<std::string>& keys);

// The key columns of an aggregating query for Update mode: the names of the
// output columns that are not aggregates (the GROUP BY outputs), in output
// order. `duckdb_select_sql` is DuckDB SQL (after SparkToDuckDb). Looks
// through a projection over one aggregating subquery or CTE
// (SELECT k, c FROM (SELECT k, count(*) AS c ... GROUP BY k)): a column that
// reads an inner aggregate is not a key. Returns an empty list for a query
// without aggregation (Update acts as Append) and for a global aggregate
// (no GROUP BY: one row). Invalid when the SQL does not parse, when a key
// column is an expression without an alias (its name is unknowable before
// binding: add AS name), or when the aggregation is elsewhere (inside a join,
// a set operation's later branch) so the key cannot be told.
arrow::Result<std::vector<std::string>> UpdateKeyColumns(const std::string& duckdb_select_sql);

}  // namespace thund::engine::stream
