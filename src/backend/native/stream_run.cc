#include "backend/native/stream_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <set>
#include <thread>

#include "backend/native/incremental_flow.h"
#include "backend/native/runner_util.h"
#include "backend/native/stream_checkpoint.h"
#include "backend/native/stream_flow.h"
#include "backend/native/stream_state.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/stream/output_mode.h"
#include "ir/validate_internal.h"
#include "sql/sql_analysis.h"
#include "thund/validate.h"
#include "common/clock.h"

namespace thund::native {
namespace {


// "2026-01-01T00:00:05.250Z"
std::string FormatMicros(int64_t us) {
  std::time_t secs = static_cast<std::time_t>(us >= 0 ? us / 1000000 : (us - 999999) / 1000000);
  int64_t ms = (us - static_cast<int64_t>(secs) * 1000000) / 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

enum class Policy { kOnce, kAvailableNow, kProcessingTime };

struct TriggerPolicy {
  Policy policy = Policy::kAvailableNow;
  int64_t interval_ms = 0;
  std::string Describe() const {
    switch (policy) {
      case Policy::kOnce:
        return "once";
      case Policy::kAvailableNow:
        return "available_now";
      case Policy::kProcessingTime:
        return "processing_time(" + std::to_string(interval_ms) + " ms)";
    }
    return "?";
  }
};

TriggerPolicy ChoosePolicy(const std::vector<DatasetStream>& streams,
                           std::vector<std::string>* notes) {
  TriggerPolicy t;
  bool all_once = true, any = false;
  std::set<std::string> kinds;
  for (const auto& ds : streams) {
    for (const auto& f : ds.flows) {
      Trigger trig = f.flow->streaming ? f.flow->streaming->trigger : Trigger::AvailableNow();
      kinds.insert(trig.ToString());
      any = true;
      if (trig.kind != TriggerKind::kOnce) all_once = false;
      if (trig.kind == TriggerKind::kProcessingTime) {
        if (t.policy != Policy::kProcessingTime || trig.interval_ms < t.interval_ms) {
          t.interval_ms = trig.interval_ms;
        }
        t.policy = Policy::kProcessingTime;
      }
    }
  }
  if (t.policy != Policy::kProcessingTime && any && all_once) t.policy = Policy::kOnce;
  if (kinds.size() > 1) {
    notes->push_back(
        "streaming flows declare different triggers; the native engine runs them "
        "in one loop with trigger " +
        t.Describe());
  }
  return t;
}

arrow::Status Bind(RunContext& ctx, const DatasetStream& ds) {
  if (!ds.schema || ds.sink) return arrow::Status::OK();  // sinks are never read
  ARROW_ASSIGN_OR_RAISE(auto content, ds.Content());
  return BindTable(ctx, ds.dataset->name, content);
}

void EmitFlow(RunContext& ctx, RunEvent::Kind kind, const Flow& f, std::string message = "") {
  RunEvent e;
  e.kind = kind;
  e.flow = f.name;
  e.dataset = f.target;
  e.message = std::move(message);
  ctx.Emit(e);
}

RunEvent TriggerEvent(RunEvent::Kind kind, const FlowStream& f, const DatasetStream& ds,
                      int64_t index) {
  RunEvent e;
  e.kind = kind;
  e.flow = f.flow->name;
  e.dataset = ds.dataset->name;
  e.trigger = index;
  return e;
}

// The columns (lower case) the readers of stream view `view` use, by their
// plans (plan::ColumnNamesRead), with every watermark's column; empty (all)
// when a reader may use any, sends late rows on (they keep every column) or
// applies changes (its keys and sequence are outside its query), and when
// the view has expectations (they check its rows before any reader).
std::set<std::string> ColumnsReadersUse(const Pipeline& p, const Dataset& view) {
  if (!view.expectations.empty()) return {};
  std::set<std::string> out;
  auto watermark = [&](const Flow& g) {
    if (g.streaming && g.streaming->watermark) {
      out.insert(internal::Lower(g.streaming->watermark->event_time_column));
    }
  };
  for (const Flow* g : p.FlowsInto(view.name)) watermark(*g);
  for (const auto& g : p.flows) {
    if (g.source) continue;
    auto inputs = FlowInputs(p, g);
    if (!inputs.ok()) return {};
    bool reads = false;
    for (const auto& in : *inputs) reads |= internal::Lower(in) == internal::Lower(view.name);
    if (!reads) continue;
    if (g.cdc || g.sql.empty() || (g.streaming && !g.streaming->late_rows.empty())) return {};
    auto root = sql::PlanQuery(g.sql);
    if (!root.ok()) return {};
    auto names = plan::ColumnNamesRead(**root);
    if (!names) return {};
    out.insert(names->begin(), names->end());
    watermark(g);
  }
  return out;
}

// `schema` with only the columns the dataset's readers use (its first column
// when they name none: the rows still count).
std::shared_ptr<arrow::Schema> ReadSchema(const DatasetStream& ds,
                                          const std::shared_ptr<arrow::Schema>& schema) {
  if (ds.read_columns.empty() || schema->num_fields() == 0) return schema;
  arrow::FieldVector kept;
  for (const auto& f : schema->fields()) {
    if (ds.read_columns.count(internal::Lower(f->name())) > 0) kept.push_back(f);
  }
  if (kept.empty()) kept.push_back(schema->field(0));
  if (static_cast<int>(kept.size()) == schema->num_fields()) return schema;
  return arrow::schema(kept, schema->metadata());
}

// A source's rows with the columns of the dataset's schema (ReadSchema), in
// its order.
arrow::Result<std::shared_ptr<arrow::Table>> ReadColumns(const DatasetStream& ds,
                                                         const std::shared_ptr<arrow::Table>& rows) {
  if (ds.read_columns.empty() || !ds.schema) return rows;
  if (rows->schema()->Equals(*ds.schema, /*check_metadata=*/false)) return rows;
  std::vector<int> columns;
  for (const auto& f : ds.schema->fields()) {
    const int i = rows->schema()->GetFieldIndex(f->name());
    if (i < 0) {
      return arrow::Status::Invalid("stream view '", ds.dataset->name, "': its source's rows have "
                                    "no column '", f->name(), "'");
    }
    columns.push_back(i);
  }
  return rows->SelectColumns(columns);
}

// Per-flow totals over the run, for kFlowFinished and the summary.
struct FlowTotals {
  int64_t rows_in = 0, rows_out = 0, late = 0;
  std::vector<int64_t> violations;
};

class StreamLoop {
 public:
  StreamLoop(RunContext& ctx, const std::vector<const Dataset*>& datasets, RunSummary* summary)
      : ctx_(ctx), summary_(summary) {
    for (const Dataset* d : datasets) {
      DatasetStream ds;
      ds.dataset = d;
      ds.sink = d->kind == DatasetKind::kSink;
      ds.transient = IsStreamView(*ctx.pipeline, *d);
      if (ds.transient) stream_views_.insert(internal::Lower(d->name));
      if (ds.transient && ctx.options->native.prune_columns) {
        ds.read_columns = ColumnsReadersUse(*ctx.pipeline, *d);
      }
      for (const auto& f : ctx.pipeline->flows) {
        if (f.target != d->name) continue;
        FlowStream fs;
        fs.flow = &f;
        ds.flows.push_back(std::move(fs));
      }
      for (const Flow* producer : FlowsSendingLateRowsTo(*ctx.pipeline, d->name)) {
        Flow stand_in;
        stand_in.name = producer->name + ".late_rows";
        stand_in.target = d->name;
        late_flows_.push_back(std::move(stand_in));
        FlowStream fs;
        fs.flow = &late_flows_.back();
        fs.shape = FlowShape::kAppend;
        fs.late_rows_of = producer;
        ds.flows.push_back(std::move(fs));
      }
      streams_.push_back(std::move(ds));
    }
  }

  void Run();

 private:
  arrow::Status Setup();
  arrow::Status SetupIncremental();
  arrow::Status RunTrigger(int64_t index, bool* took_input, bool* finished);
  bool InputsBound(const Flow& f) const;
  arrow::Status BindViewIfReady(DatasetStream& ds);
  void Finish(const arrow::Status& error, const std::string& failed_flow);
  void Notes();

  // Whether `f` runs in the incremental mode: its own mode, else the run's;
  // a flow that sets neither and reads a stream view is incremental (the
  // view keeps no rows for Recompute to reread).
  bool WantsIncremental(const Flow& f) const;

  arrow::Status SendLateRows(const Flow& producer, const std::shared_ptr<arrow::Table>& rows);
  // Commits one epoch when anything changed since the last one.
  arrow::Status CommitEpoch();

  RunContext& ctx_;
  RunSummary* summary_;
  std::deque<Flow> late_flows_;  // stand-ins writing late-rows tables (stable addresses)
  std::vector<DatasetStream> streams_;
  std::map<std::string, DatasetStream*> by_name_;
  std::set<std::string> stream_views_;  // lower-case names of the transient datasets
  std::map<std::string, FlowTotals> totals_;
  TriggerPolicy policy_;
  int64_t triggers_ = 0;
  int64_t started_ms_ = 0;
  std::string failed_flow_;
  std::unique_ptr<StreamCheckpoint> checkpoint_;
  std::vector<StagedVersion> staged_;
  bool uncommitted_ = false;  // a trigger changed something no epoch holds yet
};

bool IsView(const Dataset& d) {
  return d.kind == DatasetKind::kView || d.kind == DatasetKind::kTemporaryView;
}

arrow::Status StreamLoop::Setup() {
  const RunOptions& o = *ctx_.options;
  for (auto& ds : streams_) by_name_[ds.dataset->name] = &ds;
  std::set<std::string> fresh_sets;
  for (auto& ds : streams_) {
    if (o.full_refresh_all || o.full_refresh.count(ds.dataset->name) > 0) {
      fresh_sets.insert(ds.dataset->name);
    }
  }
  ARROW_ASSIGN_OR_RAISE(checkpoint_, StreamCheckpoint::Open(ctx_));
  ARROW_RETURN_NOT_OK(checkpoint_->Recover(ctx_, streams_, fresh_sets));
  for (auto& ds : streams_) {
    if (ds.IsQueryView()) continue;
    const bool fresh = fresh_sets.count(ds.dataset->name) > 0;
    for (auto& f : ds.flows) {
      if (f.late_rows_of) continue;
      ARROW_ASSIGN_OR_RAISE(f.shape, ShapeOf(*ctx_.pipeline, *f.flow));
    }
    ARROW_RETURN_NOT_OK(LoadStream(ctx_, &ds, fresh, *checkpoint_));
    for (auto& f : ds.flows) {
      if (f.shape == FlowShape::kUpdate) {
        ARROW_ASSIGN_OR_RAISE(std::string sql, TranslateFlowSql(*f.flow));
        auto keys = engine::stream::UpdateKeyColumns(sql);
        if (!keys.ok()) return FlowError(*f.flow, keys.status());
        f.update_keys = *keys;
      }
      if (f.shape != FlowShape::kSource) continue;
      engine::stream::StreamSourceContext sc;
      sc.flow = f.flow;
      sc.target = ds.dataset;
      sc.filesystem = o.native.filesystem;
      if (const auto* mem = std::get_if<MemorySource>(&*f.flow->source)) {
        auto it = o.memory_streams.find(mem->name);
        if (it != o.memory_streams.end()) sc.memory_batches = &it->second;
      }
      ARROW_ASSIGN_OR_RAISE(f.source, engine::stream::MakeStreamSource(*f.flow->source, sc));
      // In-memory batches are handed in per run: a rerun takes all it is given.
      const bool per_run = f.source->PerRun();
      if (!f.position.empty() && !per_run) ARROW_RETURN_NOT_OK(f.source->Restore(f.position));
      if (per_run) f.position.clear();
      f.source->ReadOnly(ds.read_columns);
      if (!ds.schema && f.source->schema()) ds.schema = ReadSchema(ds, f.source->schema());
    }
    ARROW_RETURN_NOT_OK(Bind(ctx_, ds));
  }
  for (auto& ds : streams_) ARROW_RETURN_NOT_OK(BindViewIfReady(ds));
  ARROW_RETURN_NOT_OK(SetupIncremental());
  for (auto& ds : streams_) {
    for (auto& f : ds.flows) {
      if (!f.incremental && !f.late_rows_of) {
        ARROW_RETURN_NOT_OK(PrimeAppendFlow(ctx_, ds, f, by_name_));
      }
    }
  }
  policy_ = ChoosePolicy(streams_, &ctx_.notes);
  return arrow::Status::OK();
}

bool StreamLoop::WantsIncremental(const Flow& f) const {
  return FlowStreamingMode(*ctx_.pipeline, f, ctx_.options->streaming_mode) ==
         StreamingMode::kIncremental;
}

// The flows asking for the incremental mode get their operator (or fall back,
// saying why); then each dataset learns whether it must keep its rows.
arrow::Status StreamLoop::SetupIncremental() {
  const int64_t now = SteadyMs();
  for (auto& ds : streams_) {
    if (IsView(*ds.dataset)) continue;
    for (auto& f : ds.flows) {
      if (f.late_rows_of || !WantsIncremental(*f.flow)) continue;
      std::string fallback;
      auto inc = MakeIncrementalFlow(ctx_, f, by_name_, now, &fallback);
      if (!inc.ok()) return FlowError(*f.flow, inc.status());
      if (!*inc && ds.sink && fallback.empty()) continue;
      if (!*inc) {
        if (fallback.empty()) continue;  // sources and once-flows are incremental as they are
        const std::string msg = "runs in Recompute mode: " + fallback;
        EmitFlow(ctx_, RunEvent::Kind::kFallback, *f.flow, msg);
        ctx_.notes.push_back("flow '" + f.flow->name + "' " + msg);
        continue;
      }
      f.incremental = *inc;
      ARROW_RETURN_NOT_OK(RestoreIncremental(&f, *checkpoint_));
    }
  }
  checkpoint_->ReportRestored(ctx_);
  // The two modes keep different state: a flow whose committed version the
  // other mode built cannot go on from it (it would emit rows again).
  for (auto& ds : streams_) {
    if (IsView(*ds.dataset)) continue;
    for (auto& f : ds.flows) {
      if (f.source || f.late_rows_of || f.shape == FlowShape::kOnce) continue;
      const bool had_incremental = !f.saved_incremental.empty();
      const bool had_recompute =
          !had_incremental && (!f.committed_parts.empty() || !f.consumed.empty() ||
                               f.watermark_us.has_value() || (ds.sink && ds.epoch > 0));
      const bool incremental = f.incremental != nullptr;
      if ((had_incremental && !incremental) || (had_recompute && incremental)) {
        const char* was = had_incremental ? "incremental" : "Recompute";
        const char* now_mode = incremental ? "incremental" : "Recompute";
        return FlowError(*f.flow,
                         arrow::Status::Invalid(
                             "its committed rows and state were built in ", was,
                             " mode and it now runs in ", now_mode,
                             " mode, which keeps other state; run with --full-refresh ",
                             f.flow->target, " to rebuild it in ", now_mode, " mode"));
      }
    }
  }
  // A dataset keeps its rows in memory unless it is written only by sources
  // and incremental flows and read only by incremental flows.
  // lower-case names Recompute flows read -> one such flow
  std::map<std::string, const Flow*> read_whole;
  bool inputs_unknown = false;
  for (const auto& ds : streams_) {
    for (const auto& g : ds.flows) {
      if (g.source || g.incremental) continue;
      auto inputs = FlowInputs(*ctx_.pipeline, *g.flow);
      if (!inputs.ok()) {
        inputs_unknown = true;
        continue;
      }
      for (const auto& in : *inputs) read_whole.emplace(internal::Lower(in), g.flow);
    }
  }
  for (auto& ds : streams_) {
    if (ds.transient) {
      auto it = read_whole.find(internal::Lower(ds.dataset->name));
      if (it != read_whole.end()) {
        return FlowError(
            *it->second,
            arrow::Status::Invalid(
                "it runs in Recompute mode, which rereads all of its input every trigger, "
                "but it reads '", ds.dataset->name,
                "', a temporary view over a streaming source, which keeps none of its rows; "
                "run it in the incremental mode (mode = 'incremental'; a query the incremental "
                "mode cannot run falls back to Recompute), or declare '",
                ds.dataset->name, "' as a streaming table"));
      }
      ds.retain = false;
      continue;
    }
    bool keep = inputs_unknown || IsView(*ds.dataset) ||
                read_whole.count(internal::Lower(ds.dataset->name)) > 0;
    for (const auto& f : ds.flows) keep |= !(f.source || f.incremental);
    ds.retain = keep;
  }
  return arrow::Status::OK();
}

// A view over streams is a DuckDB view of its query, (re)defined once every
// input it reads is bound; it then reads their current content.
arrow::Status StreamLoop::BindViewIfReady(DatasetStream& ds) {
  if (!ds.IsQueryView() || ds.flows.empty() || !InputsBound(*ds.flows[0].flow)) {
    return arrow::Status::OK();
  }
  ARROW_ASSIGN_OR_RAISE(std::string sql, TranslateFlowSql(*ds.flows[0].flow));
  auto bound = ctx_.catalog->BindView(ds.dataset->name, sql);
  if (!bound.ok()) return FlowError(*ds.flows[0].flow, bound);
  if (!ds.schema) {
    ARROW_ASSIGN_OR_RAISE(
        auto empty, ctx_.session->Query("SELECT * FROM " +
                                        engine::QuoteIdentifier(ds.dataset->name) + " LIMIT 0"));
    ds.schema = empty->schema();
  }
  return arrow::Status::OK();
}

bool StreamLoop::InputsBound(const Flow& f) const {
  if (f.source) return true;
  auto inputs = FlowInputs(*ctx_.pipeline, f);
  if (!inputs.ok()) return true;  // the step reports the error
  for (const auto& in : *inputs) {
    auto it = by_name_.find(in);
    if (it != by_name_.end() && !it->second->schema) return false;
  }
  return true;
}

arrow::Status StreamLoop::RunTrigger(int64_t index, bool* took_input, bool* finished) {
  const int64_t start = SteadyMs();
  engine::stream::TriggerLimit limit;
  limit.take_all = policy_.policy == Policy::kOnce;
  // (1) Sources.
  std::map<const FlowStream*, std::shared_ptr<arrow::Table>> taken;
  // The input has ended for good only when every source is a bounded source
  // that is exhausted; in-memory batches are per run (a rerun may bring more).
  bool any_source = false, all_exhausted = true, per_run_input = false;
  *took_input = false;
  for (auto& ds : streams_) {
    for (auto& f : ds.flows) {
      if (!f.source) continue;
      any_source = true;
      auto batch = f.source->Next(limit);
      if (!batch.ok()) {  // source errors name the flow and the file already
        failed_flow_ = f.flow->name;
        return batch.status();
      }
      const std::string position = f.source->Position();
      if (position != f.position) ds.dirty = true;
      f.position = position;
      if (!ds.schema && f.source->schema()) ds.schema = ReadSchema(ds, f.source->schema());
      if (*batch) {
        auto rows = ReadColumns(ds, (*batch)->rows);
        if (!rows.ok()) {
          failed_flow_ = f.flow->name;
          return rows.status();
        }
        taken[&f] = *rows;
        f.position_summary = (*batch)->position_summary;
        if ((*batch)->rows->num_rows() > 0) *took_input = true;
      }
      if (!f.source->Exhausted()) all_exhausted = false;
      if (f.source->PerRun()) per_run_input = true;
    }
  }
  for (auto& ds : streams_) {
    for (auto& f : ds.flows) {
      f.recent.reset();
      f.recent_start = f.total_rows;
    }
  }
  TriggerContext trigger;
  trigger.index = index;
  trigger.input_finished = (!any_source || all_exhausted) && !per_run_input;
  *finished = !any_source || all_exhausted;
  // (2) Flows, in dependency order.
  for (auto& ds : streams_) {
    if (ds.IsQueryView()) {
      ARROW_RETURN_NOT_OK(BindViewIfReady(ds));
      continue;
    }
    for (auto& f : ds.flows) {
      if (f.late_rows_of || !InputsBound(*f.flow)) continue;
      const int64_t flow_start = SteadyMs();
      const std::optional<int64_t> watermark_before = f.watermark_us;
      auto it = taken.find(&f);
      const int64_t inc_watermark_before =
          f.incremental ? f.incremental->watermark_us.value_or(engine::stream::kNoWatermark) : 0;
      auto step = f.incremental
                      ? StepIncremental(ctx_, ds, f, trigger, by_name_, SteadyMs())
                      : StepFlow(ctx_, ds, f, it == taken.end() ? nullptr : it->second, trigger,
                                 by_name_);
      if (!step.ok()) {
        failed_flow_ = f.flow->name;
        return step.status();
      }
      if (step->rows_out > 0 || (!AppendOnly(f.shape) && *took_input) ||
          (f.shape == FlowShape::kOnce && f.once_done && step->rows_in > 0)) {
        ds.dirty = true;
      }
      if (f.watermark_us != watermark_before) ds.dirty = true;
      if (f.incremental &&
          (step->rows_in > 0 ||
           f.incremental->watermark_us.value_or(engine::stream::kNoWatermark) !=
               inc_watermark_before)) {
        ds.dirty = true;  // its state moved
      }
      f.counters.rows_in += step->rows_in;
      f.counters.rows_out += step->rows_out;
      f.counters.late_rows += step->late_rows;
      ++f.counters.triggers;
      FlowTotals& tot = totals_[f.flow->name];
      tot.rows_in += step->rows_in;
      tot.rows_out += step->rows_out;
      tot.late += step->late_rows;
      if (tot.violations.size() < step->violations.size())
        tot.violations.resize(step->violations.size());
      for (size_t i = 0; i < step->violations.size(); ++i) tot.violations[i] += step->violations[i];
      f.rows_written += AppendOnly(f.shape) ? step->rows_out : 0;

      RunEvent e = TriggerEvent(RunEvent::Kind::kTrigger, f, ds, index);
      e.rows_in = step->rows_in;
      e.rows_out = step->rows_out;
      e.elapsed_ms = SteadyMs() - flow_start;
      if (f.source)
        e.positions[f.flow->name] = f.position_summary.empty() ? "start" : f.position_summary;
      if (step->watermark_us) {
        e.message = *step->watermark_us == kEndOfInput
                        ? "watermark: end of input"
                        : "watermark " + FormatMicros(*step->watermark_us);
      }
      if (f.incremental) {
        e.message += (e.message.empty() ? "" : ", ") + std::string("state ") +
                     std::to_string(f.incremental->StateRows()) + " rows / " +
                     std::to_string(f.incremental->StateBytes()) + " bytes";
      }
      ctx_.Emit(e);
      for (size_t i = 0; i < step->violations.size(); ++i) {
        if (step->violations[i] == 0) continue;
        RunEvent x = TriggerEvent(RunEvent::Kind::kExpectation, f, ds, index);
        x.name = ds.dataset->expectations[i].name;
        x.action = Name(ds.dataset->expectations[i].action);
        x.count = step->violations[i];
        x.rows_in = step->rows_in;
        ctx_.Emit(x);
      }
      if (step->ignored_changes > 0) {
        RunEvent m = TriggerEvent(RunEvent::Kind::kMessage, f, ds, index);
        m.count = step->ignored_changes;
        m.message = std::to_string(step->ignored_changes) +
                    " change rows ignored so far (a NULL key or sequence value)";
        ctx_.Emit(m);
      }
      if (step->late && f.flow->streaming && !f.flow->streaming->late_rows.empty()) {
        ARROW_RETURN_NOT_OK(SendLateRows(*f.flow, step->late));
      }
      if (step->late_rows > 0 && f.incremental) {
        RunEvent late = TriggerEvent(RunEvent::Kind::kLateRows, f, ds, index);
        late.count = step->late_rows;
        late.message = std::to_string(step->late_rows) +
                       " rows behind the watermark dropped before the flow's stateful operator";
        ctx_.Emit(late);
      } else if (step->late_rows > 0) {
        RunEvent late = TriggerEvent(RunEvent::Kind::kLateRows, f, ds, index);
        late.count = step->late_rows;
        late.message =
            "already emitted window rows changed after late input (kept in Recompute "
            "mode; Append does not emit a window twice — use Update or Complete to "
            "see the change)";
        ctx_.Emit(late);
      }
    }
    ARROW_RETURN_NOT_OK(Bind(ctx_, ds));
  }
  // (3) Commit the trigger's epoch (or leave it to a later trigger).
  for (auto& ds : streams_) uncommitted_ |= ds.dirty;
  if (checkpoint_->Due(index)) ARROW_RETURN_NOT_OK(CommitEpoch());
  // Datasets no reader needs whole keep only what the next trigger adds.
  for (auto& ds : streams_) {
    if (ds.retain) continue;
    for (auto& f : ds.flows) {
      if (AppendOnly(f.shape)) f.rows.reset();
    }
  }
  (void)start;
  return arrow::Status::OK();
}

arrow::Status StreamLoop::CommitEpoch() {
  if (!uncommitted_) return arrow::Status::OK();
  const int64_t epoch = checkpoint_->committed_epoch() + 1;
  for (auto& ds : streams_) {
    if (ds.transient) {  // nothing stored: its position is in the epoch
      for (auto& f : ds.flows) f.added.reset();
      ds.dirty = false;
      continue;
    }
    ARROW_RETURN_NOT_OK(StageStream(ctx_, &ds, epoch, &staged_));
  }
  arrow::Status st = checkpoint_->Commit(ctx_, streams_, &staged_);
  if (!st.ok()) {
    for (auto& s : staged_) ctx_.store->Abandon(s.pending);
    staged_.clear();
    return st.WithMessage("checkpoint epoch ", epoch, ": ", st.message(),
                          " (the run resumes from the epoch before it)");
  }
  uncommitted_ = false;
  return arrow::Status::OK();
}

// Appends the late rows `producer` dropped to its late-rows table.
arrow::Status StreamLoop::SendLateRows(const Flow& producer,
                                       const std::shared_ptr<arrow::Table>& rows) {
  auto it = by_name_.find(producer.streaming->late_rows);
  if (it == by_name_.end()) return arrow::Status::OK();
  DatasetStream& ds = *it->second;
  for (auto& f : ds.flows) {
    if (f.late_rows_of != &producer) continue;
    FlowStep step;
    auto checked = CheckRows(ctx_, ds, *f.flow, rows, &step);
    if (!checked.ok()) {
      failed_flow_ = producer.name;
      return checked.status().WithMessage("late rows of flow '", producer.name, "' into '",
                                          ds.dataset->name, "': ", checked.status().message());
    }
    ARROW_RETURN_NOT_OK(AddRows(f, *checked, &step, KeepsRows(ds)));
    totals_[f.flow->name].rows_out += step.rows_out;
    ds.dirty = true;
  }
  return arrow::Status::OK();
}

void StreamLoop::Notes() {
  for (auto& ds : streams_) {
    for (auto& f : ds.flows) {
      const Flow& flow = *f.flow;
      if (!flow.streaming) continue;
      if (!WantsIncremental(flow) &&
          (flow.streaming->watermark || flow.streaming->window)) {
        ctx_.notes.push_back(
            "flow '" + flow.name +
            "': in Recompute mode its watermark and window are advisory: every row is kept "
            "(late rows are not dropped); Append emits a window once the watermark passes "
            "its end");
      }
    }
  }
}

void StreamLoop::Run() {
  started_ms_ = SteadyMs();
  Notes();
  arrow::Status st = Setup();
  if (st.ok()) {
    for (auto& ds : streams_) {
      for (auto& f : ds.flows) EmitFlow(ctx_, RunEvent::Kind::kFlowStarted, *f.flow);
    }
    const int64_t cap = ctx_.options->max_triggers;
    for (int64_t index = 1;; ++index) {
      if (ctx_.StopRequested()) break;
      if (cap > 0 && index > cap) break;
      const int64_t t0 = SteadyMs();
      bool took = false, finished = false;
      st = RunTrigger(index, &took, &finished);
      ++triggers_;
      if (!st.ok()) break;
      if (policy_.policy == Policy::kOnce || finished) break;
      if (policy_.policy == Policy::kAvailableNow && !took) break;
      if (policy_.policy == Policy::kProcessingTime) {
        while (!ctx_.StopRequested() && SteadyMs() - t0 < policy_.interval_ms) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
    }
  }
  if (st.ok() && checkpoint_) st = CommitEpoch();  // what the last triggers changed
  Finish(st, failed_flow_);
}

void StreamLoop::Finish(const arrow::Status& error, const std::string& failed_flow) {
  bool run_inc = false, run_recompute = false;
  for (const auto& ds : streams_) {
    for (const auto& f : ds.flows) {
      if (!f.source) (f.incremental ? run_inc : run_recompute) = true;
    }
  }
  summary_->mode = run_inc && run_recompute ? "streaming (incremental + recompute)"
                   : run_inc                ? "streaming (incremental)"
                                            : "streaming (recompute)";
  const std::string loop = std::to_string(triggers_) + (triggers_ == 1 ? " trigger" : " triggers") +
                           ", " + policy_.Describe();
  for (auto& ds : streams_) {
    const Dataset& d = *ds.dataset;
    bool any_inc = false, any_recompute = false;
    for (const auto& f : ds.flows) {
      if (f.source) continue;
      (f.incremental ? any_inc : any_recompute) = true;
    }
    const std::string how =
        loop + (any_inc && any_recompute ? ", incremental and Recompute flows"
                : any_inc                ? ", incremental mode"
                : any_recompute          ? ", Recompute mode"
                                         : "");
    if (ds.IsQueryView()) {
      auto& state = ctx_.states[d.name];
      state.available = error.ok() && ds.schema != nullptr;
      if (!state.available)
        state.blocked_reason = "view '" + d.name + "' over streams is not available";
      DatasetOutcome o =
          Outcome(d, state.available ? DatasetStatus::kComputed : DatasetStatus::kSkipped,
                  "view over streams (live in the trigger loop)");
      summary_->datasets.push_back(std::move(o));
      continue;
    }
    int64_t emitted = 0;
    for (auto& f : ds.flows) emitted += totals_[f.flow->name].rows_out;
    DatasetOutcome o = Outcome(d, error.ok() ? DatasetStatus::kComputed : DatasetStatus::kFailed,
                               how + ", " + std::to_string(emitted) + " rows emitted" +
                                   (ds.transient ? " to its readers (a stream view: not stored)"
                                                 : ""));
    auto& state = ctx_.states[d.name];
    for (auto& f : ds.flows) {
      const FlowTotals& tot = totals_[f.flow->name];
      o.native->rows_in += tot.rows_in;
      for (size_t i = 0; i < tot.violations.size() && i < d.expectations.size(); ++i) {
        o.expectation_violations[d.expectations[i].name] += tot.violations[i];
      }
      if (!error.ok()) {
        if (failed_flow.empty() || failed_flow == f.flow->name) {
          EmitFlow(ctx_, RunEvent::Kind::kFlowFailed, *f.flow, error.message());
        } else {
          EmitFlow(ctx_, RunEvent::Kind::kFlowSkipped, *f.flow, "run stopped: another flow failed");
        }
        continue;
      }
      RunEvent e;
      e.kind = RunEvent::Kind::kFlowFinished;
      e.flow = f.flow->name;
      e.dataset = d.name;
      e.rows_in = tot.rows_in;
      e.rows_out = tot.rows_out;
      e.elapsed_ms = SteadyMs() - started_ms_;
      e.message = how + (ds.version.empty() ? "" : ", committed " + ds.version);
      if (f.incremental) {
        e.message += ", " + std::string(engine::stream::Name(f.incremental->plan.op)) +
                     (f.incremental->pane_blocks.empty() ? "" : " (window panes)") +
                     " operator, state " + std::to_string(f.incremental->StateRows()) +
                     " rows / " + std::to_string(f.incremental->StateBytes()) + " bytes";
      }
      ctx_.Emit(e);
    }
    if (!error.ok()) {
      o.reason = error.message() + (ds.version.empty() ? ""
                                                       : " (" + ds.version +
                                                             " from the last committed "
                                                             "trigger stays current)");
      state.available = false;
      state.blocked_reason = "upstream '" + d.name + "' failed";
    } else {
      // What the loop did not keep in memory (rows only incremental flows
      // read, late rows) is read after the loop from the committed version.
      if (!ds.sink && !ds.version.empty()) {
        auto current = ctx_.store->Current(d.name);
        if (current.ok() && *current) {
          arrow::Status bound = ctx_.catalog->BindStored(
              d.name, ctx_.store->layout().VersionGlob(d.name, (**current).version));
          if (!bound.ok()) ctx_.notes.push_back("dataset '" + d.name + "': " + bound.message());
        }
      }
      o.native->version = ds.version;
      o.rows_written = ds.rows;  // what the dataset holds now
      state.available = ds.schema != nullptr;
      state.stamp = ds.stamp;
      if (!state.available) state.blocked_reason = "upstream '" + d.name + "' has no rows yet";
    }
    summary_->datasets.push_back(std::move(o));
  }
}

}  // namespace

void RunStreams(RunContext& ctx, const std::vector<const Dataset*>& datasets, RunSummary* summary) {
  StreamLoop loop(ctx, datasets, summary);
  loop.Run();
}

}  // namespace thund::native
