// Window panes for a window-local query (IncrementalOperator::kWindowed) whose
// every stream row first goes through a windowed aggregation: a derived table
//
//   (SELECT k1, ..., count(*) AS n, sum(x) AS s, window_start, window_end
//    FROM HOP(TABLE bids, DESCRIPTOR(ts), ...)  -- or TUMBLE
//    GROUP BY k1, ..., window_start, window_end) AS t
//
// Nexmark q5 joins two of them. Without panes the operator keeps every raw
// row of the open windows and, when windows close, runs the whole query over
// the rows reaching them, so a row is aggregated once per window it falls in
// (five times in q5's 10-second windows sliding by 2) and once per derived
// table that reads it. With panes, each trigger's new rows are aggregated
// once into partials per (keys, pane) — a pane is gcd(size, slide) long, so
// every window is a whole number of panes — and a closing window's rows of
// the derived table are the partials of its panes merged. The rest of the
// query then runs over those few rows, with each derived table replaced by
// them (the result is the same: the derived table's rows for a window are
// exactly its aggregation over the window's rows).
//
// Applies when every stream scan of the plan is the direct input of a
// tumbling or hopping window assignment (table function or window()), under
// an aggregation grouped by plain columns and the window's start and end,
// whose aggregates are count(*), count, sum, min and max of plain columns
// (no DISTINCT, no FILTER), under the SELECT list of a derived table that
// keeps only those keys, the window bounds and the aggregates (any aliases);
// no HAVING. Anything else keeps the raw rows (the plain twin).
//
// Pure: reads the plan only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "thund/plan.h"

namespace thund::engine::stream {

struct PaneAggregate {
  std::string function;  // count_star | count | sum | min | max
  std::string arg_sql;   // its column (DuckDB SQL); "" for count_star
  std::string column;    // that column's name, unquoted; "" for count_star
};

// One derived table computed from panes.
struct PaneBlock {
  const plan::PlanNode* block = nullptr;  // its SELECT list (Project); block->sql
  std::string input;                      // the stream it aggregates
  std::string time_column;                // the window's time column (a plain column)
  int64_t size_us = 0, slide_us = 0, offset_us = 0;
  int64_t pane_us = 0;                    // gcd(size, slide)
  // The earlier block with the same aggregation (stream, time column, window,
  // keys, aggregates: q5's two counts), whose partials this one reads; -1
  // when it keeps its own.
  int shares = -1;
  std::vector<std::string> key_sql;       // grouping columns besides the window
  std::vector<std::string> key_columns;   // their names, unquoted (as key_sql)
  std::vector<PaneAggregate> aggregates;
  // The derived table's columns, in order.
  struct Column {
    enum Kind { kKey, kStart, kEnd, kAggregate } kind = kKey;
    int index = 0;     // into key_sql / aggregates
    std::string name;  // its output name
  };
  std::vector<Column> columns;
};

struct WindowPanesShape {
  bool ok = false;
  std::string why;  // when !ok: "<Node>: <why>"
  std::vector<PaneBlock> blocks;
};

// `is_stream(name)` as for PlanIncremental; `root` is a window-local plan.
WindowPanesShape AnalyzeWindowPanes(const plan::PlanNode& root,
                                    const std::function<bool(const std::string&)>& is_stream);

// DuckDB SQL of the panes, all times as BIGINT microseconds:
// Over `in` (new rows of b.input): one row per (keys, pane) with columns
// __k0.. (the keys), __pane (the pane's start) and __a0.. (each aggregate's
// partial). Rows with a NULL time are in no window.
std::string PanePartialSql(const PaneBlock& b, const std::string& in);
// Over `panes` (partials, possibly several rows per (keys, pane)): the
// aggregation's rows of the windows whose end E has lo < E <= hi (nullopt:
// open), as __k.. (keys), __s (the window's start) and __a.. (aggregates).
std::string PaneMergeSql(const PaneBlock& b, const std::string& panes,
                         std::optional<int64_t> lo, std::optional<int64_t> hi);
// Over `merged` (PaneMergeSql's rows, of this block or the one it shares):
// the derived table's rows, under its column names. `time_zone`: the time
// column is TIMESTAMPTZ (known only from the stream's rows, so the caller
// says), and the window bounds take that type.
std::string PaneBlockSql(const PaneBlock& b, const std::string& merged, bool time_zone);

}  // namespace thund::engine::stream
