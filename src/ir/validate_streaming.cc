// Rules on streaming knobs: where they may appear, event-time columns against
// the declared schemas of what a flow reads, window / trigger / watermark values, and
// Spark's output-mode rule for aggregations.
//
// Decisions:
//  * streaming flows (streaming spec, CDC, streaming source) may target only
//    a streaming_table or a sink; table, materialized_view, view and
//    temporary_view are batch.
//  * watermark and window columns are checked against the declared schemas of
//    what the flow reads: its inputs, or its target for a source flow (a
//    windowed aggregation's output usually drops the event-time column).
//    A column is only reported missing when every such schema is declared.
#include <arrow/type.h>

#include "ir/validate_internal.h"
#include "thund/duration.h"
#include "thund/type_names.h"

namespace thund::internal {
namespace {

bool AcceptsStreaming(DatasetKind k) {
  return k == DatasetKind::kStreamingTable || k == DatasetKind::kSink;
}

bool IsTemporal(const arrow::DataType& t) {
  return t.id() == arrow::Type::TIMESTAMP || t.id() == arrow::Type::DATE32 ||
         t.id() == arrow::Type::DATE64;
}

std::vector<std::string> ColumnNames(const arrow::Schema& s) {
  std::vector<std::string> out;
  for (const auto& f : s.fields()) out.push_back(f->name());
  return out;
}

// The declared schemas of what flow `i` reads: its target for a source flow
// (source rows land there as they are), else its input datasets. `complete`
// is false when some input has no declared schema (then a missing column
// cannot be proven missing).
struct ReadSchemas {
  std::vector<const Dataset*> datasets;
  bool complete = true;
};

ReadSchemas SchemasRead(const ValidateContext& ctx, size_t i, const Dataset* target) {
  ReadSchemas out;
  const Flow& f = ctx.p.flows[i];
  if (f.source) {
    if (target && target->schema.declared()) out.datasets.push_back(target);
    else out.complete = false;
    return out;
  }
  for (const auto& in : ctx.flows[i].inputs) {
    const Dataset* d = in.qualified ? nullptr : ctx.Find(in.name);
    if (d && d->schema.declared()) out.datasets.push_back(d);
    else out.complete = false;
  }
  if (out.datasets.empty()) out.complete = false;
  return out;
}

// Event time is a column of the rows a flow READS (a windowed aggregation's
// output usually drops it), so it is checked against the declared schemas of
// the flow's inputs, or of its target for a source flow. `what` is "watermark"
// or "window"; the code prefix is the same.
void CheckTimeColumn(const ValidateContext& ctx, size_t i, const Dataset* target,
                     const std::string& what, const std::string& column, const std::string& field,
                     Diagnostics* out) {
  const Pipeline& p = ctx.p;
  if (column.empty()) {
    out->push_back(FlowDiag(p, i, Severity::kError, what + "-column", field,
                            "the " + what + " has no event-time column",
                            "name the timestamp column that carries event time"));
    return;
  }
  ReadSchemas read = SchemasRead(ctx, i, target);
  for (const Dataset* d : read.datasets) {
    auto f = d->schema.arrow->GetFieldByName(column);
    if (!f) continue;
    if (!IsTemporal(*f->type())) {
      out->push_back(FlowDiag(p, i, Severity::kError, what + "-column-type", field,
                              what + " column " + Quote(column) + " of " + Quote(d->name) +
                                  " has type " + FormatTypeName(*f->type()) +
                                  "; event time must be a timestamp or date",
                              "declare " + Quote(column) +
                                  " as timestamp (cast it in the query if the source has "
                                  "text or epoch numbers), or pick another column"));
    }
    return;
  }
  if (!read.complete) return;  // it may be in a relation whose schema is not declared
  std::vector<std::string> names, where;
  for (const Dataset* d : read.datasets) {
    where.push_back(Quote(d->name));
    for (const auto& n : ColumnNames(*d->schema.arrow)) names.push_back(n);
  }
  out->push_back(FlowDiag(p, i, Severity::kError, what + "-column", field,
                          what + " column " + Quote(column) + " is not a column of what the flow reads (" +
                              JoinNames(where, ", ") + "; columns: " + JoinNames(names, ", ") + ")" +
                              DidYouMean(column, names),
                          "name the event-time column of the flow's input, or add " + Quote(column) +
                              " to the input's schema"));
}

void CheckWindow(const Pipeline& p, size_t i, const WindowSpec& w, Diagnostics* out) {
  auto err = [&](const char* code, const std::string& field, std::string msg, std::string hint) {
    out->push_back(FlowDiag(p, i, Severity::kError, code, "streaming.window." + field,
                            std::move(msg), std::move(hint)));
  };
  const std::string kind = Name(w.kind);
  if (w.kind != WindowKind::kSession && w.size_ms <= 0) {
    err("window-size", "size",
        kind + " window size must be positive, got " + FormatDuration(w.size_ms),
        "set the window size, e.g. 1m");
  }
  if (w.kind == WindowKind::kHopping) {
    if (w.slide_ms == 0) {
      err("window-slide", "slide", "hopping window has no slide",
          "set slide (how often a window starts), at most the size; or use a tumbling window");
    } else if (w.slide_ms < 0) {
      err("window-slide", "slide",
          "hopping window slide must be positive, got " + FormatDuration(w.slide_ms),
          "set a positive slide, at most the size");
    } else if (w.size_ms > 0 && w.slide_ms > w.size_ms) {
      err("window-slide", "slide",
          "hopping window slide " + FormatDuration(w.slide_ms) + " is larger than its size " +
              FormatDuration(w.size_ms) + ", so rows between windows would be dropped",
          "make the slide at most the size");
    }
  } else if (w.slide_ms != 0) {
    err("window-field", "slide",
        "slide is set on a " + kind +
            " window; only hopping windows "
            "slide",
        "remove slide, or make the window hopping");
  }
  if (w.kind == WindowKind::kSession) {
    if (w.gap_ms <= 0) {
      err("window-gap", "gap",
          "session window gap must be positive, got " + FormatDuration(w.gap_ms),
          "set the inactivity gap that closes a session, e.g. 30s");
    }
    if (w.size_ms != 0) {
      err("window-field", "size", "size is set on a session window; sessions end after a gap",
          "remove size and set gap");
    }
  } else if (w.gap_ms != 0) {
    err("window-field", "gap",
        "gap is set on a " + kind +
            " window; only session windows have "
            "a gap",
        "remove gap, or make the window a session window");
  }
}

void CheckSpec(const ValidateContext& ctx, size_t i, const StreamingSpec& s, const Dataset* target,
               Diagnostics* out) {
  const Pipeline& p = ctx.p;
  if (s.trigger.kind == TriggerKind::kProcessingTime && s.trigger.interval_ms <= 0) {
    out->push_back(FlowDiag(p, i, Severity::kError, "trigger-interval", "streaming.trigger",
                            "processing_time trigger interval must be positive, got " +
                                FormatDuration(s.trigger.interval_ms),
                            "set an interval such as processing_time(10s)"));
  } else if (s.trigger.kind != TriggerKind::kProcessingTime && s.trigger.interval_ms != 0) {
    out->push_back(FlowDiag(
        p, i, Severity::kError, "trigger-interval", "streaming.trigger",
        std::string("an interval is set on a ") + Name(s.trigger.kind) + " trigger, which has none",
        "remove the interval, or use a processing_time trigger"));
  }
  if (s.watermark) {
    const Watermark& w = *s.watermark;
    CheckTimeColumn(ctx, i, target, "watermark", w.event_time_column,
                    "streaming.watermark.event_time_column", out);
    if (w.allowed_lateness_ms < 0) {
      out->push_back(FlowDiag(
          p, i, Severity::kError, "watermark-lateness", "streaming.watermark.allowed_lateness",
          "allowed lateness must not be negative, got " + FormatDuration(w.allowed_lateness_ms),
          "use 0 (no late rows accepted) or a positive delay such as 10s"));
    }
    if (w.idle_timeout_ms && *w.idle_timeout_ms <= 0) {
      out->push_back(FlowDiag(
          p, i, Severity::kError, "watermark-idle-timeout", "streaming.watermark.idle_timeout",
          "idle timeout must be positive, got " + FormatDuration(*w.idle_timeout_ms),
          "set a positive timeout such as 1m, or remove it"));
    }
  }
  if (s.window) {
    CheckTimeColumn(ctx, i, target, "window", s.window->time_column, "streaming.window.time_column",
                    out);
    CheckWindow(p, i, *s.window, out);
  }
}

// A stream view keeps none of its rows: only the streaming flows of streaming
// tables and sinks, which take each trigger's new rows, can read it.
void CheckStreamViewReads(const ValidateContext& ctx, size_t i, const Dataset* target,
                          Diagnostics* out) {
  const Pipeline& p = ctx.p;
  const Flow& f = p.flows[i];
  for (const auto& in : ctx.flows[i].inputs) {
    const Dataset* d = in.qualified ? nullptr : ctx.Find(in.name);
    if (!d || !IsStreamView(p, *d)) continue;
    const bool ok = target && AcceptsStreaming(target->kind) && !f.once &&
                    IsStreamingFlowGiven(p, f, ctx.flows[i].reads_stream);
    if (ok) continue;
    Diagnostic diag = FlowDiag(
        p, i, Severity::kError, "stream-view-reader", "sql",
        "flow " + Quote(f.name) + " reads " + Quote(d->name) +
            ", a temporary view over a streaming source, which keeps none of its rows; "
            "only streaming flows into a streaming table or a sink can read it",
        "declare " + Quote(d->name) + " as a streaming table to keep its rows, or make " +
            Quote(f.target) + " a streaming table that reads STREAM(" + d->name + ")");
    if (f.sql_location.known() && in.line > 0) diag.location = f.SqlPosition(in.line, in.column);
    out->push_back(std::move(diag));
  }
}

}  // namespace

void CheckStreaming(const ValidateContext& ctx, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  for (size_t i = 0; i < p.flows.size(); ++i) {
    const Flow& f = p.flows[i];
    const Dataset* target = ctx.Find(f.target);
    std::vector<std::string> knobs;
    std::string field;
    if (f.streaming) {
      knobs.push_back("streaming settings");
      field = "streaming";
    }
    if (f.cdc) {
      knobs.push_back("CDC");
      if (field.empty()) field = "cdc";
    }
    if (f.source && IsStreamingSource(*f.source)) {
      knobs.push_back("a streaming " + SourceKindName(*f.source) + " source");
      if (field.empty()) field = "source";
    }
    const bool stream_view = target && IsStreamView(p, *target) && !f.cdc;
    if (target && !knobs.empty() && !AcceptsStreaming(target->kind) && !stream_view) {
      out->push_back(FlowDiag(
          p, i, Severity::kError, "streaming-on-batch-target", field,
          "flow " + Quote(f.name) + " has " + JoinNames(knobs, " and ") + ", but its target " +
              Quote(f.target) + " is a " + Name(target->kind) + ", which is computed in batch",
          "declare the target as a streaming_table (or a sink), or remove the streaming "
          "settings to compute it in batch"));
    }
    if (f.streaming) CheckSpec(ctx, i, *f.streaming, target, out);
    CheckStreamViewReads(ctx, i, target, out);

    // Spark's rule: an aggregation emitted in append mode needs a window and
    // a watermark, or no row would ever be final.
    const bool streaming_target = target && AcceptsStreaming(target->kind);
    if (streaming_target && IsStreamingFlowGiven(p, f, ctx.flows[i].reads_stream) && !f.cdc &&
        ctx.flows[i].has_sql &&
        ctx.flows[i].parse_status.ok() && ctx.flows[i].aggregates) {
      StreamingSpec s = f.streaming.value_or(StreamingSpec{});
      const bool windowed = s.window || ctx.flows[i].windowed;
      if (s.output_mode == OutputMode::kAppend && !(windowed && s.watermark)) {
        out->push_back(FlowDiag(
            p, i, Severity::kError, "append-aggregation", "streaming.output_mode",
            "flow " + Quote(f.name) + " aggregates in append output mode without " +
                (windowed      ? "a watermark"
                 : s.watermark ? "a window"
                               : "a window and a watermark") +
                ", so no aggregate row is ever final",
            "add a window and a watermark (each window is emitted once the watermark passes its "
            "end), or set output_mode to update or complete"));
      }
    }
  }
}

}  // namespace thund::internal
