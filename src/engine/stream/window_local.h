// The two stateful shapes of a streaming flow's plan beyond the outermost
// aggregation (engine/stream/incremental_plan.h runs those first):
//
//  * Window-local (IncrementalOperator::kWindowed): every stream row reaches
//    the result through a tumbling or hopping window assignment, or through
//    an inner join whose time bound ties it to a windowed side
//    (b.ts BETWEEN w.window_end - INTERVAL 10 SECONDS AND w.window_end), and
//    every operator that combines rows keeps windows apart: an aggregation
//    groups by the window, a join of two windowed sides equates their windows,
//    a window function partitions by it, DISTINCT keeps it. The result is then
//    the union over windows of the query over each window's rows, so once W
//    passes a window's end (plus `emit_delay_us`) the query over that
//    window's rows is final. Nexmark q5, q7 and q8 have this shape, and so do
//    window joins, window deduplication and top-N per window.
//  * Stream join (IncrementalOperator::kStreamJoin): one inner join of two
//    streams (each side stateless over one stream dataset; static tables may
//    join in), with only filters and projections above it. Per trigger the
//    new rows of each side join the kept rows of the other, and each other:
//    new(A) x (kept(B) + new(B)) + kept(A) x new(B). A time bound in the join
//    condition (an interval join) bounds how long a row is kept; without one
//    the state grows unless the flow sets a state TTL.
//
// For both shapes, `reach` says per stream input how long its rows matter,
// in event time: a row at time t can still contribute while t + to_us > W
// (window-local) or t + to_us >= W (stream join); for window-local, it
// contributes to the windows whose end lies in [t + from_us, t + to_us].
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

// How the rows of one stream input reach the result (one entry per input).
struct RowReach {
  std::string input;        // the stream dataset
  std::string time_column;  // the column of the input the reach is measured on
  int64_t from_us = 0;      // window-local: earliest window end a row reaches
  int64_t to_us = 0;        // the latest window end (or join partner time) it reaches
  bool unbounded = false;   // stream join without a time bound: kept forever
  // Stream join whose sides are each a scan of its stream: this input's
  // column of an equi-key with the other side ("" = none). A trigger then
  // needs only the kept rows whose key the other side's new rows hold.
  std::string join_key;
  // Stream join whose side is a scan of this input: the conjunction of the
  // WHERE / ON conjuncts that read only this side's columns (DuckDB SQL,
  // columns qualified by `alias`); "" = none. A row for which it is not true
  // joins nothing, so it need not be kept.
  std::string keep_sql;
  std::string alias;
  // Stream join with a time bound: the other input's column this reach
  // relies on (its rows still to come hold values >= W only when it is that
  // input's watermark column; the run keeps every row otherwise). "" = none.
  std::string partner_time_column;
};

struct WindowLocalShape {
  bool ok = false;
  std::string why;  // when !ok: "<Node>: <why>"
  std::vector<RowReach> reach;
  // A window is final once W >= its end + emit_delay_us (a time-bound side
  // whose rows may come after the window's end delays it).
  int64_t emit_delay_us = 0;
  std::vector<std::pair<const plan::PlanNode*, std::string>> notes;  // per node, for explain
};

// `is_stream(name)` as for PlanIncremental.
WindowLocalShape AnalyzeWindowLocal(const plan::PlanNode& root,
                                    const std::function<bool(const std::string&)>& is_stream);

struct StreamJoinShape {
  bool ok = false;
  std::string why;
  // The join under the filters and projections (also when !ok: `why` then
  // says why it does not run).
  const plan::PlanNode* join = nullptr;
  std::vector<RowReach> reach;  // both sides' inputs
};

StreamJoinShape AnalyzeStreamJoin(const plan::PlanNode& root,
                                  const std::function<bool(const std::string&)>& is_stream);

// Whether the subtree scans a stream; "<Node> [name|kind] [at line:col]".
bool ReadsStream(const plan::PlanNode& n,
                 const std::function<bool(const std::string&)>& is_stream);
std::string NodeLabel(const plan::PlanNode& n);

// The offset of `e` from a column: `col` itself (0), or `col + INTERVAL x`,
// `col - INTERVAL x`; nullopt for anything else. `column` receives the column.
std::optional<int64_t> ColumnOffsetMicros(const plan::Expr& e, const plan::Expr** column);

}  // namespace thund::engine::stream
