#include "backend/native/stream_flow.h"

#include <cctype>

#include <arrow/array/builder_primitive.h>

#include "backend/native/flow_runner.h"
#include "backend/native/incremental_cdc.h"
#include "engine/batch/expectations.h"
#include "engine/batch/schema_conform.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/stream/cdc_apply.h"
#include "engine/stream/output_mode.h"
#include "ir/validate_internal.h"
#include "sql/sql_analysis.h"
#include "thund/sql_dialect.h"
#include "thund/validate.h"

namespace thund::native {
namespace {

using engine::QuoteIdentifier;

constexpr const char* kNow = "__thund_stream_now";
constexpr const char* kPrev = "__thund_stream_prev";
constexpr const char* kDelta = "__thund_stream_delta";
constexpr const char* kCheck = "__thund_stream_check";

// The event-time watermark of `flow` now: the smallest over its inputs of
// (the largest event time each holds - its allowed lateness). nullopt when no
// input has a watermark, or one that has it holds no event time yet.
arrow::Result<std::optional<int64_t>> CurrentWatermark(
    RunContext& ctx, const Flow& flow, const std::map<std::string, DatasetStream*>& streams) {
  ARROW_ASSIGN_OR_RAISE(auto inputs, FlowInputs(*ctx.pipeline, flow));
  // The slowest input gates progress.
  std::optional<int64_t> w;
  for (const auto& in : inputs) {
    auto it = streams.find(in);
    if (it == streams.end() || !it->second->schema) continue;
    auto wm = InputWatermark(*ctx.pipeline, flow, in, it->second->schema);
    if (!wm) continue;
    ARROW_ASSIGN_OR_RAISE(auto t,
                          Query(ctx, flow,
                                "SELECT epoch_us(max(" + QuoteIdentifier(wm->event_time_column) +
                                    "))::BIGINT AS m FROM " + QuoteIdentifier(in)));
    const std::optional<int64_t> max_us = MaxInt64(*t);
    if (!max_us) return std::nullopt;  // an input without event times holds W back
    const int64_t wi = *max_us - wm->allowed_lateness_ms * 1000;
    w = std::min(w.value_or(wi), wi);
  }
  return w;
}

// Runs `sql` over `now` (as kNow) and `prev` (as kPrev; null = no rows yet).
arrow::Result<std::shared_ptr<arrow::Table>> Delta(RunContext& ctx, const Flow& flow,
                                                   const std::shared_ptr<arrow::Table>& now,
                                                   std::shared_ptr<arrow::Table> prev,
                                                   const std::string& sql) {
  if (!prev) {
    ARROW_ASSIGN_OR_RAISE(prev, EmptyLike(now));
  }
  Registered r_now(ctx, kNow), r_prev(ctx, kPrev);
  ARROW_RETURN_NOT_OK(r_now.Set(now));
  ARROW_RETURN_NOT_OK(r_prev.Set(prev));
  return Query(ctx, flow, sql);
}

// The window end a windowed Append query carries when its SELECT keeps none.
constexpr const char* kHiddenWindowEnd = "__thund_window_end";


// The name a dataset's rows are checked under. One per dataset: each name's
// view is bound to its rows' schema, and a name shared by datasets of other
// schemas would re-create the view at every switch.
std::string CheckName(const Dataset& d) {
  std::string name = std::string(kCheck) + "_";
  for (char c : d.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// The schema DuckDB hands rows of `schema` back in when it is the same
// columns in the same Arrow types (then a round trip through DuckDB would not
// change a value), else null. Asked of DuckDB once per schema and run, over
// no rows registered under `probe_name`.
arrow::Result<std::shared_ptr<arrow::Schema>> UnchangedByDuckDb(
    RunContext& ctx, const Flow& flow, const std::shared_ptr<arrow::Schema>& schema,
    const std::string& probe_name) {
  const std::string key = schema->ToString(/*show_metadata=*/false);
  auto it = ctx.duckdb_schemas.find(key);
  if (it == ctx.duckdb_schemas.end()) {
    ARROW_ASSIGN_OR_RAISE(auto none, arrow::Table::MakeEmpty(schema));
    Registered probe_rows(ctx, probe_name);
    ARROW_RETURN_NOT_OK(probe_rows.Set(none));
    ARROW_ASSIGN_OR_RAISE(auto probe,
                          Query(ctx, flow, "SELECT * FROM " + probe_name + " LIMIT 0"));
    it = ctx.duckdb_schemas.emplace(key, probe->schema()).first;
  }
  const arrow::Schema& back = *it->second;
  if (back.num_fields() != schema->num_fields()) return nullptr;
  for (int i = 0; i < schema->num_fields(); ++i) {
    if (back.field(i)->name() != schema->field(i)->name() ||
        !back.field(i)->type()->Equals(*schema->field(i)->type())) {
      return nullptr;
    }
  }
  return it->second;
}

}  // namespace


arrow::Result<std::shared_ptr<arrow::Table>> Query(RunContext& ctx, const Flow& flow,
                                                   const std::string& sql) {
  auto t = ctx.session->Query(sql);
  if (!t.ok()) return FlowError(flow, t.status());
  return t;
}

// The flow's expectations and the dataset's schema applied to `rows`; the
// violation counts go to `step`.
arrow::Result<std::shared_ptr<arrow::Table>> CheckRows(RunContext& ctx, DatasetStream& ds,
                                                       const Flow& flow,
                                                       const std::shared_ptr<arrow::Table>& rows,
                                                       FlowStep* step) {
  const Dataset& d = *ds.dataset;
  ARROW_ASSIGN_OR_RAISE(auto expectations, engine::batch::CompileExpectations(d));
  const std::string check_name = CheckName(d);
  // Registered only when DuckDB reads the rows (not on the direct path).
  Registered input(ctx, check_name);
  std::shared_ptr<arrow::RecordBatchReader> reader;
  std::shared_ptr<arrow::Schema> direct_schema;
  if (ctx.options->native.direct_check && expectations.empty()) {
    ARROW_ASSIGN_OR_RAISE(direct_schema,
                          UnchangedByDuckDb(ctx, flow, rows->schema(), check_name));
  }
  if (direct_schema) {
    // The rows as DuckDB would hand them back: the same arrays, its schema.
    arrow::TableBatchReader batches(*rows);
    ARROW_ASSIGN_OR_RAISE(auto all, batches.ToRecordBatches());
    for (auto& b : all) b = arrow::RecordBatch::Make(direct_schema, b->num_rows(), b->columns());
    ARROW_ASSIGN_OR_RAISE(reader, arrow::RecordBatchReader::Make(std::move(all), direct_schema));
  } else {
    ARROW_RETURN_NOT_OK(input.Set(rows));
    std::string sql = engine::batch::WrapWithExpectations("SELECT * FROM " + check_name,
                                                          expectations);
    auto queried = ctx.session->QueryStream(sql);
    if (!queried.ok()) {
      return arrow::Status::Invalid("dataset '", d.name, "': an expectation does not apply to ",
                                    "the rows of flow '", flow.name,
                                    "': ", queried.status().message());
    }
    reader = *queried;
  }
  engine::batch::ExpectationEvaluator evaluator(expectations, d.name, flow.name);
  auto data_schema = evaluator.DataSchema(*reader->schema());
  auto conformer = engine::batch::SchemaConformer::Make(
      *data_schema, ds.schema ? ds.schema : data_schema, d.schema.declared(), d.name, flow.name);
  if (!conformer.ok()) return FlowError(flow, conformer.status());
  std::vector<std::shared_ptr<arrow::RecordBatch>> kept;
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status st = reader->ReadNext(&batch);
    if (!st.ok()) return FlowError(flow, st);
    if (!batch) break;
    auto applied = evaluator.Apply(batch);
    if (!applied.ok()) return FlowError(flow, applied.status());
    auto conformed = conformer->Conform(*applied);
    if (!conformed.ok()) return FlowError(flow, conformed.status());
    if ((*conformed)->num_rows() > 0) kept.push_back(*conformed);
  }
  if (!ds.schema) ds.schema = conformer->target();
  step->violations = evaluator.violations();
  return arrow::Table::FromRecordBatches(conformer->target(), kept);
}

bool KeepsRows(const DatasetStream& ds) { return !ds.sink && ds.retain; }

std::optional<Watermark> InputWatermark(const Pipeline& p, const Flow& flow,
                                        const std::string& input,
                                        const std::shared_ptr<arrow::Schema>& schema) {
  auto has = [&](const Watermark& w) {
    return !schema || schema->GetFieldIndex(w.event_time_column) >= 0;
  };
  if (flow.streaming && flow.streaming->watermark && has(*flow.streaming->watermark)) {
    return flow.streaming->watermark;
  }
  for (const Flow* g : p.FlowsInto(input)) {
    if (g->streaming && g->streaming->watermark && has(*g->streaming->watermark)) {
      return g->streaming->watermark;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> MaxInt64(const arrow::Table& t) {
  std::optional<int64_t> out;
  if (t.num_columns() == 0) return out;
  for (const auto& chunk : t.column(0)->chunks()) {
    auto arr = std::static_pointer_cast<arrow::Int64Array>(chunk);
    for (int64_t i = 0; i < arr->length(); ++i) {
      if (arr->IsValid(i)) out = std::max(out.value_or(arr->Value(i)), arr->Value(i));
    }
  }
  return out;
}

// A rewriting flow (Complete, Update state, CDC) now holds `rows`.
void ReplaceRows(FlowStream& f, const std::shared_ptr<arrow::Table>& rows, FlowStep* step) {
  f.rows = rows;
  step->delta = rows;
  step->rows_out = rows->num_rows();
}

arrow::Result<std::shared_ptr<arrow::Table>> Append(const std::shared_ptr<arrow::Table>& a,
                                                    const std::shared_ptr<arrow::Table>& b) {
  if (!a || a->num_rows() == 0) return b;
  if (!b || b->num_rows() == 0) return a;
  if (a->schema()->Equals(*b->schema(), /*check_metadata=*/false)) {
    return arrow::ConcatenateTables({a, b});
  }
  // The same columns from different producers (a source's NOT NULL fields,
  // DuckDB's nullable ones): the result takes the looser field.
  arrow::ConcatenateTablesOptions options;
  options.unify_schemas = true;
  return arrow::ConcatenateTables({a, b}, options);
}

// Adds checked rows to an append-only flow (a sink keeps only what it has
// not published yet).
arrow::Status AddRows(FlowStream& f, const std::shared_ptr<arrow::Table>& rows, FlowStep* step,
                      bool keep) {
  if (keep) {
    ARROW_ASSIGN_OR_RAISE(f.rows, Append(f.rows, rows));
  }
  ARROW_ASSIGN_OR_RAISE(f.added, Append(f.added, rows));
  ARROW_ASSIGN_OR_RAISE(f.recent, Append(f.recent, rows));
  f.total_rows += rows->num_rows();
  step->rows_out = rows->num_rows();
  step->delta = rows;
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Table>> EmptyLike(const std::shared_ptr<arrow::Table>& t) {
  return arrow::Table::MakeEmpty(t->schema());
}

arrow::Result<FlowShape> ShapeOf(const Pipeline& p, const Flow& flow) {
  (void)p;
  if (flow.source) return FlowShape::kSource;
  if (flow.cdc) return FlowShape::kCdc;
  if (flow.once) return FlowShape::kOnce;
  OutputMode mode = flow.streaming ? flow.streaming->output_mode : OutputMode::kAppend;
  if (mode == OutputMode::kComplete) return FlowShape::kComplete;
  auto facts = sql::AnalyzeSql(flow.sql);
  if (!facts.ok()) return FlowError(flow, facts.status());
  if (!facts->aggregates) return FlowShape::kAppend;
  return mode == OutputMode::kUpdate ? FlowShape::kUpdate : FlowShape::kAppendWindowed;
}

arrow::Status PrimeAppendFlow(RunContext& ctx, DatasetStream& ds, FlowStream& f,
                              const std::map<std::string, DatasetStream*>& streams) {
  // Only a flow that has emitted before has a previous result (a sink keeps
  // no rows: its published epochs tell).
  const bool emitted = f.rows || !f.consumed.empty() || (ds.sink && ds.epoch > 0);
  if (f.shape != FlowShape::kAppend || !emitted) return arrow::Status::OK();
  const Flow& flow = *f.flow;
  ARROW_ASSIGN_OR_RAISE(std::string sql, TranslateFlowSql(flow));
  // Bind each streaming input to the prefix the committed output covered.
  std::vector<std::pair<std::string, std::shared_ptr<arrow::Table>>> rebind;
  for (const auto& [input, rows] : f.consumed) {
    auto it = streams.find(input);
    if (it == streams.end()) continue;
    ARROW_ASSIGN_OR_RAISE(auto content, it->second->Content());
    if (rows > content->num_rows()) {
      return arrow::Status::IOError("flow '", flow.name, "': its committed state covers ", rows,
                                    " rows of '", input, "', which holds only ",
                                    content->num_rows(), "; run with --full-refresh ", flow.target);
    }
    ARROW_ASSIGN_OR_RAISE(auto prefix, content->Slice(0, rows)->CombineChunksToBatch());
    ARROW_RETURN_NOT_OK(ctx.catalog->BindArrow(input, content->schema(), {prefix}));
    rebind.emplace_back(input, content);
  }
  auto result = Query(ctx, flow, sql);
  for (const auto& [input, content] : rebind) ARROW_RETURN_NOT_OK(BindTable(ctx, input, content));
  ARROW_ASSIGN_OR_RAISE(f.last_result, std::move(result));
  f.last_result_known = true;
  return arrow::Status::OK();
}

arrow::Status BindTable(RunContext& ctx, const std::string& name,
                        const std::shared_ptr<arrow::Table>& content) {
  arrow::TableBatchReader reader(*content);
  ARROW_ASSIGN_OR_RAISE(auto batches, reader.ToRecordBatches());
  return ctx.catalog->BindArrow(name, content->schema(), std::move(batches));
}

arrow::Result<FlowStep> StepFlow(RunContext& ctx, DatasetStream& ds, FlowStream& f,
                                 const std::shared_ptr<arrow::Table>& source_rows,
                                 const TriggerContext& trigger,
                                 const std::map<std::string, DatasetStream*>& streams) {
  const Flow& flow = *f.flow;
  FlowStep step;

  if (f.shape == FlowShape::kSource) {
    if (!source_rows || source_rows->num_rows() == 0) return step;
    step.rows_in = source_rows->num_rows();
    ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx, ds, flow, source_rows, &step));
    ARROW_RETURN_NOT_OK(AddRows(f, checked, &step, KeepsRows(ds)));
    return step;
  }
  if (f.shape == FlowShape::kOnce && f.once_done) return step;

  ARROW_ASSIGN_OR_RAISE(std::string sql, TranslateFlowSql(flow));
  // A windowed Append flow whose SELECT keeps no window column: the plan
  // knows the window, so the query runs with its end as a hidden column.
  std::optional<std::string> window_end;
  bool hidden_end = false;
  if (f.shape == FlowShape::kAppendWindowed) {
    if (auto root = sql::PlanQuery(flow.sql); root.ok()) {
      window_end = engine::stream::PlanWindowEnd(**root);
      const plan::PlanNode* agg = plan::RowPathAggregate(**root);
      if (!window_end && agg && agg->kind == plan::NodeKind::kAggregate &&
          plan::AggregateWindow(*agg)) {
        auto with_end = sql::WithWindowEndColumn(flow.sql, kHiddenWindowEnd);
        if (with_end.ok()) {
          sql = *with_end;
          window_end = engine::QuoteIdentifier(kHiddenWindowEnd);
          hidden_end = true;
        }
      }
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto now, Query(ctx, flow, sql));
  step.rows_in = now->num_rows();

  switch (f.shape) {
    case FlowShape::kSource:
      break;
    case FlowShape::kOnce: {
      ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx, ds, flow, now, &step));
      ARROW_RETURN_NOT_OK(AddRows(f, checked, &step, KeepsRows(ds)));
      f.once_done = true;
      break;
    }
    case FlowShape::kComplete: {
      ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx, ds, flow, now, &step));
      ReplaceRows(f, checked, &step);
      break;
    }
    case FlowShape::kAppend: {
      ARROW_ASSIGN_OR_RAISE(auto delta,
                            Delta(ctx, flow, now, f.last_result_known ? f.last_result : nullptr,
                                  engine::stream::AppendDeltaSql(kNow, kPrev)));
      f.last_result = now;
      f.last_result_known = true;
      f.consumed.clear();
      ARROW_ASSIGN_OR_RAISE(auto inputs, FlowInputs(*ctx.pipeline, flow));
      for (const auto& in : inputs) {
        auto it = streams.find(in);
        if (it != streams.end()) f.consumed[in] = it->second->NumRows();
      }
      ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx, ds, flow, delta, &step));
      ARROW_RETURN_NOT_OK(AddRows(f, checked, &step, KeepsRows(ds)));
      break;
    }
    case FlowShape::kAppendWindowed: {
      std::optional<int64_t> w_now;
      if (trigger.input_finished) {
        w_now = kEndOfInput;
      } else {
        ARROW_ASSIGN_OR_RAISE(w_now, CurrentWatermark(ctx, flow, streams));
      }
      const int64_t w_prev = f.watermark_us.value_or(std::numeric_limits<int64_t>::min());
      step.watermark_us = w_now;
      if (!w_now || *w_now <= w_prev) break;
      Registered r_now(ctx, kNow);
      ARROW_RETURN_NOT_OK(r_now.Set(now));
      // The window comes from the plan (the aggregate's grouping key), not
      // from the output's column names.
      std::optional<std::string> end = window_end;
      if (!end) end = engine::stream::FindWindowEnd(*now->schema());
      std::shared_ptr<arrow::Table> delta;
      if (end) {
        ARROW_ASSIGN_OR_RAISE(
            delta,
            Query(ctx, flow, engine::stream::WindowedAppendDeltaSql(kNow, *end, w_prev, *w_now)));
        if (f.rows && f.rows->num_rows() > 0 && w_prev != std::numeric_limits<int64_t>::min()) {
          Registered r_prev(ctx, kPrev);
          ARROW_RETURN_NOT_OK(r_prev.Set(f.rows));
          ARROW_ASSIGN_OR_RAISE(
              auto late, Query(ctx, flow,
                               engine::stream::ChangedClosedWindowsSql(
                                   kNow, kPrev, *end, w_prev, hidden_end ? *end : "")));
          step.late_rows = late->num_rows();
        }
      } else if (*w_now == kEndOfInput) {
        delta = now;  // no window end known: everything is final at the end only
      } else {
        break;
      }
      f.watermark_us = *w_now;
      if (hidden_end) {
        const int hidden = delta->schema()->GetFieldIndex(kHiddenWindowEnd);
        if (hidden >= 0) {
          ARROW_ASSIGN_OR_RAISE(delta, delta->RemoveColumn(hidden));
        }
      }
      ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx, ds, flow, delta, &step));
      ARROW_RETURN_NOT_OK(AddRows(f, checked, &step, KeepsRows(ds)));
      break;
    }
    case FlowShape::kUpdate: {
      std::shared_ptr<arrow::Table> prev = f.rows;
      if (!prev) {
        ARROW_ASSIGN_OR_RAISE(prev, EmptyLike(now));
      }
      ARROW_ASSIGN_OR_RAISE(
          auto delta, Delta(ctx, flow, now, prev, engine::stream::UpdateDeltaSql(kNow, kPrev)));
      ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx, ds, flow, delta, &step));
      Registered r_prev(ctx, kPrev), r_delta(ctx, kDelta);
      ARROW_RETURN_NOT_OK(r_prev.Set(prev));
      ARROW_RETURN_NOT_OK(r_delta.Set(checked));
      ARROW_ASSIGN_OR_RAISE(
          f.rows, Query(ctx, flow, engine::stream::UpsertStateSql(kPrev, kDelta, f.update_keys)));
      step.delta = checked;
      step.rows_out = checked->num_rows();
      break;
    }
    case FlowShape::kCdc: {
      auto changes = WithArrival(now, 0);
      if (!changes.ok()) return FlowError(flow, changes.status());
      Registered r_now(ctx, kNow);
      ARROW_RETURN_NOT_OK(r_now.Set(*changes));
      ARROW_ASSIGN_OR_RAISE(const Cdc cdc, DuckDbCdc(flow));
      std::vector<std::string> columns;
      for (const auto& field : (*changes)->schema()->fields()) columns.push_back(field->name());
      auto query = engine::stream::MakeCdcQuery(cdc, kNow, columns, kCdcArrival);
      if (!query.ok()) return FlowError(flow, query.status());
      ARROW_ASSIGN_OR_RAISE(auto table, Query(ctx, flow, query->sql));
      auto ignored = ctx.session->QueryInt64(query->ignored_count_sql);
      if (!ignored.ok()) return FlowError(flow, ignored.status());
      step.ignored_changes = *ignored;
      ARROW_ASSIGN_OR_RAISE(auto checked, CheckRows(ctx, ds, flow, table, &step));
      ReplaceRows(f, checked, &step);
      break;
    }
  }
  return step;
}

}  // namespace thund::native
