// `streaming:` — mode, trigger, output_mode, watermark, window, late_rows.
#include "authoring/file/decode.h"
#include "authoring/file/did_you_mean.h"

namespace thund::file {

const std::vector<std::string_view> kStreamingKeys = {"mode",      "trigger", "output_mode",
                                                      "watermark", "window",  "late_rows",
                                                      "state_ttl"};
const std::vector<std::string_view> kWatermarkKeys = {"column", "allowed_lateness", "idle_timeout"};
const std::vector<std::string_view> kWindowKeys = {"kind", "column", "size", "slide", "gap"};

namespace {

const std::vector<std::string_view> kTriggerKeys = {"processing_time"};
constexpr const char* kTriggerForms = "allowed: once, available_now, {processing_time: <duration>}";

// `trigger:` is `once`, `available_now`, `{processing_time: 10s}`, or a bare
// duration (shorthand for processing_time).
std::optional<Trigger> DecodeTrigger(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                                     const std::string& path) {
  if (node.IsMap()) {
    MapView m(r, node, at, path, "trigger", kTriggerKeys);
    const Entry* e = m.Require("processing_time");
    if (e == nullptr) return std::nullopt;
    auto ms = ReadDuration(r, e->value, e->mark(), m.PathOf("processing_time"));
    if (!ms) return std::nullopt;
    return Trigger::ProcessingTime(*ms);
  }
  auto text =
      ScalarText(r, node, at, path, "a trigger (once, available_now or {processing_time: 10s})");
  if (!text) return std::nullopt;
  if (*text == Name(TriggerKind::kOnce)) return Trigger::Once();
  if (*text == Name(TriggerKind::kAvailableNow)) return Trigger::AvailableNow();
  if (*text == Name(TriggerKind::kProcessingTime)) {
    r.Error(at, path, "bad-value", "a processing_time trigger needs an interval",
            "write {processing_time: 10s}");
    return std::nullopt;
  }
  if (!text->empty() &&
      (std::isdigit(static_cast<unsigned char>(text->front())) || text->front() == '-')) {
    auto ms = ReadDuration(r, node, at, path);
    if (!ms) return std::nullopt;
    return Trigger::ProcessingTime(*ms);
  }
  std::string hint = kTriggerForms;
  if (auto m = ClosestMatch(*text, {"once", "available_now", "processing_time"})) {
    hint = "did you mean '" + *m + "'? " + hint;
  }
  r.Error(at, path, "bad-enum", "unknown trigger '" + *text + "'", hint);
  return std::nullopt;
}

Watermark DecodeWatermark(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                          const std::string& path) {
  Watermark w;
  MapView m(r, node, at, path, "watermark", kWatermarkKeys);
  if (!m.ok()) return w;
  m.String("column", &w.event_time_column, /*required=*/true);
  m.Duration("allowed_lateness", &w.allowed_lateness_ms);
  m.OptDuration("idle_timeout", &w.idle_timeout_ms);
  return w;
}

WindowSpec DecodeWindow(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                        const std::string& path) {
  WindowSpec w;
  MapView m(r, node, at, path, "window", kWindowKeys);
  if (!m.ok()) return w;
  if (m.Require("kind") != nullptr) {
    m.Enum("kind", &w.kind, ParseWindowKind,
           {WindowKind::kTumbling, WindowKind::kHopping, WindowKind::kSession}, "window kind");
  }
  m.String("column", &w.time_column, /*required=*/true);
  m.Duration("size", &w.size_ms);
  m.Duration("slide", &w.slide_ms);
  m.Duration("gap", &w.gap_ms);
  return w;
}

}  // namespace

StreamingSpec DecodeStreaming(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                              const std::string& path) {
  StreamingSpec s;
  MapView m(r, node, at, path, "streaming", kStreamingKeys);
  if (!m.ok()) return s;
  m.Enum("mode", &s.mode, ParseStreamingMode,
         {StreamingMode::kRecompute, StreamingMode::kIncremental}, "streaming mode");
  if (const Entry* e = m.Find("trigger"); e && !e->value.IsNull()) {
    if (auto t = DecodeTrigger(r, e->value, e->mark(), m.PathOf("trigger"))) s.trigger = *t;
  }
  m.Enum("output_mode", &s.output_mode, ParseOutputMode,
         {OutputMode::kAppend, OutputMode::kUpdate, OutputMode::kComplete}, "output mode");
  if (const Entry* e = m.Find("watermark"); e && !e->value.IsNull()) {
    s.watermark = DecodeWatermark(r, e->value, e->mark(), m.PathOf("watermark"));
  }
  if (const Entry* e = m.Find("window"); e && !e->value.IsNull()) {
    s.window = DecodeWindow(r, e->value, e->mark(), m.PathOf("window"));
  }
  m.String("late_rows", &s.late_rows);
  m.OptDuration("state_ttl", &s.state_ttl_ms);
  return s;
}

}  // namespace thund::file
