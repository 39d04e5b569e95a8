// WITH (...) options: thund's knobs that SDP SQL cannot say. One flat
// vocabulary for every CREATE statement (docs/sql.md, "WITH options"):
//   dataset: materialization, write_mode, merge_keys, keyed_write.keys / .buckets /
//            .threads / .batch_size / .duplicates / .null_keys / .key_match /
//            .settle / .passthrough / .join / .direct_io / .key_index /
//            .memory_pool / .huge_pages / .plain, schema_metadata
//   flow:    streaming, trigger, output_mode, mode, watermark,
//            allowed_lateness, idle_timeout, window, window_column,
//            window_size, window_slide, window_gap, late_rows, state_ttl
// Flow options start from what the query implies (WATERMARK, window()).
#include <algorithm>
#include <charconv>

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include "authoring/enum_values.h"
#include "authoring/sql/parser.h"

namespace thund::sqlp {
namespace {

constexpr std::string_view kDatasetKeys[] = {
    "materialization",        "write_mode",            "merge_keys",
    "keyed_write.keys",       "keyed_write.buckets",   "keyed_write.threads",
    "keyed_write.batch_size", "keyed_write.duplicates", "keyed_write.null_keys",
    "keyed_write.key_match",  "keyed_write.settle",    "keyed_write.passthrough",
    "keyed_write.join",       "keyed_write.direct_io", "keyed_write.key_index",
    "keyed_write.memory_pool", "keyed_write.huge_pages", "keyed_write.plain",
    "schema_metadata",        "empty_schema"};
constexpr std::string_view kFlowKeys[] = {"streaming",        "trigger",      "output_mode",
                                           "mode",             "watermark",    "allowed_lateness",
                                           "idle_timeout",     "window",       "window_column",
                                           "window_size",      "window_slide", "window_gap",
                                           "late_rows",        "state_ttl"};

bool In(std::string_view key, const auto& set) {
  for (auto k : set) {
    if (k == key) return true;
  }
  return false;
}

bool IsNone(const OptValue& v) {
  return v.kind == OptValue::kWord && sql::EqualsIgnoreCase(v.text, "none");
}

}  // namespace

bool StatementParser::ApplyOptions(const std::vector<Option>& options, thund::Dataset* d,
                                   thund::Flow* f, const ParsedBody* body) {
  std::optional<StreamingSpec> s;
  if (f && body) s = body->implied;
  bool streaming_off = false;
  std::string first_streaming_key;
  auto spec = [&](const Option& o) -> StreamingSpec* {
    if (!s) s = StreamingSpec{};
    if (first_streaming_key.empty()) first_streaming_key = o.key;
    return &*s;
  };
  auto scalar = [&](const Option& o, std::string* out) {
    if (o.value.kind == OptValue::kList || o.value.kind == OptValue::kMap) {
      return Fail(o.token, "option '" + o.key + "' takes a single value", "", "sql-option");
    }
    *out = o.value.text;
    return true;
  };
  auto duration = [&](const Option& o, int64_t* out) {
    std::string text;
    if (!scalar(o, &text)) return false;
    auto r = ParseDurationText(text);
    if (!r.ok())
      return Fail(o.token, "option '" + o.key + "': " + r.status().message(), "", "sql-option");
    *out = *r;
    return true;
  };
  // An enum-valued option (authoring/enum_values.h): bad text fails with the
  // code, message and hint `thund check` reports for it.
  auto value = [&](const Option& o, auto* out, auto parse) {
    std::string text;
    if (!scalar(o, &text)) return false;
    auto parsed = parse(text);
    if (const auto* bad = std::get_if<authoring::BadValue>(&parsed)) {
      return Fail(o.token, bad->message, bad->hint, bad->code);
    }
    *out = std::get<0>(std::move(parsed));
    return true;
  };
  auto integer = [&](const Option& o, int64_t* out) {
    std::string text;
    if (!scalar(o, &text)) return false;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
    if (ec != std::errc() || p != text.data() + text.size()) {
      return Fail(o.token, "option '" + o.key + "' takes a whole number, not '" + text + "'", "",
                  "sql-option");
    }
    return true;
  };

  auto boolean = [&](const Option& o, bool* out) {
    std::string text;
    if (!scalar(o, &text)) return false;
    const std::string lower = sql::ToLower(text);
    if (lower != "true" && lower != "false") {
      return Fail(o.token, "option '" + o.key + "' is true or false, not '" + text + "'", "",
                  "sql-option");
    }
    *out = lower == "true";
    return true;
  };

  // Pass 1 checks the keys and handles the switches that create or remove
  // parts of the spec; pass 2 the details.
  std::vector<std::string> seen;
  for (int pass = 1; pass <= 2; ++pass) {
    for (const Option& o : options) {
      const std::string key = sql::ToLower(o.key);
      const bool dataset_key = In(key, kDatasetKeys), flow_key = In(key, kFlowKeys);
      if (pass == 1) {
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
          return Fail(o.token, "option '" + o.key + "' is given twice", "", "sql-option");
        }
        seen.push_back(key);
        if (!dataset_key && !flow_key) {
          std::vector<std::string_view> all(std::begin(kDatasetKeys), std::end(kDatasetKeys));
          all.insert(all.end(), std::begin(kFlowKeys), std::end(kFlowKeys));
          std::string guess = DidYouMean(key, all);
          return Fail(o.token, "unknown option '" + o.key + "'",
                      guess.empty() ? "the options are listed in docs/sql.md (WITH options)"
                                    : "did you mean '" + guess + "'?",
                      "sql-option");
        }
        if (dataset_key && !d) {
          return Fail(o.token, "option '" + o.key + "' belongs to a dataset",
                      "set it in WITH (...) on the CREATE statement of " +
                          (f ? QuoteName(f->target) : std::string("the dataset")),
                      "sql-option");
        }
        if (flow_key && !f) {
          return Fail(
              o.token,
              "option '" + o.key + "' belongs to a flow, and this statement defines no query",
              "add AS <query>, or set it on the CREATE FLOW that feeds this dataset", "sql-option");
        }
      }
      if (dataset_key && pass == 1 && key == "empty_schema") {
        std::string text;
        if (!scalar(o, &text)) return false;
        if (text != "true" && text != "false")
          return Fail(o.token, "empty_schema is true or false", "", "sql-option");
        if (text == "true" && !d->schema.declared())
          d->schema.arrow = arrow::schema(arrow::FieldVector{});
        continue;
      }
      if (dataset_key && pass == 2) {
        std::string text;
        if (key == "materialization") {
          if (!scalar(o, &text)) return false;
          auto m = ParseMaterialization(sql::ToLower(text));
          if (!m)
            return Fail(o.token, "materialization is 'full' or 'incremental', not '" + text + "'",
                        "", "sql-option");
          d->materialization = *m;
        } else if (key == "write_mode") {
          if (!value(o, &d->storage.mode, authoring::ParseStorageMode)) return false;
        } else if (key == "keyed_write.keys" || key == "merge_keys") {
          std::vector<std::string>* keys =
              key == "merge_keys" ? &d->storage.merge_keys : &d->keyed_write.keys;
          if (o.value.kind == OptValue::kList) {
            *keys = o.value.list;
          } else {
            if (!scalar(o, &text)) return false;
            *keys = {text};
          }
        } else if (key == "keyed_write.buckets") {
          if (!integer(o, &d->keyed_write.tuning.buckets)) return false;
        } else if (key == "keyed_write.threads") {
          if (!integer(o, &d->keyed_write.tuning.threads)) return false;
        } else if (key == "keyed_write.batch_size") {
          if (!integer(o, &d->keyed_write.tuning.batch_size)) return false;
        } else if (key == "keyed_write.duplicates") {
          if (!value(o, &d->keyed_write.duplicates, authoring::ParseKeyedDuplicates)) return false;
        } else if (key == "keyed_write.null_keys") {
          if (!value(o, &d->keyed_write.null_keys, authoring::ParseKeyedNullKeys)) return false;
        } else if (key == "keyed_write.key_match") {
          if (!value(o, &d->keyed_write.key_match, authoring::ParseKeyedKeyMatch)) return false;
        } else if (key == "keyed_write.key_index") {
          if (!value(o, &d->keyed_write.tuning.key_index, authoring::ParseKeyedKeyIndex)) {
            return false;
          }
        } else if (key.starts_with("keyed_write.")) {  // the boolean switches, all left
          KeyedWriteTuning& t = d->keyed_write.tuning;
          bool* flag = key == "keyed_write.settle"        ? &t.settle
                       : key == "keyed_write.passthrough" ? &t.passthrough
                       : key == "keyed_write.join"        ? &t.join
                       : key == "keyed_write.direct_io"   ? &t.direct_io
                       : key == "keyed_write.memory_pool" ? &t.memory_pool
                       : key == "keyed_write.huge_pages"  ? &t.huge_pages
                                                          : &t.plain;
          if (!boolean(o, flag)) return false;
        } else if (key == "schema_metadata") {
          if (o.value.kind != OptValue::kMap) {
            return Fail(o.token, "schema_metadata takes a map: schema_metadata = ('key' = 'value')",
                        "", "sql-option");
          }
          if (!d->schema.declared()) {
            return Fail(o.token, "schema_metadata needs a column list on the statement", "",
                        "sql-option");
          }
          auto md = std::make_shared<arrow::KeyValueMetadata>();
          for (const auto& [k, v] : o.value.map) md->Append(k, v);
          d->schema.arrow = d->schema.arrow->WithMetadata(md);
        }
        continue;
      }
      if (!flow_key) continue;
      if (pass == 1) {
        if (key == "streaming") {
          std::string text;
          if (!scalar(o, &text)) return false;
          if (text == "true") {
            spec(o);
          } else if (text == "false") {
            s.reset();
            streaming_off = true;
          } else {
            return Fail(o.token, "streaming is true or false", "", "sql-option");
          }
        } else if (key == "watermark") {
          StreamingSpec* sp = spec(o);
          if (IsNone(o.value)) {
            sp->watermark.reset();
          } else {
            std::string col;
            if (!scalar(o, &col)) return false;
            if (!sp->watermark) sp->watermark = Watermark{};
            sp->watermark->event_time_column = col;
          }
        } else if (key == "window") {
          StreamingSpec* sp = spec(o);
          if (IsNone(o.value)) {
            sp->window.reset();
          } else {
            std::string kind;
            if (!scalar(o, &kind)) return false;
            auto k = ParseWindowKind(sql::ToLower(kind));
            if (!k) {
              return Fail(o.token,
                          "window is 'tumbling', 'hopping', 'session' or NONE, not '" + kind + "'",
                          "", "sql-option");
            }
            if (!sp->window) sp->window = WindowSpec{*k, "", 0, 0, 0};
            sp->window->kind = *k;
          }
        }
        continue;
      }
      if (key == "streaming" || key == "watermark" || key == "window") continue;
      StreamingSpec* sp = spec(o);
      std::string text;
      if (key == "trigger") {
        if (!scalar(o, &text)) return false;
        std::string v = sql::ToLower(text);
        if (v == "once") {
          sp->trigger = Trigger::Once();
        } else if (v == "available_now") {
          sp->trigger = Trigger::AvailableNow();
        } else {
          std::string interval = v;
          if (interval.rfind("processing_time", 0) == 0) {
            interval = interval.substr(15);
            while (!interval.empty() && (interval.front() == ' ' || interval.front() == '('))
              interval.erase(0, 1);
            if (!interval.empty() && interval.back() == ')') interval.pop_back();
          }
          auto ms = ParseDurationText(interval);
          if (!ms.ok()) {
            return Fail(o.token,
                        "trigger is 'once', 'available_now' or an interval such as '10s', not '" +
                            text + "'",
                        "", "sql-option");
          }
          sp->trigger = Trigger::ProcessingTime(*ms);
        }
      } else if (key == "output_mode") {
        if (!scalar(o, &text)) return false;
        auto m = ParseOutputMode(sql::ToLower(text));
        if (!m)
          return Fail(o.token,
                      "output_mode is 'append', 'update' or 'complete', not '" + text + "'", "",
                      "sql-option");
        sp->output_mode = *m;
      } else if (key == "mode") {
        if (!scalar(o, &text)) return false;
        auto m = ParseStreamingMode(sql::ToLower(text));
        if (!m)
          return Fail(o.token, "mode is 'recompute' or 'incremental', not '" + text + "'", "",
                      "sql-option");
        sp->mode = *m;
      } else if (key == "late_rows") {
        if (IsNone(o.value)) {
          sp->late_rows.clear();
        } else if (!scalar(o, &sp->late_rows)) {
          return false;
        }
      } else if (key == "state_ttl") {
        if (IsNone(o.value)) {
          sp->state_ttl_ms.reset();
          continue;
        }
        int64_t ms = 0;
        if (!duration(o, &ms)) return false;
        if (ms <= 0) return Fail(o.token, "state_ttl must be positive", "", "sql-option");
        sp->state_ttl_ms = ms;
      } else if (key == "allowed_lateness" || key == "idle_timeout") {
        if (!sp->watermark) {
          return Fail(o.token, "option '" + o.key + "' needs a watermark",
                      "add WATERMARK col DELAY OF ... to the query, or watermark = 'col'",
                      "sql-option");
        }
        if (key == "idle_timeout" && IsNone(o.value)) {
          sp->watermark->idle_timeout_ms.reset();
          continue;
        }
        int64_t ms = 0;
        if (!duration(o, &ms)) return false;
        if (key == "allowed_lateness")
          sp->watermark->allowed_lateness_ms = ms;
        else
          sp->watermark->idle_timeout_ms = ms;
      } else {  // window_*
        if (!sp->window) {
          return Fail(o.token, "option '" + o.key + "' needs a window",
                      "group by window(...) in the query, or set window = 'tumbling' / 'hopping' / "
                      "'session'",
                      "sql-option");
        }
        if (key == "window_column") {
          if (!scalar(o, &sp->window->time_column)) return false;
        } else {
          int64_t ms = 0;
          if (!duration(o, &ms)) return false;
          if (key == "window_size") sp->window->size_ms = ms;
          if (key == "window_slide") sp->window->slide_ms = ms;
          if (key == "window_gap") sp->window->gap_ms = ms;
        }
      }
    }
  }
  if (streaming_off && !first_streaming_key.empty()) {
    return Fail(options.front().token,
                "streaming = false cannot be combined with '" + first_streaming_key + "'", "",
                "sql-option");
  }
  if (f) f->streaming = s;
  return true;
}

}  // namespace thund::sqlp
