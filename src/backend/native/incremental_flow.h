// Internal: one trigger of a streaming flow in the incremental mode.
//
// Per trigger the flow takes only the rows its streaming inputs gained since
// the previous trigger (FlowStream::recent of the flows writing them, or a
// slice of their rows after a restart), never what it saw before:
//  1. Event time. Per input, the largest event time seen and when rows last
//     arrived. The flow's watermark W is the minimum over its inputs that are
//     not idle of (largest event time - allowed lateness); an input silent
//     for longer than its idle_timeout stops holding W back; W never moves
//     backwards. Inputs without an event-time column do not take part.
//  2. Late rows. For a stateful operator, rows whose event time is below W
//     as it stood before this trigger are dropped (counted; FlowStep::late
//     carries them for a late-rows table). A NULL event time is never late.
//  3. The operator (engine/stream/incremental_plan.h):
//     kStateless: the query over the new rows; Complete accumulates them.
//     kPartialAggregate: DuckDB computes the partials of the new rows, merged
//       into the state (one row per open (window, group)); windows whose end
//       W passed are emitted (Append), the groups the new rows touched are
//       emitted (Update), or the whole result is (Complete); closed windows
//       leave the state. Over a join of two streams (plan.join_input) the
//       new rows are the join's (as kStreamJoin below, the sides kept the
//       same way). Under an outer query (plan.inner_block) the outer query
//       runs over the aggregation's whole result, read from the partials.
//     kRowsAggregate: the rows of open windows are kept and aggregated by the
//       query itself; session windows merge there, per key.
//     kWindowed: each input keeps the rows of its open windows; when W passes
//       window ends, the query runs over the rows of the windows that closed
//       (the dialect's window bounds keep the others out) and its result is
//       emitted; rows whose windows all closed leave.
//     kStreamJoin: new(A) x (kept(B) + new(B)) + kept(A) x new(B), then the
//       new rows join the kept ones; a time bound evicts rows no future row
//       can match.
//     kCdc: AUTO CDC re-applied to the keys the new changes touch
//       (incremental_cdc.h).
//  When every source is exhausted W is +infinity: every window is emitted,
//  and the result equals the batch query over the rows that were not late.
//
// State (IncrementalFlow below) is explicit: what each input's rows were
// taken up to, the event-time clocks, W, and three tables (partials, kept
// rows, closed windows' results). It is committed with the flow's dataset
// version (stream_state.cc), so a rerun resumes exactly.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "backend/native/join_index.h"
#include "backend/native/partial_merge.h"
#include "backend/native/stream_flow.h"
#include "engine/stream/incremental_plan.h"
#include "engine/stream/window_panes.h"
#include "sql/sql_analysis.h"

namespace thund::native {

// The event-time clock of one streaming input of a flow.
struct InputClock {
  std::string column;               // the event-time column ("" = none)
  int64_t lateness_us = 0;
  std::optional<int64_t> idle_ms;   // idle_timeout
  std::optional<int64_t> max_event_us;  // the largest event time seen
  int64_t last_arrival_ms = 0;      // processing time rows last arrived
};

struct IncrementalFlow {
  plan::PlanPtr root;
  engine::stream::IncrementalPlan plan;
  sql::AggregateDecomposition agg;  // kPartialAggregate
  std::string query_sql;            // the flow's DuckDB SQL (kRowsAggregate: + hidden end)
  // plan.inner_block: the flow's query reading the aggregation's result rows
  // from a table __thund_inc_inner in place of its derived table.
  std::string outer_sql;
  std::string end_expr;             // kRowsAggregate: window end over the query's output
  bool hidden_end = false;          // query_sql carries the window end as a hidden column
  bool session = false;
  // What the state was built for: the flow's query and output mode. State
  // committed for another definition is refused on restore (it would not fit).
  std::string definition;
  // State.
  std::map<std::string, int64_t> consumed;  // "<input>/<flow>" -> rows taken
  std::map<std::string, InputClock> clocks;  // per streaming input
  std::optional<int64_t> watermark_us;
  std::shared_ptr<arrow::Table> partials;  // kPartialAggregate
  std::shared_ptr<arrow::Table> kept;      // kRowsAggregate
  std::shared_ptr<arrow::Table> closed;    // Complete: results of closed windows
  std::shared_ptr<arrow::Table> cdc_log;   // kCdc: change rows still needed per key
  int64_t cdc_ignored = 0;                 // kCdc: change rows ignored so far
  // kWindowed / kStreamJoin: the kept rows of each stream input, in the
  // order of plan.stream_inputs.
  // kDedup: [0] the rows emitted (DISTINCT) or the candidate rows of open
  // keys (first row per key), [1] the keys decided (first row).
  std::vector<std::shared_ptr<arrow::Table>> sides;
  // kWindowed with window panes (engine/stream/window_panes.h): the derived
  // tables computed from panes, the query reading them in their place
  // (tables __thund_pane_<i>), and as state each one's partials. No blocks:
  // the raw rows are kept in `sides`.
  std::vector<engine::stream::PaneBlock> pane_blocks;
  std::string pane_query_sql;
  std::vector<std::shared_ptr<arrow::Table>> panes;
  // kDedup: the output (DISTINCT) or order column that is the watermark's.
  std::string dedup_time_column;
  // Not state: the C++ merge of partials, kept between triggers (null until
  // the first merge, and when the partials' types are outside it).
  std::unique_ptr<PartialMerger> merger;
  // Not state either: the partial query's columns and types (read from DuckDB
  // once), and the merger that folds the input rows into partials, for
  // DirectPartial.
  std::shared_ptr<arrow::Schema> partial_schema;
  std::unique_ptr<PartialMerger> direct_merger;
  // Not state: per pane block, the C++ fold of its partials (pane_partial.h):
  // the partial query's columns and types (read from DuckDB once), the merger
  // folding new rows into the partials, and whether `panes[i]` is the table
  // that merger last kept, one row per (keys, pane).
  struct PaneFold {
    std::shared_ptr<arrow::Schema> schema;
    std::unique_ptr<PartialMerger> merger;
    bool off = false;     // a type outside the path: the queries run
    bool folded = false;
  };
  std::vector<PaneFold> pane_folds;
  // Not state: kStreamJoin, per stream input without a time bound and with a
  // join key (RowReach::join_key), its kept rows hashed by that key
  // (join_index.h; null: every kept row is bound). Rebuilt from `sides` when
  // it describes another table (after a restore).
  std::vector<std::unique_ptr<JoinKeyIndex>> join_index;
  // Not state: what changed in `partials` since they were last checkpointed,
  // place by place (engine::checkpoint::PlaceHint), for the checkpoint to
  // hash only those rows. Valid while every merge since kept the groups in
  // their places (the C++ merge, no group leaving); the checkpoint resets it.
  std::shared_ptr<arrow::Table> partials_since;
  std::vector<uint8_t> partials_changed;  // per row of `partials`
  bool partials_in_place = false;

  // The state tables by name, for persisting.
  std::map<std::string, std::shared_ptr<arrow::Table>*> Tables() {
    std::map<std::string, std::shared_ptr<arrow::Table>*> out = {
        {"partials", &partials}, {"kept", &kept}, {"closed", &closed}, {"cdc_log", &cdc_log}};
    for (size_t i = 0; i < sides.size(); ++i) out["side" + std::to_string(i)] = &sides[i];
    for (size_t i = 0; i < panes.size(); ++i) out["pane" + std::to_string(i)] = &panes[i];
    return out;
  }
  int64_t StateRows() const;
  int64_t StateBytes() const;
};

// Window panes for a kWindowed flow (engine/stream/window_panes.h): the
// derived tables computed from panes and the flow's query reading them in
// their place, or why the flow keeps raw rows instead (the plain twin, not an
// error). `root` is the flow's plan; `stream_inputs` are its streaming inputs.
// The run and `thund explain` both ask this.
struct WindowPanesChoice {
  bool ok = false;
  std::string why;  // when !ok
  std::vector<engine::stream::PaneBlock> blocks;
  std::string query_sql;  // reads tables __thund_pane_<i>
};
WindowPanesChoice ChooseWindowPanes(const std::string& flow_sql, const plan::PlanNode& root,
                                    const std::vector<std::string>& stream_inputs);
// One line for `thund explain`: what the choice keeps as state.
std::string DescribeWindowPanes(const WindowPanesChoice& choice);

// Prepares the incremental operator of `f` (in a dataset of the loop), or
// nullopt with `*fallback` set to why the flow runs in Recompute mode.
// `streams` are the loop's datasets; `now_ms` is the processing time.
arrow::Result<std::shared_ptr<IncrementalFlow>> MakeIncrementalFlow(
    RunContext& ctx, const FlowStream& f, const std::map<std::string, DatasetStream*>& streams,
    int64_t now_ms, std::string* fallback);

// State to and from `_stream.json` (tables are written and read by the caller
// under the names Tables() gives; `table_files` maps a name to its file).
std::string IncrementalStateJson(const IncrementalFlow& inc);
arrow::Status RestoreIncrementalState(const std::string& json, IncrementalFlow* inc);

// One trigger of an incremental flow.
arrow::Result<FlowStep> StepIncremental(RunContext& ctx, DatasetStream& ds, FlowStream& f,
                                        const TriggerContext& trigger,
                                        const std::map<std::string, DatasetStream*>& streams,
                                        int64_t now_ms);

}  // namespace thund::native
