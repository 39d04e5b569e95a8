// Internal: one trigger of one streaming flow in Recompute mode.
//
//  * kSource: the rows its source took this trigger (pulled beforehand by the
//    trigger loop) are checked (expectations, schema) and appended.
//  * SQL flows re-run their query over everything their inputs hold now and
//    turn the result into this trigger's output by the flow's output mode
//    (engine/stream/output_mode.h): Append -> the new rows, or for a windowed
//    aggregation the windows the watermark closed; Update -> an upsert delta
//    by the grouping keys; Complete -> the whole result.
//  * kCdc: AUTO CDC over all change rows its input holds (engine/stream/cdc_apply.h).
//
// REQUIRES: every input of the flow is bound in the session (streaming inputs
// to their current content).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backend/native/stream_state.h"
#include "engine/stream/output_mode.h"

namespace thund::native {

using engine::stream::kEndOfInput;

struct TriggerContext {
  int64_t index = 0;            // 1-based, in this run
  bool input_finished = false;  // every source of the run is exhausted
};

struct FlowStep {
  int64_t rows_in = 0;          // rows the source took / rows of the query result
  int64_t rows_out = 0;         // rows added to (or, rewriting flows, held by) the flow's output
  int64_t late_rows = 0;        // windowed Append: rows behind an already emitted window
  int64_t ignored_changes = 0;  // CDC: change rows with a NULL key or sequence
  std::vector<int64_t> violations;      // per expectation of the target
  std::shared_ptr<arrow::Table> delta;  // what changed (Append: new rows; Update: upserts)
  std::optional<int64_t> watermark_us;
  // Incremental mode: rows behind the watermark at arrival, dropped before
  // the flow's stateful operator, with `__flow` and `__watermark` columns.
  std::shared_ptr<arrow::Table> late;
};

// Decides a flow's shape from its IR (and its SQL's aggregation).
arrow::Result<FlowShape> ShapeOf(const Pipeline& p, const Flow& flow);

// Runs one trigger of `f` into `ds`. `source_rows` is what a kSource flow's
// source took this trigger (null: nothing). Errors name the flow.
arrow::Result<FlowStep> StepFlow(RunContext& ctx, DatasetStream& ds, FlowStream& f,
                                 const std::shared_ptr<arrow::Table>& source_rows,
                                 const TriggerContext& trigger,
                                 const std::map<std::string, DatasetStream*>& streams);

// Binds `content` in the run's catalog as `name` (replacing what was bound).
arrow::Status BindTable(RunContext& ctx, const std::string& name,
                        const std::shared_ptr<arrow::Table>& content);

// Before the first trigger of a run: for an Append flow with committed
// output, its previous query result over the input prefixes recorded at the
// commit (inputs must be bound to their full content; prefixes are bound
// temporarily).
arrow::Status PrimeAppendFlow(RunContext& ctx, DatasetStream& ds, FlowStream& f,
                              const std::map<std::string, DatasetStream*>& streams);

// ---- Helpers shared with the incremental mode (incremental_flow.cc) ----

// Registers `table` in the session under `name` for the lifetime of the object.
class Registered {
 public:
  Registered(RunContext& ctx, std::string name) : ctx_(ctx), name_(std::move(name)) {}
  ~Registered() {
    if (registered_) (void)ctx_.session->Release(name_);
  }
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;
  arrow::Status Set(const std::shared_ptr<arrow::Table>& table) {
    ARROW_RETURN_NOT_OK(ctx_.session->RegisterArrow(name_, table));
    registered_ = true;
    return arrow::Status::OK();
  }

 private:
  RunContext& ctx_;
  std::string name_;
  bool registered_ = false;
};

// Runs `sql` in the run's session; errors name the flow.
arrow::Result<std::shared_ptr<arrow::Table>> Query(RunContext& ctx, const Flow& flow,
                                                   const std::string& sql);

// The target's expectations and schema applied to `rows` (violation counts go
// to `step`); fixes ds.schema on the first rows.
arrow::Result<std::shared_ptr<arrow::Table>> CheckRows(RunContext& ctx, DatasetStream& ds,
                                                       const Flow& flow,
                                                       const std::shared_ptr<arrow::Table>& rows,
                                                       FlowStep* step);

// The watermark declared for `input` of `flow`: the flow's own when the input
// (of `schema`, null = unknown) has its column, else one declared by a flow
// writing the input. Both modes read event time through this.
std::optional<Watermark> InputWatermark(const Pipeline& p, const Flow& flow,
                                        const std::string& input,
                                        const std::shared_ptr<arrow::Schema>& schema);

// The largest non-NULL value of a table's first column (int64), or nullopt.
std::optional<int64_t> MaxInt64(const arrow::Table& t);

// Whether the dataset keeps its rows in memory (see DatasetStream::retain).
bool KeepsRows(const DatasetStream& ds);

// A rewriting flow (Complete, Update, CDC) now holds `rows`.
void ReplaceRows(FlowStream& f, const std::shared_ptr<arrow::Table>& rows, FlowStep* step);

// Appends checked rows to an append-only flow: to `added` (the next commit),
// `recent` (this trigger's), and to `rows` when `keep`.
arrow::Status AddRows(FlowStream& f, const std::shared_ptr<arrow::Table>& rows, FlowStep* step,
                      bool keep);

// a ++ b (either may be null or empty; fields that differ only in
// nullability unify).
arrow::Result<std::shared_ptr<arrow::Table>> Append(const std::shared_ptr<arrow::Table>& a,
                                                    const std::shared_ptr<arrow::Table>& b);

arrow::Result<std::shared_ptr<arrow::Table>> EmptyLike(const std::shared_ptr<arrow::Table>& t);

}  // namespace thund::native
