#include "backend/native/incremental_flow.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include <arrow/array/array_primitive.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api.h>

#include "backend/native/flow_runner.h"
#include "backend/native/direct_partial.h"
#include "backend/native/field_named.h"
#include "backend/native/incremental_cdc.h"
#include "backend/native/pane_partial.h"
#include "backend/native/partial_merge.h"
#include "engine/batch/compute_init.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/stream/output_mode.h"
#include "ir/validate_internal.h"
#include "sql/duckdb_types.h"
#include "thund/sql_dialect.h"
#include "thund/validate.h"
#include "thund/json_text.h"

namespace thund::native {
namespace {

using engine::QuoteIdentifier;
using engine::stream::IncrementalOperator;
using engine::stream::kEndOfInput;
using engine::stream::kNoWatermark;
using Json = nlohmann::json;

constexpr const char* kIn = "__thund_inc_in";
constexpr const char* kMerged = "__thund_inc_merged";
constexpr const char* kPartial = "__thund_inc_partial";
constexpr const char* kState = "__thund_inc_state";
constexpr const char* kResult = "__thund_inc_result";
constexpr const char* kPrev = "__thund_inc_prev";
constexpr const char* kDelta = "__thund_inc_upsert";
constexpr const char* kHiddenEnd = "__thund_window_end";
// The whole result of an aggregation under an outer query (plan.inner_block).
constexpr const char* kInner = "__thund_inc_inner";

// The name `base` takes for the i-th of several relations a trigger registers
// in turn (inputs, pane blocks). Each keeps a name of its own, so its view,
// bound to its schema, is reused trigger after trigger; one name shared by
// relations of different schemas would re-create the view at every switch
// (DuckDbSession::RegisterArrow).
std::string Slot(const char* base, size_t i) { return base + ("_" + std::to_string(i)); }

std::string Micros(const std::string& expr) { return "epoch_us(" + expr + ")"; }

bool SameName(const std::string& a, const std::string& b) {
  return internal::Lower(a) == internal::Lower(b);
}

const DatasetStream* FindStream(const std::map<std::string, DatasetStream*>& streams,
                                const std::string& name) {
  for (const auto& [n, ds] : streams) {
    if (SameName(n, name)) return ds;
  }
  return nullptr;
}

std::string Key(const std::string& input, const std::string& flow) { return input + "/" + flow; }

// The rows `in` gained since `consumed` (per writing flow), which advances.
arrow::Result<std::shared_ptr<arrow::Table>> NewRows(const DatasetStream& in,
                                                     std::map<std::string, int64_t>* consumed) {
  std::vector<std::shared_ptr<arrow::Table>> parts;
  for (const FlowStream& g : in.flows) {
    int64_t& from = (*consumed)[Key(in.dataset->name, g.flow->name)];
    if (from >= g.total_rows) continue;
    // Rows before this trigger's come from `rows` (the flow's rows kept in
    // memory, or loaded from the committed version at the start of the run),
    // this trigger's from `recent`.
    if (from < g.recent_start) {
      if (!g.rows || g.rows->num_rows() < g.recent_start) {
        return arrow::Status::Invalid("the rows of '", in.dataset->name, "' from flow '",
                                      g.flow->name, "' after row ", from,
                                      " are no longer in memory; run with --full-refresh");
      }
      parts.push_back(g.rows->Slice(from, g.recent_start - from));
    }
    if (g.recent && g.total_rows > g.recent_start) {
      parts.push_back(g.recent->Slice(std::max<int64_t>(0, from - g.recent_start)));
    }
    from = g.total_rows;
  }
  if (!in.schema) return arrow::Status::Invalid("dataset '", in.dataset->name, "' has no schema");
  if (parts.empty()) return arrow::Table::MakeEmpty(in.schema);
  if (parts.size() == 1) return parts[0];
  return arrow::ConcatenateTables(parts);
}

// Binds the flow's streaming inputs to `rows` for the object's lifetime, then
// back to what the loop binds them to (everything, or nothing when no reader
// needs it).
class InputBinding {
 public:
  InputBinding(RunContext& ctx, const std::map<std::string, DatasetStream*>& streams)
      : ctx_(ctx), streams_(streams) {}
  ~InputBinding() {
    for (const auto& name : bound_) {
      const DatasetStream* ds = FindStream(streams_, name);
      if (!ds || !ds->schema) continue;
      auto content = ds->Content();
      if (content.ok()) (void)BindTable(ctx_, name, *content);
    }
  }
  arrow::Status Bind(const std::string& name, const std::shared_ptr<arrow::Table>& rows) {
    bound_.push_back(name);
    return BindTable(ctx_, name, rows);
  }

 private:
  RunContext& ctx_;
  const std::map<std::string, DatasetStream*>& streams_;
  std::vector<std::string> bound_;
};

// The rows of `t` whose value in `col` (a column of `t`, chunks of ArrayT)
// `keep(chunk, index)` accepts; `t` itself when it accepts them all.
template <typename ArrayT, typename Keep>
arrow::Result<std::shared_ptr<arrow::Table>> RowsWhere(const std::shared_ptr<arrow::Table>& t,
                                                       const arrow::ChunkedArray& col, Keep keep) {
  arrow::BooleanBuilder mask;
  ARROW_RETURN_NOT_OK(mask.Reserve(t->num_rows()));
  int64_t kept = 0;
  for (const auto& chunk : col.chunks()) {
    const auto& a = static_cast<const ArrayT&>(*chunk);
    for (int64_t k = 0; k < a.length(); ++k) {
      const bool in = keep(a, k);
      mask.UnsafeAppend(in);
      kept += in;
    }
  }
  if (kept == t->num_rows()) return t;
  ARROW_ASSIGN_OR_RAISE(auto bits, mask.Finish());
  ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(t, bits));
  return filtered.table();
}

// The smallest and largest event time of `column` in microseconds, read
// straight from a timestamp column (no query). nullopt for other types, whose
// range the caller asks DuckDB for.
struct TimeRange {
  std::optional<int64_t> min, max;  // nullopt when every value is NULL
};
std::optional<TimeRange> TimestampRange(const arrow::Table& t, const std::string& column) {
  auto col = t.GetColumnByName(column);
  if (!col || col->type()->id() != arrow::Type::TIMESTAMP) return std::nullopt;
  const auto unit = std::static_pointer_cast<arrow::TimestampType>(col->type())->unit();
  TimeRange r;
  for (const auto& chunk : col->chunks()) {
    auto arr = std::static_pointer_cast<arrow::TimestampArray>(chunk);
    for (int64_t i = 0; i < arr->length(); ++i) {
      if (arr->IsNull(i)) continue;
      const int64_t v = FloorMicros(arr->Value(i), unit);
      r.min = std::min(r.min.value_or(v), v);
      r.max = std::max(r.max.value_or(v), v);
    }
  }
  return r;
}

// The rows of `t` where the boolean column `flag` is true, and the others;
// the column is dropped from both when `drop`.
arrow::Result<std::pair<std::shared_ptr<arrow::Table>, std::shared_ptr<arrow::Table>>> SplitBy(
    const std::shared_ptr<arrow::Table>& t, const std::string& flag, bool drop = true) {
  ARROW_RETURN_NOT_OK(engine::batch::EnsureComputeInitialized());
  const int i = t->schema()->GetFieldIndex(flag);
  if (i < 0) return arrow::Status::Invalid("no column ", flag);
  auto mask = t->column(i);
  ARROW_ASSIGN_OR_RAISE(auto inverse, arrow::compute::Invert(mask));
  std::shared_ptr<arrow::Table> base = t;
  if (drop) {
    ARROW_ASSIGN_OR_RAISE(base, t->RemoveColumn(i));
  }
  ARROW_ASSIGN_OR_RAISE(auto yes, arrow::compute::Filter(base, mask));
  ARROW_ASSIGN_OR_RAISE(auto no, arrow::compute::Filter(base, inverse));
  return std::make_pair(yes.table(), no.table());
}

// W from the clocks: min over the non-idle inputs of (max event - lateness);
// when every input is idle, the largest of them.
std::optional<int64_t> Combine(const std::map<std::string, InputClock>& clocks, int64_t now_ms) {
  std::optional<int64_t> active, idle;
  bool unknown_active = false, any = false;
  for (const auto& [name, c] : clocks) {
    if (c.column.empty()) continue;
    any = true;
    const bool is_idle = c.idle_ms && now_ms - c.last_arrival_ms > *c.idle_ms;
    if (!c.max_event_us) {
      if (!is_idle) unknown_active = true;
      continue;
    }
    const int64_t w = *c.max_event_us - c.lateness_us;
    if (is_idle) {
      idle = std::max(idle.value_or(w), w);
    } else {
      active = std::min(active.value_or(w), w);
    }
  }
  if (!any || unknown_active) return std::nullopt;
  return active ? active : idle;
}

// `w` moved back by `by`, the sentinels unchanged.
int64_t Shift(int64_t w, int64_t by) {
  return w == kNoWatermark || w == kEndOfInput ? w : w - by;
}

class Stepper {
 public:
  Stepper(RunContext& ctx, DatasetStream& ds, FlowStream& f, const TriggerContext& trigger,
          const std::map<std::string, DatasetStream*>& streams, int64_t now_ms)
      : ctx_(ctx), ds_(ds), f_(f), flow_(*f.flow), inc_(*f.incremental), trigger_(trigger),
        streams_(streams), now_ms_(now_ms) {}

  arrow::Result<FlowStep> Run();

 private:
  arrow::Status TakeInputs();
  arrow::Status Stateless();
  arrow::Status PartialAggregate();
  arrow::Status RowsAggregate();
  arrow::Status Windowed();
  // kWindowed over window panes (IncrementalFlow::pane_blocks).
  arrow::Status WindowPanes();
  // kWindowed: the window ends that close this trigger, lo < end <= hi
  // (W_prev < end + delay <= W_now; nullopt: open).
  std::pair<std::optional<int64_t>, std::optional<int64_t>> ClosingEnds() const {
    const int64_t delay = inc_.plan.emit_delay_us;
    std::optional<int64_t> lo, hi;
    if (w_prev_ != kNoWatermark) lo = w_prev_ - delay;
    if (w_now_ != kEndOfInput) hi = w_now_ - delay;
    return {lo, hi};
  }
  // The SQL of block i's aggregation over the windows ending in (lo, hi],
  // from its partials (PaneMergeSql), which it registers into `held` for the
  // query to read; "" while its stream's schema is unknown.
  arrow::Result<std::string> MergedPanesSql(size_t i, std::optional<int64_t> lo,
                                            std::optional<int64_t> hi,
                                            std::vector<std::unique_ptr<Registered>>* held);
  // The time zone of block i's time column, from its stream's schema: set
  // for a TIMESTAMPTZ column (an error when it is not a timestamp column).
  arrow::Result<std::optional<std::string>> PaneTimeZone(size_t i) const;
  // Block i's new rows folded into its partials in C++ (pane_partial.h);
  // false when the block is outside that path (the query then runs).
  arrow::Result<bool> FoldPanes(size_t i, const std::shared_ptr<arrow::Table>& rows);
  // The windows ending in (lo, hi] emitted from partials folded in C++: each
  // derived table's rows made in C++ and the query run over them; false when
  // a block is outside that path (tumbling windows, folded partials).
  arrow::Result<bool> ClosePanesDirect(std::optional<int64_t> lo, std::optional<int64_t> hi);
  // The name an input's new rows are registered under: one per stream input
  // (Slot), whichever step registers them.
  std::string InputName(const std::string& input) const {
    const auto& ins = inc_.plan.stream_inputs;
    size_t i = 0;
    while (i < ins.size() && !SameName(ins[i], input)) ++i;
    return Slot(kIn, i);
  }
  arrow::Status StreamJoin();
  // The join's new rows run through `sql` (the flow's query, or the
  // partial aggregation over the join): sql over new(A) x (kept(B) + new(B)),
  // then over kept(A) x new(B), appended (null: no new rows met). The new
  // rows then join the kept ones, and rows no future row can meet leave.
  arrow::Result<std::shared_ptr<arrow::Table>> JoinNewRows(const std::string& sql);
  // plan.inner_block: the outer query over the aggregation's result rows.
  arrow::Result<std::shared_ptr<arrow::Table>> Outer(const std::shared_ptr<arrow::Table>& inner);
  // Of join side i's new rows, those passing the conditions on that side
  // alone (RowReach::keep_sql), in the rows' own types; `rows` when there are
  // none or the switch is off.
  arrow::Result<std::shared_ptr<arrow::Table>> JoinCandidates(
      size_t i, const std::shared_ptr<arrow::Table>& rows);
  // The kept rows of join side i that `other` (the other side's new rows) can
  // meet: those of their keys (the join index), or all of them.
  arrow::Result<std::shared_ptr<arrow::Table>> KeptMeeting(
      size_t i, const std::shared_ptr<arrow::Table>& kept,
      const std::shared_ptr<arrow::Table>& other);
  arrow::Status Dedup();
  arrow::Status FirstRow();
  // The rows of input `i` whose time column t has lo < t + to_us and
  // t + from_us <= hi (nullopt bounds are open), by the input's reach.
  arrow::Result<std::shared_ptr<arrow::Table>> Reaching(size_t i,
                                                        std::optional<int64_t> lo,
                                                        std::optional<int64_t> hi);
  arrow::Result<std::shared_ptr<arrow::Table>> Q(const std::string& sql) {
    return Query(ctx_, flow_, sql);
  }
  arrow::Result<std::shared_ptr<arrow::Table>> Final(const std::shared_ptr<arrow::Table>& state);
  arrow::Result<std::shared_ptr<arrow::Table>> Merge(const std::shared_ptr<arrow::Table>& partial);
  arrow::Result<std::shared_ptr<arrow::Table>> MergeSessions(
      const std::shared_ptr<arrow::Table>& partial);
  arrow::Status Emit(std::shared_ptr<arrow::Table> rows);
  // The partials of the new rows computed in C++ (DirectPartial), or null
  // when the flow's aggregation is outside that path.
  arrow::Result<std::shared_ptr<arrow::Table>> Direct();
  WindowKeys Keys() const {
    return {inc_.agg.window_struct_key, inc_.agg.window_start_key, inc_.agg.window_end_key,
            inc_.agg.window_size_us};
  }
  // What the flow emitted so far (its Update state), or no rows like `like`.
  arrow::Result<std::shared_ptr<arrow::Table>> Emitted(const std::shared_ptr<arrow::Table>& like) {
    if (f_.rows) return f_.rows;
    return EmptyLike(like);
  }
  arrow::Status Replace(std::shared_ptr<arrow::Table> rows);
  // Emits the rows of a result that only grows (stateless, stream join).
  arrow::Status EmitGrowing(const std::shared_ptr<arrow::Table>& out);
  arrow::Result<std::shared_ptr<arrow::Table>> DropHidden(std::shared_ptr<arrow::Table> t);
  OutputMode Mode() const {
    return flow_.streaming ? flow_.streaming->output_mode : OutputMode::kAppend;
  }

  RunContext& ctx_;
  DatasetStream& ds_;
  FlowStream& f_;
  const Flow& flow_;
  IncrementalFlow& inc_;
  const TriggerContext& trigger_;
  const std::map<std::string, DatasetStream*>& streams_;
  int64_t now_ms_;
  FlowStep step_;
  std::map<std::string, std::shared_ptr<arrow::Table>> fresh_;  // per input, late rows dropped
  int64_t fresh_rows_ = 0;
  int64_t w_prev_ = kNoWatermark, w_now_ = kNoWatermark;
  // The last Merge kept the state's groups in their places (the C++ merge:
  // the state's rows in order, then the new groups).
  bool merged_in_place_ = false;
};

arrow::Status Stepper::TakeInputs() {
  const bool stateful = inc_.plan.op != IncrementalOperator::kStateless;
  for (const auto& in : inc_.plan.stream_inputs) {
    if (fresh_.count(in)) continue;
    const DatasetStream* ds = FindStream(streams_, in);
    if (!ds) return arrow::Status::Invalid("input '", in, "' is not a stream of this run");
    ARROW_ASSIGN_OR_RAISE(auto rows, NewRows(*ds, &inc_.consumed));
    step_.rows_in += rows->num_rows();
    InputClock& clock = inc_.clocks[in];
    if (rows->num_rows() > 0) clock.last_arrival_ms = now_ms_;
    if (!clock.column.empty() && rows->schema()->GetFieldIndex(clock.column) >= 0 &&
        rows->num_rows() > 0) {
      // Registered only when a query needs the rows (a timestamp column's
      // range is read in C++).
      const std::string in_name = InputName(in);
      Registered r(ctx_, in_name);
      const std::string col = QuoteIdentifier(clock.column);
      const std::optional<TimeRange> range = TimestampRange(*rows, clock.column);
      // No row below W: nothing is late (the usual case needs no query).
      const bool maybe_late =
          !range || (range->min && w_prev_ != kNoWatermark && *range->min < w_prev_);
      const bool split_late = stateful && w_prev_ != kNoWatermark && maybe_late;
      if (!range || split_late) ARROW_RETURN_NOT_OK(r.Set(rows));
      if (split_late) {
        const std::string w = std::to_string(w_prev_);
        ARROW_ASSIGN_OR_RAISE(
            auto late, Q("SELECT *, " + engine::QuoteString(flow_.name) + " AS __flow, " +
                         (w_prev_ == kEndOfInput ? "'infinity'::TIMESTAMP"
                                                 : "make_timestamp(" + w + "::BIGINT)") +
                         " AS __watermark FROM " + in_name + " WHERE " + Micros(col) + " < " +
                         w));
        if (late->num_rows() > 0) {
          step_.late_rows += late->num_rows();
          ARROW_ASSIGN_OR_RAISE(step_.late, Append(step_.late, late));
          ARROW_ASSIGN_OR_RAISE(rows, Q("SELECT * FROM " + in_name + " WHERE " + col +
                                        " IS NULL OR " + Micros(col) + " >= " + w));
        }
      }
      std::optional<int64_t> m;
      if (range) {
        m = range->max;
      } else {
        ARROW_ASSIGN_OR_RAISE(auto max,
                              Q("SELECT " + Micros("max(" + col + ")") + "::BIGINT FROM " +
                                in_name));
        m = MaxInt64(*max);
      }
      if (m) clock.max_event_us = std::max(clock.max_event_us.value_or(*m), *m);
    }
    fresh_rows_ += rows->num_rows();
    fresh_[in] = rows;
  }
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Table>> Stepper::DropHidden(std::shared_ptr<arrow::Table> t) {
  if (!inc_.hidden_end) return t;
  const int i = t->schema()->GetFieldIndex(kHiddenEnd);
  if (i < 0) return t;
  return t->RemoveColumn(i);
}

arrow::Status Stepper::Emit(std::shared_ptr<arrow::Table> rows) {
  ARROW_ASSIGN_OR_RAISE(rows, DropHidden(std::move(rows)));
  if (rows->num_rows() == 0) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx_, ds_, flow_, rows, &step_));
  if (Mode() == OutputMode::kUpdate && inc_.plan.op != IncrementalOperator::kStateless &&
      inc_.plan.op != IncrementalOperator::kStreamJoin) {
    ARROW_ASSIGN_OR_RAISE(auto prev, Emitted(checked));
    Registered r_prev(ctx_, kPrev), r_delta(ctx_, kDelta);
    ARROW_RETURN_NOT_OK(r_prev.Set(prev));
    ARROW_RETURN_NOT_OK(r_delta.Set(checked));
    ARROW_ASSIGN_OR_RAISE(f_.rows,
                          Q(engine::stream::UpsertStateSql(kPrev, kDelta, f_.update_keys)));
    step_.delta = checked;
    step_.rows_out = checked->num_rows();
    return arrow::Status::OK();
  }
  return AddRows(f_, checked, &step_, KeepsRows(ds_));
}

arrow::Status Stepper::EmitGrowing(const std::shared_ptr<arrow::Table>& out) {
  if (Mode() != OutputMode::kComplete) return Emit(out);
  // Complete: the target holds every row so far (the result only grows).
  ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx_, ds_, flow_, out, &step_));
  ARROW_ASSIGN_OR_RAISE(auto all, Append(f_.rows, checked));
  ReplaceRows(f_, all, &step_);
  step_.rows_out = checked->num_rows();
  return arrow::Status::OK();
}

arrow::Status Stepper::Replace(std::shared_ptr<arrow::Table> rows) {
  ARROW_ASSIGN_OR_RAISE(rows, DropHidden(std::move(rows)));
  ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx_, ds_, flow_, rows, &step_));
  ReplaceRows(f_, checked, &step_);
  return arrow::Status::OK();
}

arrow::Status Stepper::Stateless() {
  if (fresh_rows_ == 0) return arrow::Status::OK();
  std::shared_ptr<arrow::Table> out;
  {
    InputBinding binding(ctx_, streams_);
    for (const auto& [name, rows] : fresh_) ARROW_RETURN_NOT_OK(binding.Bind(name, rows));
    ARROW_ASSIGN_OR_RAISE(out, Q(inc_.query_sql));
  }
  return EmitGrowing(out);
}

arrow::Result<std::shared_ptr<arrow::Table>> Stepper::Final(
    const std::shared_ptr<arrow::Table>& state) {
  if (ctx_.options->native.hash_merge && !inc_.agg.final_columns.empty()) {
    // Only renames: the state's columns under the query's names, no query.
    arrow::FieldVector fields;
    std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
    for (const auto& [from, name] : inc_.agg.final_columns) {
      const int i = state->schema()->GetFieldIndex(from);
      if (i < 0) return arrow::Status::Invalid("the state has no column ", from);
      fields.push_back(state->schema()->field(i)->WithName(name));
      columns.push_back(state->column(i));
    }
    return arrow::Table::Make(arrow::schema(fields), columns, state->num_rows());
  }
  Registered r(ctx_, kState);
  ARROW_RETURN_NOT_OK(r.Set(state));
  return Q(inc_.agg.final_sql);
}

arrow::Result<std::shared_ptr<arrow::Table>> Stepper::Direct() {
  if (!ctx_.options->native.direct_partial || !inc_.agg.direct.usable || !inc_.plan.window ||
      fresh_.size() != 1) {
    return nullptr;
  }
  const std::shared_ptr<arrow::Table>& rows = fresh_.begin()->second;
  if (!inc_.partial_schema) {
    // The partial query's columns and types, from DuckDB once.
    ARROW_ASSIGN_OR_RAISE(auto empty, EmptyLike(rows));
    InputBinding binding(ctx_, streams_);
    ARROW_RETURN_NOT_OK(binding.Bind(fresh_.begin()->first, empty));
    ARROW_ASSIGN_OR_RAISE(auto none, Q("SELECT * FROM (" + inc_.agg.partial_sql + ") LIMIT 0"));
    inc_.partial_schema = none->schema();
  }
  if (!inc_.direct_merger) {
    auto made = PartialMerger::Make(inc_.partial_schema, inc_.agg.num_groups, inc_.agg.merge);
    if (!made.ok()) {
      if (made.status().IsNotImplemented()) return nullptr;
      return FlowError(flow_, made.status());
    }
    inc_.direct_merger = std::move(*made);
  }
  auto partial = DirectPartial(rows, inc_.agg, inc_.plan.window->window, inc_.partial_schema,
                               inc_.direct_merger.get());
  if (partial.ok()) return partial;
  if (partial.status().IsNotImplemented()) return nullptr;
  return FlowError(flow_, partial.status());
}

arrow::Result<std::shared_ptr<arrow::Table>> Stepper::Merge(
    const std::shared_ptr<arrow::Table>& partial) {
  if (inc_.session) return MergeSessions(partial);
  if (ctx_.options->native.hash_merge) {
    if (!inc_.merger || !inc_.merger->schema().Equals(*partial->schema(), false)) {
      auto made = PartialMerger::Make(partial->schema(), inc_.agg.num_groups, inc_.agg.merge);
      if (!made.ok() && !made.status().IsNotImplemented()) {
        return FlowError(flow_, made.status());
      }
      inc_.merger = made.ok() ? std::move(*made) : nullptr;
    }
    if (inc_.merger) {
      auto merged = inc_.merger->Merge(inc_.partials, partial);
      if (merged.ok()) {
        merged_in_place_ = true;
        return merged;
      }
      if (!merged.status().IsNotImplemented()) return FlowError(flow_, merged.status());
    }
    // A type outside the fast path: the SQL merge below.
  }
  const auto& fields = partial->schema()->fields();
  const int groups = inc_.agg.num_groups;
  std::string cols, keys, merged;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string c = QuoteIdentifier(fields[i]->name());
    cols += (i ? ", " : "") + c;
    if (static_cast<int>(i) < groups) {
      keys += (i ? ", " : "") + c;
      merged += c + ", ";
    } else {
      const std::string& how = inc_.agg.merge.at(i - groups);
      merged += "CAST(" + how + "(" + c + ") AS " + sql::DuckDbTypeName(*fields[i]->type()) +
                ") AS " + c + ", ";
    }
  }
  Registered r_partial(ctx_, kPartial), r_state(ctx_, kState);
  ARROW_RETURN_NOT_OK(r_partial.Set(partial));
  std::string from = "SELECT " + cols + ", true AS __new FROM " + kPartial;
  if (inc_.partials && inc_.partials->num_rows() > 0) {
    ARROW_RETURN_NOT_OK(r_state.Set(inc_.partials));
    from = "SELECT " + cols + ", false AS __new FROM " + kState + " UNION ALL " + from;
  }
  return Q("SELECT " + merged + "bool_or(__new) AS __touched FROM (" + from + ")" +
           (keys.empty() ? "" : " GROUP BY " + keys));
}

// Sessions: the new rows' sessions (from the partial query) and the open
// ones of the state, per key, sorted by start; one that starts after every
// earlier one of its key ended begins a merged session (a session whose end
// a row reaches still takes it, as the dialect's session rule does). The
// merged session spans them all and merges their partials.
arrow::Result<std::shared_ptr<arrow::Table>> Stepper::MergeSessions(
    const std::shared_ptr<arrow::Table>& partial) {
  const auto& fields = partial->schema()->fields();
  const int groups = inc_.agg.num_groups;
  const sql::AggregateDecomposition& a = inc_.agg;
  auto g = [](int i) { return QuoteIdentifier("__g" + std::to_string(i)); };
  std::string start, end;
  if (a.window_struct_key >= 0) {
    start = "struct_extract(" + g(a.window_struct_key) + ", 'start')";
    end = "struct_extract(" + g(a.window_struct_key) + ", 'end')";
  } else {
    start = g(a.window_start_key);
    end = g(a.window_end_key);
  }
  std::string cols, others, merged;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string c = QuoteIdentifier(fields[i]->name());
    const int k = static_cast<int>(i);
    cols += (i ? ", " : "") + c;
    if (k == a.window_struct_key) {
      merged += "{'start': min(__s), 'end': max(__e)} AS " + c + ", ";
    } else if (k == a.window_start_key) {
      merged += "min(__s) AS " + c + ", ";
    } else if (k == a.window_end_key) {
      merged += "max(__e) AS " + c + ", ";
    } else if (k < groups) {
      others += (others.empty() ? "" : ", ") + c;
      merged += c + ", ";
    } else {
      merged += "CAST(" + inc_.agg.merge.at(i - groups) + "(" + c + ") AS " +
                sql::DuckDbTypeName(*fields[i]->type()) + ") AS " + c + ", ";
    }
  }
  Registered r_partial(ctx_, kPartial), r_state(ctx_, kState);
  ARROW_RETURN_NOT_OK(r_partial.Set(partial));
  const std::string spans = ", " + start + " AS __s, " + end + " AS __e";
  std::string u = "SELECT " + cols + spans + ", true AS __new FROM " + kPartial;
  if (inc_.partials && inc_.partials->num_rows() > 0) {
    ARROW_RETURN_NOT_OK(r_state.Set(inc_.partials));
    u = "SELECT " + cols + spans + ", false AS __new FROM " + kState + " UNION ALL " + u;
  }
  const std::string by = others.empty() ? "" : "PARTITION BY " + others + " ";
  const std::string order = "ORDER BY __s, __e ROWS BETWEEN UNBOUNDED PRECEDING AND ";
  const std::string marked =
      "SELECT *, CASE WHEN __s <= max(__e) OVER (" + by + order +
      "1 PRECEDING) THEN 0 ELSE 1 END AS __nw FROM (" + u + ")";
  const std::string numbered =
      "SELECT *, sum(__nw) OVER (" + by + order + "CURRENT ROW) AS __sid FROM (" + marked + ")";
  return Q("SELECT " + merged + "bool_or(__new) AS __touched FROM (" + numbered + ") GROUP BY " +
           (others.empty() ? "" : others + ", ") + "__sid");
}

arrow::Status Stepper::PartialAggregate() {
  std::shared_ptr<arrow::Table> merged = inc_.partials;
  bool changed = fresh_rows_ > 0;
  if (inc_.plan.join_input) {
    // The join's new rows, pre-aggregated; the sides take the new rows (and
    // drop those no future row meets) whether or not any met. Nothing met:
    // no group changed.
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Table> partial,
                          JoinNewRows(inc_.agg.partial_sql));
    changed = partial && partial->num_rows() > 0;
    if (changed) {
      ARROW_ASSIGN_OR_RAISE(merged, Merge(partial));
    }
  } else if (changed) {
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Table> partial, Direct());
    if (!partial) {
      InputBinding binding(ctx_, streams_);
      for (const auto& [name, rows] : fresh_) ARROW_RETURN_NOT_OK(binding.Bind(name, rows));
      ARROW_ASSIGN_OR_RAISE(partial, Q(inc_.agg.partial_sql));
    }
    if (inc_.agg.pane_windows > 0) {
      ARROW_ASSIGN_OR_RAISE(partial, ExpandPanes(partial, Keys(), inc_.agg.pane_windows,
                                                 inc_.agg.pane_slide_us));
    }
    ARROW_ASSIGN_OR_RAISE(merged, Merge(partial));
  }
  if (!merged) return arrow::Status::OK();
  const std::string& end = inc_.agg.window_end_sql;
  const bool windowed = !end.empty();
  const bool closes = windowed && w_now_ != kNoWatermark && w_now_ != w_prev_;
  if (!changed && !closes && !(trigger_.input_finished && !windowed)) {
    return arrow::Status::OK();
  }
  std::shared_ptr<arrow::Table> closed, open = merged;
  // Which rows of `merged` leave (null: none), when known in its row order.
  std::shared_ptr<arrow::ChunkedArray> left;
  bool left_known = true;
  if (closes) {
    // The windows W closed are flagged (in C++, or by a query of the window
    // end); the split is an Arrow filter. A session closes once W passes its
    // end (a row at the end still joins it).
    std::shared_ptr<arrow::Table> flagged;
    if (ctx_.options->native.hash_merge) {
      auto f = WindowClosed(merged, Keys(), w_now_, inc_.session, w_now_ == kEndOfInput,
                            "__closed");
      if (!f.ok() && !f.status().IsNotImplemented()) return FlowError(flow_, f.status());
      if (f.ok()) flagged = *f;
    }
    left_known = flagged != nullptr;
    if (!flagged) {
      Registered r_merged(ctx_, kMerged);
      ARROW_RETURN_NOT_OK(r_merged.Set(merged));
      const std::string cond = w_now_ == kEndOfInput ? "TRUE"
                               : Micros(end) + (inc_.session ? " < " : " <= ") +
                                     std::to_string(w_now_);
      ARROW_ASSIGN_OR_RAISE(flagged, Q(std::string("SELECT *, coalesce(") + cond +
                                       ", false) AS __closed FROM " + kMerged));
    }
    if (left_known) left = flagged->GetColumnByName("__closed");
    ARROW_ASSIGN_OR_RAISE(auto parts, SplitBy(flagged, "__closed"));
    closed = parts.first;
    open = parts.second;
  }
  switch (Mode()) {
    case OutputMode::kAppend:
      if (closed && closed->num_rows() > 0) {
        ARROW_ASSIGN_OR_RAISE(auto rows, Final(closed));
        ARROW_RETURN_NOT_OK(Emit(rows));
      } else if (!windowed && trigger_.input_finished) {
        ARROW_ASSIGN_OR_RAISE(auto rows, Final(merged));
        if (inc_.plan.inner_block) {
          ARROW_ASSIGN_OR_RAISE(rows, Outer(rows));
        }
        ARROW_RETURN_NOT_OK(Emit(rows));
      }
      break;
    case OutputMode::kUpdate:
      if (changed) {
        ARROW_ASSIGN_OR_RAISE(auto parts, SplitBy(merged, "__touched", /*drop=*/false));
        ARROW_ASSIGN_OR_RAISE(auto rows, Final(parts.first));
        ARROW_RETURN_NOT_OK(Emit(rows));
      }
      break;
    case OutputMode::kComplete: {
      if (closed && closed->num_rows() > 0) {
        ARROW_ASSIGN_OR_RAISE(auto rows, Final(closed));
        ARROW_ASSIGN_OR_RAISE(rows, DropHidden(rows));
        ARROW_ASSIGN_OR_RAISE(inc_.closed, Append(inc_.closed, rows));
      }
      ARROW_ASSIGN_OR_RAISE(auto rows, Final(open));
      if (inc_.plan.inner_block) {
        // No window: every group is open, the result is the outer query's.
        ARROW_ASSIGN_OR_RAISE(rows, Outer(rows));
      } else {
        ARROW_ASSIGN_OR_RAISE(rows, Append(inc_.closed, rows));
      }
      ARROW_RETURN_NOT_OK(Replace(rows));
      break;
    }
  }
  // Which partials changed in place since the last checkpoint: the touched
  // groups of a merge that kept every group in its place.
  const bool left_any = closed && closed->num_rows() > 0;
  if (left_any || (changed && !merged_in_place_)) inc_.partials_in_place = false;
  if (changed && inc_.partials_in_place) {
    auto& marks = inc_.partials_changed;
    marks.resize(static_cast<size_t>(open->num_rows()), 0);
    const auto touched = open->GetColumnByName("__touched");
    if (!touched) {
      inc_.partials_in_place = false;
    } else {
      size_t r = 0;
      for (const auto& chunk : touched->chunks()) {
        const auto& flags = static_cast<const arrow::BooleanArray&>(*chunk);
        for (int64_t i = 0; i < flags.length(); ++i, ++r) {
          if (flags.IsValid(i) && flags.Value(i)) marks[r] = 1;
        }
      }
    }
  }
  // The touched flags are this trigger's alone: kept, the groups touched the
  // trigger before would change again, and the checkpoint would write them.
  if (const int t = open->schema()->GetFieldIndex("__touched"); t >= 0) {
    ARROW_ASSIGN_OR_RAISE(open, open->RemoveColumn(t));
  }
  // The merger keeps the open groups hashed for the next trigger.
  if (inc_.merger) inc_.merger->Keep(left_known ? merged : nullptr, left, open);
  inc_.partials = open;
  return arrow::Status::OK();
}

arrow::Status Stepper::RowsAggregate() {
  const std::string& input = inc_.plan.stream_inputs.front();
  if (fresh_rows_ > 0) {
    ARROW_ASSIGN_OR_RAISE(inc_.kept, Append(inc_.kept, fresh_[input]));
  }
  const bool windowed = !inc_.end_expr.empty();
  const bool closes = windowed && w_now_ != kNoWatermark && w_now_ != w_prev_;
  if (!inc_.kept || (fresh_rows_ == 0 && !closes && !trigger_.input_finished)) {
    return arrow::Status::OK();
  }
  InputBinding binding(ctx_, streams_);
  ARROW_RETURN_NOT_OK(binding.Bind(input, inc_.kept));
  ARROW_ASSIGN_OR_RAISE(auto result, Q(inc_.query_sql));
  Registered r_result(ctx_, kResult);
  ARROW_RETURN_NOT_OK(r_result.Set(result));
  // A session closes once W passes its end (a row at the end still joins it).
  const int64_t strict = inc_.session ? 1 : 0;
  const int64_t wp = Shift(w_prev_, strict), wn = Shift(w_now_, strict);
  const std::string& end = inc_.end_expr;
  if (!windowed) {
    if (Mode() == OutputMode::kComplete) return Replace(result);
    if (Mode() == OutputMode::kAppend) {
      return trigger_.input_finished ? Emit(result) : arrow::Status::OK();
    }
  }
  const std::string open_cond =
      w_prev_ == kNoWatermark ? "TRUE" : Micros(end) + " > " + std::to_string(wp);
  switch (Mode()) {
    case OutputMode::kAppend: {
      ARROW_ASSIGN_OR_RAISE(auto rows,
                            Q(engine::stream::WindowedAppendDeltaSql(kResult, end, wp, wn)));
      ARROW_RETURN_NOT_OK(Emit(rows));
      break;
    }
    case OutputMode::kUpdate: {
      ARROW_ASSIGN_OR_RAISE(
          auto candidates,
          Q(std::string("SELECT * FROM ") + kResult + (windowed ? " WHERE " + open_cond : "")));
      ARROW_ASSIGN_OR_RAISE(candidates, DropHidden(candidates));
      ARROW_ASSIGN_OR_RAISE(auto prev, Emitted(candidates));
      Registered r_now(ctx_, kDelta), r_prev(ctx_, kPrev);
      ARROW_RETURN_NOT_OK(r_now.Set(candidates));
      ARROW_RETURN_NOT_OK(r_prev.Set(prev));
      ARROW_ASSIGN_OR_RAISE(auto rows, Q(engine::stream::UpdateDeltaSql(kDelta, kPrev)));
      ARROW_RETURN_NOT_OK(Emit(rows));
      break;
    }
    case OutputMode::kComplete: {
      ARROW_ASSIGN_OR_RAISE(auto now_closed,
                            Q(engine::stream::WindowedAppendDeltaSql(kResult, end, wp, wn)));
      ARROW_ASSIGN_OR_RAISE(now_closed, DropHidden(now_closed));
      ARROW_ASSIGN_OR_RAISE(inc_.closed, Append(inc_.closed, now_closed));
      const std::string still_open =
          w_now_ == kNoWatermark ? "TRUE"
          : w_now_ == kEndOfInput ? "FALSE"
                                  : Micros(end) + " > " + std::to_string(wn);
      ARROW_ASSIGN_OR_RAISE(auto open,
                            Q(std::string("SELECT * FROM ") + kResult + " WHERE " + still_open));
      ARROW_ASSIGN_OR_RAISE(open, DropHidden(open));
      ARROW_ASSIGN_OR_RAISE(auto rows, Append(inc_.closed, open));
      ARROW_RETURN_NOT_OK(Replace(rows));
      break;
    }
  }
  if (!windowed || w_now_ == kNoWatermark) return arrow::Status::OK();
  // Rows whose windows have all closed leave the state.
  if (w_now_ == kEndOfInput) {
    ARROW_ASSIGN_OR_RAISE(inc_.kept, EmptyLike(inc_.kept));
    return arrow::Status::OK();
  }
  const plan::WindowInfo& w = inc_.plan.window->window;
  std::string keep;
  if (inc_.session) {
    std::string cols, session_end;
    for (const auto& c : w.output_columns) {
      cols += (cols.empty() ? "" : ", ") + QuoteIdentifier(c);
    }
    session_end = w.from_table_function ? "window_end"
                                        : "struct_extract(" + QuoteIdentifier(w.output_columns[0]) +
                                              ", 'end')";
    keep = "SELECT * EXCLUDE (" + cols + ") FROM (" + inc_.plan.window->sql +
           ") AS __s WHERE " + Micros(session_end) + " >= " + std::to_string(w_now_);
  } else {
    // The time column as the kept rows name it.
    const std::string t = Micros(QuoteIdentifier(w.TimeColumnName()));
    const int64_t slide = w.slide_us > 0 ? w.slide_us : w.size_us;
    const std::string s = std::to_string(slide), off = std::to_string(w.offset_us);
    keep = "SELECT * FROM " + QuoteIdentifier(input) + " WHERE " + t + " - (((" + t + " - " + off +
           ") % " + s + ") + " + s + ") % " + s + " + " + std::to_string(w.size_us) + " > " +
           std::to_string(w_now_);
  }
  ARROW_ASSIGN_OR_RAISE(inc_.kept, Q(keep));
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Table>> Stepper::Reaching(size_t i,
                                                               std::optional<int64_t> lo,
                                                               std::optional<int64_t> hi) {
  const std::shared_ptr<arrow::Table>& t = inc_.sides[i];
  const engine::stream::RowReach& r = inc_.plan.reach[i];
  const int c = FieldIndexNamed(*t->schema(), r.time_column);
  const std::shared_ptr<arrow::ChunkedArray> col = c < 0 ? nullptr : t->column(c);
  if (!col || col->type()->id() != arrow::Type::TIMESTAMP) {
    return FlowError(flow_, arrow::Status::Invalid(
                                "the time column '", r.time_column, "' of '", r.input,
                                "' is not a timestamp column of its rows"));
  }
  const auto unit = std::static_pointer_cast<arrow::TimestampType>(col->type())->unit();
  return RowsWhere<arrow::TimestampArray>(t, *col, [&](const arrow::TimestampArray& a, int64_t k) {
    if (!a.IsValid(k)) return false;
    const int64_t v = FloorMicros(a.Value(k), unit);
    // Overflow-free forms of lo < v + to and v + from <= hi.
    return (!lo || v > *lo - r.to_us) && (!hi || v <= *hi - r.from_us);
  });
}

arrow::Result<std::optional<std::string>> Stepper::PaneTimeZone(size_t i) const {
  const engine::stream::PaneBlock& b = inc_.pane_blocks[i];
  const DatasetStream* ds = FindStream(streams_, b.input);
  const int t = ds && ds->schema ? FieldIndexNamed(*ds->schema, b.time_column) : -1;
  if (t < 0 || ds->schema->field(t)->type()->id() != arrow::Type::TIMESTAMP) {
    return FlowError(flow_, arrow::Status::Invalid("the window's time column '", b.time_column,
                                                   "' of '", b.input,
                                                   "' is not a timestamp column of its rows"));
  }
  const std::string& zone =
      static_cast<const arrow::TimestampType&>(*ds->schema->field(t)->type()).timezone();
  if (zone.empty()) return std::nullopt;
  return zone;
}

arrow::Result<bool> Stepper::FoldPanes(size_t i, const std::shared_ptr<arrow::Table>& rows) {
  IncrementalFlow::PaneFold& fold = inc_.pane_folds[i];
  if (!ctx_.options->native.direct_partial || fold.off) return false;
  const engine::stream::PaneBlock& b = inc_.pane_blocks[i];
  // A type outside the path turns it off for the block (not an error).
  auto outside = [&](const arrow::Status& st) -> arrow::Result<bool> {
    if (!st.IsNotImplemented()) return FlowError(flow_, st);
    fold.off = true;
    return false;
  };
  if (!fold.schema) {
    if (!rows) return false;  // no rows yet to read the types with
    // The partial query's columns and types, from DuckDB once.
    ARROW_ASSIGN_OR_RAISE(auto empty, EmptyLike(rows));
    const std::string in_name = InputName(b.input);
    Registered none(ctx_, in_name);
    ARROW_RETURN_NOT_OK(none.Set(empty));
    ARROW_ASSIGN_OR_RAISE(
        auto typed, Q("SELECT * FROM (" + engine::stream::PanePartialSql(b, in_name) + ") LIMIT 0"));
    fold.schema = typed->schema();
  }
  if (!fold.merger) {
    auto made = PartialMerger::Make(fold.schema, static_cast<int>(b.key_columns.size()) + 1,
                                    PaneMergeFunctions(b));
    if (!made.ok()) return outside(made.status());
    fold.merger = std::move(*made);
  }
  // Partials of other types (committed by another build) stay with the query;
  // restored ones may differ in nullability only.
  std::shared_ptr<arrow::Table>& state = inc_.panes[i];
  if (state) {
    bool same = state->num_columns() == fold.schema->num_fields();
    for (int c = 0; same && c < state->num_columns(); ++c) {
      same = state->schema()->field(c)->type()->Equals(*fold.schema->field(c)->type());
    }
    if (!same) return outside(arrow::Status::NotImplemented("partials of other types"));
  }
  std::shared_ptr<arrow::Table> raw;
  if (rows) {
    auto made = PaneRows(rows, b, fold.schema);
    if (!made.ok()) return outside(made.status());
    raw = *made;
  } else {
    ARROW_ASSIGN_OR_RAISE(raw, arrow::Table::MakeEmpty(fold.schema));
  }
  auto merged = fold.merger->Merge(state, raw);
  if (!merged.ok()) return outside(merged.status());
  // The merged partials without the merger's __touched column (its last).
  ARROW_ASSIGN_OR_RAISE(auto kept, (*merged)->RemoveColumn((*merged)->num_columns() - 1));
  fold.merger->Keep(*merged, nullptr, kept);
  state = kept;
  fold.folded = true;
  return true;
}

arrow::Result<bool> Stepper::ClosePanesDirect(std::optional<int64_t> lo,
                                              std::optional<int64_t> hi) {
  if (!ctx_.options->native.direct_partial) return false;
  const auto& blocks = inc_.pane_blocks;
  std::vector<std::shared_ptr<arrow::Table>> tables;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const size_t own = blocks[i].shares >= 0 ? static_cast<size_t>(blocks[i].shares) : i;
    if (blocks[i].slide_us != blocks[i].size_us || !inc_.panes[own]) return false;
    if (!inc_.pane_folds[own].folded) {
      // Partials the query appended (a restored state): folded once here.
      ARROW_ASSIGN_OR_RAISE(const bool folded, FoldPanes(own, nullptr));
      if (!folded) return false;
    }
    ARROW_ASSIGN_OR_RAISE(const auto zone, PaneTimeZone(i));
    auto rows = TumblingWindowRows(inc_.panes[own], blocks[i], lo, hi, zone);
    if (!rows.ok()) {
      if (rows.status().IsNotImplemented()) return false;
      return FlowError(flow_, rows.status());
    }
    tables.push_back(*rows);
  }
  // Each derived table's rows under the name the rewritten query reads.
  std::vector<std::unique_ptr<Registered>> held;
  for (size_t i = 0; i < tables.size(); ++i) {
    held.push_back(std::make_unique<Registered>(ctx_, "__thund_pane_" + std::to_string(i)));
    ARROW_RETURN_NOT_OK(held.back()->Set(tables[i]));
  }
  ARROW_ASSIGN_OR_RAISE(auto out, Q(inc_.pane_query_sql));
  ARROW_RETURN_NOT_OK(Emit(out));
  return true;
}

arrow::Result<std::string> Stepper::MergedPanesSql(
    size_t i, std::optional<int64_t> lo, std::optional<int64_t> hi,
    std::vector<std::unique_ptr<Registered>>* held) {
  const engine::stream::PaneBlock& b = inc_.pane_blocks[i];
  const DatasetStream* ds = FindStream(streams_, b.input);
  if (!ds || !ds->schema) return std::string();
  if (!inc_.panes[i]) {
    // No partials yet: the block's (empty) rows still need their columns.
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::Table::MakeEmpty(ds->schema));
    const std::string in_name = InputName(b.input);
    Registered none(ctx_, in_name);
    ARROW_RETURN_NOT_OK(none.Set(empty));
    ARROW_ASSIGN_OR_RAISE(inc_.panes[i], Q(engine::stream::PanePartialSql(b, in_name)));
  }
  const std::string state_name = Slot(kState, i);
  held->push_back(std::make_unique<Registered>(ctx_, state_name));
  ARROW_RETURN_NOT_OK(held->back()->Set(inc_.panes[i]));
  return engine::stream::PaneMergeSql(b, state_name, lo, hi);
}

arrow::Status Stepper::WindowPanes() {
  const auto& blocks = inc_.pane_blocks;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].shares >= 0) continue;  // reads the partials of another
    std::shared_ptr<arrow::Table> rows;
    for (const auto& [in, t] : fresh_) {
      if (SameName(in, blocks[i].input)) rows = t;
    }
    if (rows && rows->num_rows() > 0) {
      ARROW_ASSIGN_OR_RAISE(const bool folded, FoldPanes(i, rows));
      if (folded) continue;
      const std::string in_name = InputName(blocks[i].input);
      Registered r(ctx_, in_name);
      ARROW_RETURN_NOT_OK(r.Set(rows));
      ARROW_ASSIGN_OR_RAISE(auto partial, Q(engine::stream::PanePartialSql(blocks[i], in_name)));
      ARROW_ASSIGN_OR_RAISE(inc_.panes[i], Append(inc_.panes[i], partial));
      inc_.pane_folds[i].folded = false;
    }
  }
  if (w_now_ == kNoWatermark || w_now_ == w_prev_) return arrow::Status::OK();
  const auto [lo, hi] = ClosingEnds();
  bool closed = false;
  if (!lo || !hi || *lo < *hi) {
    ARROW_ASSIGN_OR_RAISE(closed, ClosePanesDirect(lo, hi));
  }
  if (!closed && (!lo || !hi || *lo < *hi)) {
    // One query for the closing windows: per block with partials of its own,
    // their merge (a CTE, materialized once when another block shares it:
    // q5's two counts); per block, its rows under the derived table's name
    // (__thund_pane_<i>, as the rewritten query reads it); then the query.
    std::vector<std::unique_ptr<Registered>> held;
    std::vector<bool> shared(blocks.size(), false);
    for (const auto& b : blocks) {
      if (b.shares >= 0) shared[b.shares] = true;
    }
    std::string with;
    bool known = true;  // every block's stream has rows (so a schema)
    for (size_t i = 0; i < blocks.size() && known; ++i) {
      const size_t own = blocks[i].shares >= 0 ? static_cast<size_t>(blocks[i].shares) : i;
      const std::string merged = Slot(kMerged, own);
      if (own == i) {
        ARROW_ASSIGN_OR_RAISE(const std::string merge_sql, MergedPanesSql(i, lo, hi, &held));
        if (merge_sql.empty()) {
          known = false;  // no row yet: its schema is not known
          break;
        }
        with += (with.empty() ? "WITH " : ", ") + QuoteIdentifier(merged) +
                (shared[i] ? " AS MATERIALIZED (" : " AS (") + merge_sql + ")";
      }
      // The window bounds take the type the window assignment gives them:
      // TIMESTAMPTZ for a time column with a time zone, else TIMESTAMP.
      ARROW_ASSIGN_OR_RAISE(const auto zone, PaneTimeZone(i));
      with += ", " + QuoteIdentifier("__thund_pane_" + std::to_string(i)) + " AS (" +
              engine::stream::PaneBlockSql(blocks[i], merged, zone.has_value()) + ")";
    }
    if (known) {
      ARROW_ASSIGN_OR_RAISE(auto out, Q(with + " SELECT * FROM (" + inc_.pane_query_sql + ")"));
      ARROW_RETURN_NOT_OK(Emit(out));
    }
  }
  // Partials no window still open needs leave; the C++ fold keeps the
  // others hashed.
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::shared_ptr<arrow::Table>& panes = inc_.panes[i];
    if (!panes || blocks[i].shares >= 0) continue;
    IncrementalFlow::PaneFold& fold = inc_.pane_folds[i];
    std::shared_ptr<arrow::Table> kept;
    std::shared_ptr<arrow::ChunkedArray> left;
    if (!hi) {
      ARROW_ASSIGN_OR_RAISE(kept, EmptyLike(panes));
    } else {
      ARROW_ASSIGN_OR_RAISE(left, PanesLeaving(panes, blocks[i].size_us, *hi));
      ARROW_ASSIGN_OR_RAISE(auto stay, arrow::compute::Invert(left));
      ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(panes, stay));
      kept = filtered.table();
    }
    if (fold.merger && fold.folded) {
      // Without `left` (every row leaves) the merger starts afresh: no rows.
      fold.merger->Keep(left ? panes : nullptr, left, kept);
    }
    panes = kept;
  }
  return arrow::Status::OK();
}

arrow::Status Stepper::Windowed() {
  if (!inc_.pane_blocks.empty()) return WindowPanes();
  const auto& inputs = inc_.plan.stream_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& rows = fresh_[inputs[i]];
    if (rows && rows->num_rows() > 0) {
      ARROW_ASSIGN_OR_RAISE(inc_.sides[i], Append(inc_.sides[i], rows));
    }
    if (!inc_.sides[i]) {
      ARROW_ASSIGN_OR_RAISE(inc_.sides[i], EmptyLike(rows));
    }
  }
  if (w_now_ == kNoWatermark || w_now_ == w_prev_) return arrow::Status::OK();
  const auto [lo, hi] = ClosingEnds();
  if (!lo || !hi || *lo < *hi) {
    InputBinding binding(ctx_, streams_);
    for (size_t i = 0; i < inputs.size(); ++i) {
      ARROW_ASSIGN_OR_RAISE(auto rows, Reaching(i, lo, hi));
      ARROW_RETURN_NOT_OK(binding.Bind(inputs[i], rows));
    }
    ARROW_RETURN_NOT_OK(ctx_.session->Execute(
        "SET VARIABLE __thund_wlo = " +
        std::to_string(lo.value_or(std::numeric_limits<int64_t>::min() + 1)) + "::BIGINT"));
    ARROW_RETURN_NOT_OK(ctx_.session->Execute(
        "SET VARIABLE __thund_whi = " +
        std::to_string(hi.value_or(std::numeric_limits<int64_t>::max())) + "::BIGINT"));
    ARROW_ASSIGN_OR_RAISE(auto out, Q(inc_.query_sql));
    ARROW_RETURN_NOT_OK(Emit(out));
  }
  // Rows that reach no window still open (end > W_now - delay) leave.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!hi) {
      ARROW_ASSIGN_OR_RAISE(inc_.sides[i], EmptyLike(inc_.sides[i]));
    } else {
      ARROW_ASSIGN_OR_RAISE(inc_.sides[i], Reaching(i, hi, std::nullopt));
    }
  }
  return arrow::Status::OK();
}

arrow::Status Stepper::StreamJoin() {
  ARROW_ASSIGN_OR_RAISE(auto out, JoinNewRows(inc_.query_sql));
  if (!out) return arrow::Status::OK();
  return EmitGrowing(out);
}

arrow::Result<std::shared_ptr<arrow::Table>> Stepper::JoinNewRows(const std::string& sql) {
  const auto& inputs = inc_.plan.stream_inputs;
  std::shared_ptr<arrow::Table> fresh[2], kept[2];
  for (size_t i = 0; i < 2; ++i) {
    ARROW_ASSIGN_OR_RAISE(fresh[i], JoinCandidates(i, fresh_[inputs[i]]));
    kept[i] = inc_.sides[i];
    if (!kept[i]) {
      ARROW_ASSIGN_OR_RAISE(kept[i], EmptyLike(fresh[i]));
    }
  }
  std::shared_ptr<arrow::Table> out, all[2];
  // new(A) x (kept(B) + new(B)), then kept(A) x new(B); of the kept rows only
  // those the new rows can meet.
  if (fresh[0]->num_rows() > 0) {
    ARROW_ASSIGN_OR_RAISE(auto kept1, KeptMeeting(1, kept[1], fresh[0]));
    ARROW_ASSIGN_OR_RAISE(auto side1, Append(kept1, fresh[1]));
    InputBinding binding(ctx_, streams_);
    ARROW_RETURN_NOT_OK(binding.Bind(inputs[0], fresh[0]));
    ARROW_RETURN_NOT_OK(binding.Bind(inputs[1], side1));
    ARROW_ASSIGN_OR_RAISE(out, Q(sql));
  }
  if (fresh[1]->num_rows() > 0 && kept[0]->num_rows() > 0) {
    ARROW_ASSIGN_OR_RAISE(auto kept0, KeptMeeting(0, kept[0], fresh[1]));
    if (kept0->num_rows() > 0) {
      InputBinding binding(ctx_, streams_);
      ARROW_RETURN_NOT_OK(binding.Bind(inputs[0], kept0));
      ARROW_RETURN_NOT_OK(binding.Bind(inputs[1], fresh[1]));
      ARROW_ASSIGN_OR_RAISE(auto more, Q(sql));
      ARROW_ASSIGN_OR_RAISE(out, Append(out, more));
    }
  }
  for (size_t i = 0; i < 2; ++i) {
    ARROW_ASSIGN_OR_RAISE(all[i], Append(kept[i], fresh[i]));
    // The index takes the new rows (when it describes the kept ones).
    JoinKeyIndex* index = i < inc_.join_index.size() ? inc_.join_index[i].get() : nullptr;
    if (index && index->indexed() == kept[i] && fresh[i]->num_rows() > 0) {
      const arrow::Status st = index->Extend(all[i], kept[i]->num_rows());
      if (!st.ok() && !st.IsNotImplemented()) return FlowError(flow_, st);
    }
  }
  for (size_t i = 0; i < 2; ++i) {
    inc_.sides[i] = all[i];
    const engine::stream::RowReach& r = inc_.plan.reach[i];
    if (w_now_ == kEndOfInput) {
      ARROW_ASSIGN_OR_RAISE(inc_.sides[i], EmptyLike(inc_.sides[i]));
    } else if (!r.unbounded && w_now_ != kNoWatermark) {
      // Kept while t + to >= W: lo = W - 1 in Reaching's lo < t + to.
      ARROW_ASSIGN_OR_RAISE(inc_.sides[i], Reaching(i, w_now_ - 1, std::nullopt));
    }
  }
  return out;
}

arrow::Result<std::shared_ptr<arrow::Table>> Stepper::Outer(
    const std::shared_ptr<arrow::Table>& inner) {
  Registered r(ctx_, kInner);
  ARROW_RETURN_NOT_OK(r.Set(inner));
  return Q(inc_.outer_sql);
}

arrow::Result<std::shared_ptr<arrow::Table>> Stepper::JoinCandidates(
    size_t i, const std::shared_ptr<arrow::Table>& rows) {
  const engine::stream::RowReach& r = inc_.plan.reach[i];
  if (!ctx_.options->native.join_prefilter || r.keep_sql.empty() || !rows ||
      rows->num_rows() == 0) {
    return rows;
  }
  const std::string name = InputName(inc_.plan.stream_inputs[i]);
  Registered in(ctx_, name);
  ARROW_RETURN_NOT_OK(in.Set(rows));
  ARROW_ASSIGN_OR_RAISE(auto passed, Q("SELECT * FROM " + name + " AS " +
                                       QuoteIdentifier(r.alias) + " WHERE " + r.keep_sql));
  if (passed->schema()->Equals(*rows->schema(), /*check_metadata=*/false)) return passed;
  // DuckDB's types back to the rows' own (the kept rows keep one schema).
  std::vector<std::shared_ptr<arrow::ChunkedArray>> cols;
  for (int c = 0; c < rows->num_columns() && c < passed->num_columns(); ++c) {
    const auto& type = rows->schema()->field(c)->type();
    if (passed->column(c)->type()->Equals(*type)) {
      cols.push_back(passed->column(c));
      continue;
    }
    auto cast = arrow::compute::Cast(passed->column(c), type);
    if (!cast.ok()) return passed;  // kept as DuckDB gives them
    cols.push_back(cast->chunked_array());
  }
  if (static_cast<int>(cols.size()) != rows->num_columns()) return passed;
  return arrow::Table::Make(rows->schema(), cols, passed->num_rows());
}

arrow::Result<std::shared_ptr<arrow::Table>> Stepper::KeptMeeting(
    size_t i, const std::shared_ptr<arrow::Table>& kept,
    const std::shared_ptr<arrow::Table>& other) {
  JoinKeyIndex* index = i < inc_.join_index.size() ? inc_.join_index[i].get() : nullptr;
  if (!index || kept->num_rows() == 0) return kept;
  // A type or size outside the index binds every kept row (the plain twin).
  auto outside = [&](const arrow::Status& st) -> arrow::Result<std::shared_ptr<arrow::Table>> {
    if (!st.IsNotImplemented()) return FlowError(flow_, st);
    return kept;
  };
  if (index->indexed() != kept) {
    const arrow::Status st = index->Rebuild(kept);
    if (!st.ok()) return outside(st);
  }
  const std::string& other_key = inc_.plan.reach[1 - i].join_key;
  const int c = FieldIndexNamed(*other->schema(), other_key);
  if (c < 0) return outside(arrow::Status::NotImplemented("no key column ", other_key));
  auto rows = index->Matching(*other->column(c));
  if (!rows.ok()) return outside(rows.status());
  return *rows;
}

arrow::Status Stepper::Dedup() {
  const std::string& input = inc_.plan.stream_inputs.front();
  std::shared_ptr<arrow::Table>& seen = inc_.sides[0];
  std::shared_ptr<arrow::Table> fresh;
  if (fresh_rows_ > 0) {
    std::shared_ptr<arrow::Table> distinct;
    {
      InputBinding binding(ctx_, streams_);
      ARROW_RETURN_NOT_OK(binding.Bind(input, fresh_[input]));
      ARROW_ASSIGN_OR_RAISE(distinct, Q(inc_.query_sql));
    }
    fresh = distinct;
    if (seen && seen->num_rows() > 0) {
      // EXCEPT compares rows as DISTINCT does (NULLs equal).
      Registered r_seen(ctx_, kState), r_new(ctx_, kResult);
      ARROW_RETURN_NOT_OK(r_seen.Set(seen));
      ARROW_RETURN_NOT_OK(r_new.Set(distinct));
      ARROW_ASSIGN_OR_RAISE(fresh, Q(std::string("SELECT * FROM ") + kResult +
                                     " EXCEPT SELECT * FROM " + kState));
    }
    ARROW_ASSIGN_OR_RAISE(seen, Append(seen, fresh));
  }
  // A row whose watermark column is below W cannot come again (not late).
  const std::string& t = inc_.dedup_time_column;
  if (seen && !t.empty() && w_now_ != kNoWatermark && w_now_ != w_prev_) {
    if (w_now_ == kEndOfInput) {
      ARROW_ASSIGN_OR_RAISE(seen, EmptyLike(seen));
    } else {
      Registered r_seen(ctx_, kState);
      ARROW_RETURN_NOT_OK(r_seen.Set(seen));
      ARROW_ASSIGN_OR_RAISE(seen, Q(std::string("SELECT * FROM ") + kState + " WHERE " +
                                    QuoteIdentifier(t) + " IS NULL OR " +
                                    Micros(QuoteIdentifier(t)) + " >= " +
                                    std::to_string(w_now_)));
    }
  }
  if (!fresh) return arrow::Status::OK();
  return Emit(fresh);
}

arrow::Status Stepper::FirstRow() {
  const engine::stream::DedupShape& d = inc_.plan.dedup;
  const std::string& input = inc_.plan.stream_inputs.front();
  std::shared_ptr<arrow::Table>& cands = inc_.sides[0];
  std::shared_ptr<arrow::Table>& decided = inc_.sides[1];
  const bool closes = w_now_ != kNoWatermark && w_now_ != w_prev_;
  if (fresh_rows_ == 0 && !closes) return arrow::Status::OK();
  std::string keys, match;
  for (size_t i = 0; i < d.partition_columns.size(); ++i) {
    const std::string p = "__p" + std::to_string(i);
    keys += std::string(i ? ", " : "") + QuoteIdentifier(d.partition_columns[i]) + " AS " + p;
    match += std::string(i ? " AND " : "") + "r." + QuoteIdentifier(d.partition_columns[i]) +
             " IS NOT DISTINCT FROM d." + p;
  }
  std::shared_ptr<arrow::Table> rows = fresh_[input];
  if (decided && decided->num_rows() > 0 && rows->num_rows() > 0) {
    // Rows of keys already decided change nothing.
    Registered r_rows(ctx_, kIn), r_dec(ctx_, kState);
    ARROW_RETURN_NOT_OK(r_rows.Set(rows));
    ARROW_RETURN_NOT_OK(r_dec.Set(decided));
    ARROW_ASSIGN_OR_RAISE(rows, Q(std::string("SELECT r.* FROM ") + kIn + " AS r ANTI JOIN " +
                                  kState + " AS d ON " + match));
  }
  if (rows->num_rows() > 0) {
    // The first row per key of (candidates + new rows), as the query ranks.
    ARROW_ASSIGN_OR_RAISE(auto all, Append(cands, rows));
    std::string part;
    for (const auto& c : d.partition_columns) {
      part += std::string(part.empty() ? "" : ", ") + QuoteIdentifier(c);
    }
    InputBinding binding(ctx_, streams_);
    ARROW_RETURN_NOT_OK(binding.Bind(input, all));
    ARROW_ASSIGN_OR_RAISE(
        cands, Q("SELECT * FROM (" + d.ranked_input->sql + ") AS __r QUALIFY row_number() OVER "
                 "(PARTITION BY " + part + " ORDER BY " + QuoteIdentifier(d.order_column) +
                 (d.order_descending ? " DESC" : " ASC") + ") = 1"));
  }
  if (!cands || cands->num_rows() == 0) return arrow::Status::OK();
  // A candidate is final once no row that is not late can rank before it:
  // ordered by the watermark column ascending, when W passed it; else at
  // the end of the input.
  std::string final_cond = "FALSE";
  if (w_now_ == kEndOfInput) {
    final_cond = "TRUE";
  } else if (!inc_.dedup_time_column.empty() && w_now_ != kNoWatermark) {
    final_cond = Micros(QuoteIdentifier(d.order_column)) + " < " + std::to_string(w_now_);
  }
  Registered r_c(ctx_, kMerged);
  ARROW_RETURN_NOT_OK(r_c.Set(cands));
  ARROW_ASSIGN_OR_RAISE(auto flagged, Q(std::string("SELECT *, coalesce(") + final_cond +
                                        ", false) AS __final FROM " + kMerged));
  ARROW_ASSIGN_OR_RAISE(auto parts, SplitBy(flagged, "__final"));
  cands = parts.second;
  if (parts.first->num_rows() == 0) return arrow::Status::OK();
  std::shared_ptr<arrow::Table> out;
  {
    InputBinding binding(ctx_, streams_);
    ARROW_RETURN_NOT_OK(binding.Bind(input, parts.first));
    ARROW_ASSIGN_OR_RAISE(out, Q(inc_.query_sql));
  }
  Registered r_final(ctx_, kResult);
  ARROW_RETURN_NOT_OK(r_final.Set(parts.first));
  ARROW_ASSIGN_OR_RAISE(auto keys_now, Q("SELECT " + keys + " FROM " + kResult));
  ARROW_ASSIGN_OR_RAISE(decided, Append(decided, keys_now));
  return Emit(out);
}

arrow::Result<FlowStep> Stepper::Run() {
  w_prev_ = inc_.watermark_us.value_or(kNoWatermark);
  ARROW_RETURN_NOT_OK(TakeInputs());
  bool has_clock = false;
  for (const auto& [n, c] : inc_.clocks) has_clock |= !c.column.empty();
  if (trigger_.input_finished) {
    w_now_ = kEndOfInput;
  } else if (auto w = Combine(inc_.clocks, now_ms_)) {
    w_now_ = std::max(w_prev_, *w);
  } else {
    w_now_ = w_prev_;
  }
  if (w_now_ != kNoWatermark) inc_.watermark_us = w_now_;
  if (has_clock || trigger_.input_finished) {
    if (w_now_ != kNoWatermark) step_.watermark_us = w_now_;
  }
  switch (inc_.plan.op) {
    case IncrementalOperator::kStateless:
      ARROW_RETURN_NOT_OK(Stateless());
      break;
    case IncrementalOperator::kPartialAggregate:
      ARROW_RETURN_NOT_OK(PartialAggregate());
      break;
    case IncrementalOperator::kRowsAggregate:
      ARROW_RETURN_NOT_OK(RowsAggregate());
      break;
    case IncrementalOperator::kWindowed:
      ARROW_RETURN_NOT_OK(Windowed());
      break;
    case IncrementalOperator::kStreamJoin:
      ARROW_RETURN_NOT_OK(StreamJoin());
      break;
    case IncrementalOperator::kDedup:
      ARROW_RETURN_NOT_OK(inc_.plan.dedup.first_row ? FirstRow() : Dedup());
      break;
    case IncrementalOperator::kCdc: {
      // The change rows are the flow's query over the new input rows.
      std::shared_ptr<arrow::Table> changes;
      if (fresh_rows_ > 0) {
        InputBinding binding(ctx_, streams_);
        for (const auto& [name, rows] : fresh_) ARROW_RETURN_NOT_OK(binding.Bind(name, rows));
        ARROW_ASSIGN_OR_RAISE(changes, Q(inc_.query_sql));
      }
      ARROW_RETURN_NOT_OK(ApplyIncrementalCdc(ctx_, ds_, f_, changes, &step_));
      break;
    }
  }
  return step_;
}

int64_t TableBytes(const std::shared_ptr<arrow::Table>& t) {
  if (!t) return 0;
  int64_t n = 0;
  for (const auto& col : t->columns()) {
    for (const auto& chunk : col->chunks()) {
      for (const auto& buf : chunk->data()->buffers) n += buf ? buf->size() : 0;
    }
  }
  return n;
}

// Window panes for a kWindowed flow when ChooseWindowPanes takes them; else
// the flow keeps raw rows (the plain twin, not an error).
void PrepareWindowPanes(const Flow& flow, IncrementalFlow* inc) {
  WindowPanesChoice choice = ChooseWindowPanes(flow.sql, *inc->root, inc->plan.stream_inputs);
  if (!choice.ok) return;
  inc->pane_blocks = std::move(choice.blocks);
  inc->pane_query_sql = std::move(choice.query_sql);
  inc->panes.assign(inc->pane_blocks.size(), nullptr);
  inc->pane_folds.resize(inc->pane_blocks.size());
}

}  // namespace

WindowPanesChoice ChooseWindowPanes(const std::string& flow_sql, const plan::PlanNode& root,
                                    const std::vector<std::string>& stream_inputs) {
  auto is_stream = [&](const std::string& name) {
    for (const auto& in : stream_inputs) {
      if (SameName(in, name)) return true;
    }
    return false;
  };
  WindowPanesChoice choice;
  engine::stream::WindowPanesShape shape = engine::stream::AnalyzeWindowPanes(root, is_stream);
  if (!shape.ok) {
    choice.why = shape.why;
    return choice;
  }
  std::vector<std::pair<std::string, std::string>> tables;
  for (const auto& b : shape.blocks) {
    tables.emplace_back(b.block->sql, "__thund_pane_" + std::to_string(tables.size()));
  }
  auto query = sql::WithDerivedTablesReplaced(flow_sql, tables);
  if (!query.ok()) {
    choice.why = "the query could not be rewritten to read the panes: " + query.status().message();
    return choice;
  }
  choice.ok = true;
  choice.blocks = std::move(shape.blocks);
  choice.query_sql = std::move(*query);
  return choice;
}

std::string DescribeWindowPanes(const WindowPanesChoice& choice) {
  if (!choice.ok) return "no window panes (the raw rows are kept): " + choice.why;
  std::vector<std::string> parts;
  int shared = 0;
  for (const auto& b : choice.blocks) {
    if (b.shares >= 0) {
      ++shared;
      continue;
    }
    parts.push_back("per-pane partials of " + b.input + " (" +
                    std::to_string(b.aggregates.size()) + " aggregate(s), panes of " +
                    std::to_string(b.pane_us / 1000) + " ms, windows of " +
                    std::to_string(b.size_us / 1000) + " ms every " +
                    std::to_string(b.slide_us / 1000) + " ms)");
  }
  if (shared > 0) parts.push_back(std::to_string(shared) + " derived table(s) share them");
  std::string out = "window panes, kept instead of the raw rows: ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? "; " : "") + parts[i];
  return out + " (thund run --no-window-panes keeps raw rows)";
}

int64_t IncrementalFlow::StateRows() const {
  int64_t n = (partials ? partials->num_rows() : 0) + (kept ? kept->num_rows() : 0);
  n += cdc_log ? cdc_log->num_rows() : 0;
  for (const auto& s : sides) n += s ? s->num_rows() : 0;
  for (const auto& s : panes) n += s ? s->num_rows() : 0;
  return n;
}

int64_t IncrementalFlow::StateBytes() const {
  int64_t n = TableBytes(partials) + TableBytes(kept) + TableBytes(cdc_log);
  for (const auto& s : sides) n += TableBytes(s);
  for (const auto& s : panes) n += TableBytes(s);
  return n;
}

arrow::Result<std::shared_ptr<IncrementalFlow>> MakeIncrementalFlow(
    RunContext& ctx, const FlowStream& f, const std::map<std::string, DatasetStream*>& streams,
    int64_t now_ms, std::string* fallback) {
  const Flow& flow = *f.flow;
  fallback->clear();
  switch (f.shape) {
    case FlowShape::kSource:
    case FlowShape::kOnce:
      return nullptr;  // already incremental / runs once
    default:
      break;
  }
  ARROW_ASSIGN_OR_RAISE(auto root, sql::PlanQuery(flow.sql));
  auto inc = std::make_shared<IncrementalFlow>();
  inc->root = root;
  ARROW_ASSIGN_OR_RAISE(auto planned,
                        engine::stream::PlanFlowIncremental(*ctx.pipeline, flow, *root, kState,
                                                            ctx.options->native.hop_panes));
  inc->plan = std::move(planned.plan);
  inc->agg = std::move(planned.agg);
  if (!inc->plan.runnable) {
    *fallback = inc->plan.fallback;
    return nullptr;
  }
  for (const auto& in : inc->plan.stream_inputs) {
    const DatasetStream* ds = FindStream(streams, in);
    if (!ds) {
      *fallback = "Scan " + in + ": not a stream of this run";
      return nullptr;
    }
    for (const FlowStream& g : ds->flows) {
      if (!AppendOnly(g.shape)) {
        *fallback = "Scan " + in + ": flow '" + g.flow->name + "' writes it in " +
                    ShapeName(g.shape) + " mode, so it is not an append-only stream";
        return nullptr;
      }
    }
    InputClock clock;
    if (auto wm = InputWatermark(*ctx.pipeline, flow, ds->dataset->name, ds->schema)) {
      clock.column = wm->event_time_column;
      clock.lateness_us = wm->allowed_lateness_ms * 1000;
      clock.idle_ms = wm->idle_timeout_ms;
    }
    clock.last_arrival_ms = now_ms;
    inc->clocks[in] = clock;
  }
  ARROW_ASSIGN_OR_RAISE(inc->query_sql, TranslateFlowSql(flow));
  const OutputMode mode = flow.streaming ? flow.streaming->output_mode : OutputMode::kAppend;
  if (inc->plan.op == IncrementalOperator::kWindowed) {
    if (mode != OutputMode::kAppend) {
      *fallback = std::string("the window-local query runs in append mode only (each window is "
                              "emitted once, when it closes); this flow is in ") +
                  Name(mode) + " mode";
      return nullptr;
    }
    auto bounded = SparkToDuckDbWindowBounded(flow.sql);
    if (!bounded.ok()) return FlowError(flow, bounded.status());
    inc->query_sql = *bounded;
    std::string& q = inc->query_sql;
    while (!q.empty() && (q.back() == ';' || std::isspace(static_cast<unsigned char>(q.back())))) {
      q.pop_back();
    }
  }
  if (inc->plan.op == IncrementalOperator::kDedup) {
    if (mode != OutputMode::kAppend) {
      *fallback = std::string("deduplication runs in append mode only; this flow is in ") +
                  Name(mode) + " mode";
      return nullptr;
    }
    const engine::stream::DedupShape& d = inc->plan.dedup;
    const InputClock& clock = inc->clocks[d.input];
    if (d.first_row) {
      if (!clock.column.empty() && SameName(clock.column, d.order_column) &&
          !d.order_descending) {
        inc->dedup_time_column = d.order_column;
      }
    } else {
      for (const auto& [out, in] : d.passed_columns) {
        if (!clock.column.empty() && SameName(in, clock.column)) inc->dedup_time_column = out;
      }
    }
    inc->sides.resize(2);
  }
  if (inc->plan.inner_block) {
    if (mode == OutputMode::kUpdate) {
      *fallback = "an outer query over an aggregation runs in complete or append mode (its "
                  "result is replaced whenever the aggregation changes); this flow is in "
                  "update mode";
      return nullptr;
    }
    const plan::PlanNode& block = *inc->plan.inner_block;
    auto outer = block.cte.empty()
                     ? sql::WithDerivedTablesReplaced(flow.sql, {{block.sql, kInner}})
                     : sql::WithCteReplaced(flow.sql, block.cte, kInner);
    if (!outer.ok()) {
      *fallback = "the aggregation under the outer query is not a derived table thund can "
                  "read from its state (" + outer.status().message() + ")";
      return nullptr;
    }
    inc->outer_sql = *outer;
  }
  const bool joins = inc->plan.op == IncrementalOperator::kStreamJoin || inc->plan.join_input;
  if (inc->plan.op == IncrementalOperator::kWindowed || joins) {
    inc->sides.resize(inc->plan.stream_inputs.size());
    // A join's time bound relies on the other input's rows still to come
    // having times >= W in its column: true of its watermark column only
    // (late rows are dropped by that). Else the rows are kept.
    for (size_t i = 0; joins && i < inc->plan.reach.size() && inc->plan.reach.size() == 2; ++i) {
      auto& r = inc->plan.reach[i];
      if (r.unbounded || r.partner_time_column.empty()) continue;
      const InputClock& other = inc->clocks[inc->plan.reach[1 - i].input];
      if (other.column.empty() || !SameName(other.column, r.partner_time_column)) {
        r.unbounded = true;
        r.time_column.clear();
        r.to_us = 0;
      }
    }
    // A join without a time bound keeps rows for the state TTL, measured on
    // each input's watermark column.
    std::optional<int64_t> ttl;
    if (flow.streaming) ttl = flow.streaming->state_ttl_ms;
    for (auto& r : inc->plan.reach) {
      if (!r.unbounded || !ttl) continue;
      const InputClock& clock = inc->clocks[r.input];
      if (clock.column.empty()) {
        return FlowError(flow, arrow::Status::Invalid(
                                   "state_ttl measures event time, but input '", r.input,
                                   "' has no watermark: declare one (WATERMARK col DELAY OF ...)"));
      }
      r.unbounded = false;
      r.time_column = clock.column;
      r.to_us = *ttl * 1000;
    }
    // Each time column must be a timestamp column of its stream; it takes the
    // stream's spelling (DuckDB matches names case-insensitively).
    for (auto& r : inc->plan.reach) {
      const DatasetStream* ds = FindStream(streams, r.input);
      if (r.unbounded || !ds->schema) continue;
      const int c = FieldIndexNamed(*ds->schema, r.time_column);
      const std::shared_ptr<arrow::Field> field = c < 0 ? nullptr : ds->schema->field(c);
      if (!field || field->type()->id() != arrow::Type::TIMESTAMP) {
        *fallback = "Scan " + r.input + ": its time column '" + r.time_column +
                    "' is not a timestamp column of the stream";
        return nullptr;
      }
      r.time_column = field->name();
    }
  }
  if (joins && ctx.options->native.join_index) {
    // Sides kept forever, joined on a key of both: hashed by it.
    inc->join_index.resize(inc->plan.reach.size());
    const auto& reach = inc->plan.reach;
    for (size_t i = 0; i < reach.size() && reach.size() == 2; ++i) {
      if (reach[i].unbounded && !reach[i].join_key.empty() && !reach[1 - i].join_key.empty()) {
        inc->join_index[i] = std::make_unique<JoinKeyIndex>(reach[i].join_key);
      }
    }
  }
  if (inc->plan.op == IncrementalOperator::kWindowed && ctx.options->native.window_panes) {
    PrepareWindowPanes(flow, inc.get());
  }
  inc->definition = std::string(Name(flow.streaming ? flow.streaming->output_mode
                                                    : OutputMode::kAppend)) +
                    " " + flow.sql;
  if (inc->plan.op == IncrementalOperator::kCdc) PrepareIncrementalCdc(flow, inc.get());
  if (inc->plan.op == IncrementalOperator::kPartialAggregate) {
    // The decomposed query must bind over the inputs (a check before any row
    // is taken, when their schemas are known).
    bool known = true;
    for (const auto& in : inc->plan.stream_inputs) {
      known &= FindStream(streams, in)->schema != nullptr;
    }
    if (known) {
      auto bound = ctx.session->Query("SELECT * FROM (" + inc->agg.partial_sql + ") LIMIT 0");
      if (!bound.ok()) {
        *fallback = "Aggregate: its partial aggregation does not bind (" +
                    bound.status().message() + ")";
        return nullptr;
      }
    }
  }
  if (inc->plan.op == IncrementalOperator::kPartialAggregate && inc->plan.window &&
      inc->agg.window_end_sql.empty()) {
    *fallback = "Aggregate: its window is not among the grouping keys in a form thund reads";
    return nullptr;
  }
  inc->session =
      inc->plan.window && inc->plan.window->window.shape == plan::WindowShape::kSession;
  if (inc->session && inc->plan.op == IncrementalOperator::kPartialAggregate &&
      inc->agg.window_struct_key < 0 &&
      (inc->agg.window_start_key < 0 || inc->agg.window_end_key < 0)) {
    *fallback = "Aggregate: a session window must be grouped by whole (session_window, or "
                "window_start and window_end)";
    return nullptr;
  }
  if (inc->plan.op == IncrementalOperator::kRowsAggregate && inc->plan.window) {
    if (auto end = engine::stream::PlanWindowEnd(*root)) {
      inc->end_expr = *end;
    } else {
      auto with_end = sql::WithWindowEndColumn(flow.sql, kHiddenEnd);
      if (!with_end.ok()) {
        *fallback = "Aggregate: the window end cannot be carried (" +
                    with_end.status().message() + ")";
        return nullptr;
      }
      inc->query_sql = *with_end;
      inc->end_expr = QuoteIdentifier(kHiddenEnd);
      inc->hidden_end = true;
    }
  }
  return inc;
}

std::string IncrementalStateJson(const IncrementalFlow& inc) {
  Json j = Json::object();
  j["operator"] = engine::stream::Name(inc.plan.op);
  j["definition"] = inc.definition;
  j["consumed"] = inc.consumed;
  // Not read back: what the operator held at this commit (thund explain).
  j["state_rows"] = inc.StateRows();
  j["state_bytes"] = inc.StateBytes();
  if (inc.watermark_us) j["watermark_us"] = *inc.watermark_us;
  Json clocks = Json::object();
  for (const auto& [name, c] : inc.clocks) {
    if (c.max_event_us) clocks[name] = *c.max_event_us;
  }
  j["max_event_us"] = clocks;
  if (inc.plan.op == IncrementalOperator::kCdc) j["cdc_ignored"] = inc.cdc_ignored;
  if (!inc.pane_blocks.empty()) j["window_panes"] = true;
  return JsonText(j);
}

arrow::Status RestoreIncrementalState(const std::string& json, IncrementalFlow* inc) {
  try {
    Json j = Json::parse(json);
    if (j.value("definition", std::string()) != inc->definition) {
      return arrow::Status::Invalid(
          "the flow's query or output mode changed since this state was committed, so the "
          "state does not fit it");
    }
    if (j.value("operator", std::string()) != engine::stream::Name(inc->plan.op)) {
      return arrow::Status::Invalid("the flow's incremental operator changed (was ",
                                    j.value("operator", std::string("?")), ", now ",
                                    engine::stream::Name(inc->plan.op), ")");
    }
    const bool panes = !inc->pane_blocks.empty();
    if (j.value("window_panes", false) != panes) {
      return arrow::Status::Invalid(
          "the flow's state was committed with window panes ", panes ? "off" : "on",
          " and this run has them ", panes ? "on" : "off",
          " (thund run --no-window-panes): run with the same setting");
    }
    inc->consumed = j.at("consumed").get<std::map<std::string, int64_t>>();
    if (j.contains("watermark_us")) inc->watermark_us = j.at("watermark_us").get<int64_t>();
    for (const auto& [name, v] : j.at("max_event_us").items()) {
      auto it = inc->clocks.find(name);
      if (it != inc->clocks.end()) it->second.max_event_us = v.get<int64_t>();
    }
    inc->cdc_ignored = j.value("cdc_ignored", int64_t{0});
  } catch (const std::exception& e) {
    return arrow::Status::Invalid("incremental state is damaged (", e.what(), ")");
  }
  return arrow::Status::OK();
}

arrow::Result<FlowStep> StepIncremental(RunContext& ctx, DatasetStream& ds, FlowStream& f,
                                        const TriggerContext& trigger,
                                        const std::map<std::string, DatasetStream*>& streams,
                                        int64_t now_ms) {
  Stepper s(ctx, ds, f, trigger, streams, now_ms);
  return s.Run();
}

}  // namespace thund::native
