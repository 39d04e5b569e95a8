// The flow half of the encoder: sources, streaming knobs, CDC.
#include "authoring/file/encode.h"

namespace thund::file {
namespace {

OutNode EncodeSource(const SourceSpec& spec) {
  OutNode m = OutNode::Map();
  m.Add("kind", OutNode::Str(SourceKindName(spec)));
  if (const auto* f = std::get_if<FileSource>(&spec)) {
    m.Add("path", OutNode::Str(f->path));
    if (f->format) m.Add("format", OutNode::Str(Name(*f->format)));
    if (!f->options.empty()) m.Add("options", EncodeStringMap(f->options));
  } else if (const auto* g = std::get_if<GeneratorSource>(&spec)) {
    const GeneratorSource def;
    if (g->kind != def.kind) m.Add("generator", OutNode::Str(Name(g->kind)));
    if (g->seed != def.seed) m.Add("seed", OutNode::UInt(g->seed));
    if (g->rows_per_batch != def.rows_per_batch)
      m.Add("rows_per_batch", OutNode::Int(g->rows_per_batch));
    if (g->total_rows != def.total_rows) m.Add("total_rows", OutNode::Int(g->total_rows));
    if (g->events_per_second != def.events_per_second) {
      m.Add("events_per_second", OutNode::Int(g->events_per_second));
    }
    if (g->out_of_orderness_ms != def.out_of_orderness_ms) {
      m.Add("out_of_orderness", EncodeDuration(g->out_of_orderness_ms));
    }
    if (!g->options.empty()) m.Add("options", EncodeStringMap(g->options));
  } else if (const auto* mem = std::get_if<MemorySource>(&spec)) {
    m.Add("name", OutNode::Str(mem->name));
  } else if (const auto* k = std::get_if<KafkaSource>(&spec)) {
    const KafkaSource def;
    m.Add("bootstrap_servers", OutNode::Str(k->bootstrap_servers));
    m.Add("topic", OutNode::Str(k->topic));
    if (k->format != def.format) m.Add("format", OutNode::Str(k->format));
    if (k->starting_offsets != def.starting_offsets) {
      m.Add("starting_offsets", OutNode::Str(Name(k->starting_offsets)));
    }
    if (!k->options.empty()) m.Add("options", EncodeStringMap(k->options));
  }
  return m;
}

OutNode EncodeStreaming(const StreamingSpec& s) {
  OutNode m = OutNode::Map();
  if (s.mode) m.Add("mode", OutNode::Str(Name(*s.mode)));
  if (s.trigger.kind == TriggerKind::kProcessingTime) {
    OutNode t = OutNode::Map(/*flow=*/true);
    t.Add("processing_time", EncodeDuration(s.trigger.interval_ms));
    m.Add("trigger", std::move(t));
  } else if (s.trigger.kind != TriggerKind::kAvailableNow) {
    m.Add("trigger", OutNode::Str(Name(s.trigger.kind)));
  }
  if (s.output_mode != OutputMode::kAppend) m.Add("output_mode", OutNode::Str(Name(s.output_mode)));
  if (s.watermark) {
    OutNode w = OutNode::Map(/*flow=*/true);
    w.Add("column", OutNode::Str(s.watermark->event_time_column));
    if (s.watermark->allowed_lateness_ms != 0) {
      w.Add("allowed_lateness", EncodeDuration(s.watermark->allowed_lateness_ms));
    }
    if (s.watermark->idle_timeout_ms)
      w.Add("idle_timeout", EncodeDuration(*s.watermark->idle_timeout_ms));
    m.Add("watermark", std::move(w));
  }
  if (s.window) {
    OutNode w = OutNode::Map(/*flow=*/true);
    w.Add("kind", OutNode::Str(Name(s.window->kind)));
    w.Add("column", OutNode::Str(s.window->time_column));
    if (s.window->size_ms != 0) w.Add("size", EncodeDuration(s.window->size_ms));
    if (s.window->slide_ms != 0) w.Add("slide", EncodeDuration(s.window->slide_ms));
    if (s.window->gap_ms != 0) w.Add("gap", EncodeDuration(s.window->gap_ms));
    m.Add("window", std::move(w));
  }
  if (!s.late_rows.empty()) m.Add("late_rows", OutNode::Str(s.late_rows));
  if (s.state_ttl_ms) m.Add("state_ttl", EncodeDuration(*s.state_ttl_ms));
  return m;
}

OutNode EncodeCdc(const Cdc& c) {
  OutNode m = OutNode::Map();
  if (!c.keys.empty()) m.Add("keys", OutNode::StrList(c.keys));
  if (!c.sequence_by.empty()) m.Add("sequence_by", OutNode::Str(c.sequence_by));
  if (!c.apply_as_deletes.empty()) m.Add("apply_as_deletes", OutNode::Str(c.apply_as_deletes));
  if (!c.except_columns.empty()) m.Add("except_columns", OutNode::StrList(c.except_columns));
  if (!c.columns.empty()) m.Add("columns", OutNode::StrList(c.columns));
  if (c.scd_type != 1) m.Add("scd_type", OutNode::Int(c.scd_type));
  if (!c.track_history.empty()) m.Add("track_history", OutNode::StrList(c.track_history));
  if (!c.track_history_except.empty()) {
    m.Add("track_history_except", OutNode::StrList(c.track_history_except));
  }
  return m;
}

}  // namespace

OutNode EncodeFlow(const Flow& f) {
  OutNode m = OutNode::Map();
  if (f.name != f.target) m.Add("name", OutNode::Str(f.name));  // the name defaults to the target
  m.Add("target", OutNode::Str(f.target));
  if (!f.comment.empty()) m.Add("comment", OutNode::Str(f.comment));
  if (f.source) m.Add("source", EncodeSource(*f.source));
  if (f.once) m.Add("once", OutNode::Bool(true));
  if (f.streaming) m.Add("streaming", EncodeStreaming(*f.streaming));
  if (f.cdc) m.Add("cdc", EncodeCdc(*f.cdc));
  if (!f.sql.empty()) m.Add("sql", OutNode::Str(f.sql));
  return m;
}

}  // namespace thund::file
