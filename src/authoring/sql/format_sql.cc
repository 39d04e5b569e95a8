// FormatSql: IR -> SQL text in thund's dialect. Writes SDP SQL wherever SDP
// can say it and the documented extensions (WITH options, SQL '...' bodies,
// METADATA, CREATE PIPELINE / SINK) only where the IR needs them, so that
// ParseSql(FormatSql(p)) == p for every pipeline.
#include <algorithm>
#include <cctype>

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include "authoring/sql/sql_internal.h"
#include "thund/sql_pipeline.h"
#include "thund/type_names.h"

namespace thund {
namespace {

using sqlp::Literal;
using sqlp::QuoteIdent;
using sqlp::QuoteName;

const std::vector<std::string_view> kCdcWords = {"keys",    "ignore", "apply", "sequence",
                                                 "columns", "stored", "track"};

const char* KindSql(DatasetKind k) {
  switch (k) {
    case DatasetKind::kTable:
      return "TABLE";
    case DatasetKind::kStreamingTable:
      return "STREAMING TABLE";
    case DatasetKind::kMaterializedView:
      return "MATERIALIZED VIEW";
    case DatasetKind::kView:
      return "VIEW";
    case DatasetKind::kTemporaryView:
      return "TEMPORARY VIEW";
    case DatasetKind::kSink:
      return "SINK";
  }
  return "TABLE";
}

// A SQL body written verbatim reads back as the same SQL body.
bool SafeBody(const std::string& sql) {
  if (!sqlp::VerbatimSafe(sql)) return false;
  sqlp::BodyResult r = sqlp::AnalyzeBody(sql);
  return !r.problem && !r.info.source;
}

// What the written body will imply when read back.
std::optional<StreamingSpec> ImpliedFor(const Flow& f, bool verbatim) {
  if (!verbatim || f.sql.empty()) return std::nullopt;
  return sqlp::ImpliedStreaming(sqlp::AnalyzeBody(f.sql).info);
}

// A source read as a whole query: SELECT * FROM STREAM read_x(...) for the
// streaming sources, SOURCE read_files(...) for a batch file source (a plain
// SELECT * FROM read_files(...) is a SQL flow).
std::string SourceQuery(const SourceSpec& s) {
  return (IsStreamingSource(s) ? "SELECT * FROM " : "SOURCE ") + sqlp::FormatSourceCall(s);
}

std::string Escaped(const Flow& f) {
  std::string out = "SQL " + Literal(f.sql);
  if (f.source) out += " WITH SOURCE " + sqlp::FormatSourceCall(*f.source);
  return out;
}

// The query after AS / BY NAME, and whether it was written verbatim.
std::string BodyText(const Flow& f, bool* verbatim) {
  *verbatim = false;
  if (f.source && f.sql.empty()) return SourceQuery(*f.source);
  if (!f.source && SafeBody(f.sql)) {
    *verbatim = true;
    return f.sql;
  }
  return Escaped(f);
}

std::string TriggerText(const Trigger& t) {
  if (t.kind == TriggerKind::kProcessingTime) {
    return "processing_time(" + sqlp::DurationText(t.interval_ms) + ")";
  }
  return Name(t.kind);
}

std::string Dur(int64_t ms) { return Literal(sqlp::DurationText(ms)); }

// WITH entries that turn `base` (what the body implies) into `s`.
void StreamingOptions(const std::optional<StreamingSpec>& s,
                      const std::optional<StreamingSpec>& base, std::vector<std::string>* out) {
  if (!s) {
    if (base) out->push_back("streaming = false");
    return;
  }
  const size_t before = out->size();
  const StreamingSpec b = base.value_or(StreamingSpec{});
  if (!(s->trigger == b.trigger)) out->push_back("trigger = " + Literal(TriggerText(s->trigger)));
  if (s->output_mode != b.output_mode)
    out->push_back(std::string("output_mode = ") + Literal(Name(s->output_mode)));
  // A body never implies a mode or late_rows: write them when set.
  if (s->mode) out->push_back(std::string("mode = ") + Literal(Name(*s->mode)));
  if (!s->watermark) {
    if (b.watermark) out->push_back("watermark = NONE");
  } else {
    Watermark bw;
    if (!b.watermark || b.watermark->event_time_column != s->watermark->event_time_column) {
      out->push_back("watermark = " + Literal(s->watermark->event_time_column));
    }
    if (b.watermark) bw = *b.watermark;
    if (s->watermark->allowed_lateness_ms != bw.allowed_lateness_ms) {
      out->push_back("allowed_lateness = " + Dur(s->watermark->allowed_lateness_ms));
    }
    if (s->watermark->idle_timeout_ms != bw.idle_timeout_ms) {
      out->push_back(s->watermark->idle_timeout_ms
                         ? "idle_timeout = " + Dur(*s->watermark->idle_timeout_ms)
                         : "idle_timeout = NONE");
    }
  }
  if (!s->window) {
    if (b.window) out->push_back("window = NONE");
  } else {
    const WindowSpec& w = *s->window;
    WindowSpec bw{w.kind, "", 0, 0, 0};
    if (b.window) bw = *b.window;
    if (!b.window || bw.kind != w.kind)
      out->push_back(std::string("window = ") + Literal(Name(w.kind)));
    if (bw.time_column != w.time_column)
      out->push_back("window_column = " + Literal(w.time_column));
    if (bw.size_ms != w.size_ms) out->push_back("window_size = " + Dur(w.size_ms));
    if (bw.slide_ms != w.slide_ms) out->push_back("window_slide = " + Dur(w.slide_ms));
    if (bw.gap_ms != w.gap_ms) out->push_back("window_gap = " + Dur(w.gap_ms));
  }
  if (!s->late_rows.empty()) out->push_back("late_rows = " + Literal(s->late_rows));
  if (out->size() == before && !base) out->push_back("streaming = true");
}

void DatasetOptions(const Dataset& d, std::vector<std::string>* out) {
  if (d.materialization != Materialization::kFull) {
    out->push_back(std::string("materialization = ") + Literal(Name(d.materialization)));
  }
  if (d.storage.mode) out->push_back("write_mode = " + Literal(Name(*d.storage.mode)));
  auto names = [](const std::vector<std::string>& keys) {
    std::string list;
    for (const auto& key : keys) list += (list.empty() ? "" : ", ") + QuoteIdent(key);
    return "(" + list + ")";
  };
  if (!d.storage.merge_keys.empty()) {
    out->push_back("merge_keys = " + names(d.storage.merge_keys));
  }
  const KeyedWrite& k = d.keyed_write;
  if (!k.keys.empty()) out->push_back("keyed_write.keys = " + names(k.keys));
  const KeyedWriteTuning& t = k.tuning;
  if (t.buckets) out->push_back("keyed_write.buckets = " + std::to_string(t.buckets));
  if (t.threads) out->push_back("keyed_write.threads = " + std::to_string(t.threads));
  if (t.batch_size) out->push_back("keyed_write.batch_size = " + std::to_string(t.batch_size));
  if (k.duplicates != DuplicateKeys::kFirst) {
    out->push_back("keyed_write.duplicates = " + Literal(Name(k.duplicates)));
  }
  if (k.null_keys != NullKeys::kError) {
    out->push_back("keyed_write.null_keys = " + Literal(Name(k.null_keys)));
  }
  if (k.key_match != KeyMatch::kExact) {
    out->push_back("keyed_write.key_match = " + Literal(Name(k.key_match)));
  }
  for (auto [on, name] : {std::pair{t.settle, "settle"}, std::pair{t.passthrough, "passthrough"},
                          std::pair{t.join, "join"}, std::pair{t.direct_io, "direct_io"}}) {
    if (!on) out->push_back(std::string("keyed_write.") + name + " = false");
  }
  if (t.key_index != KeyIndex::kRows) {
    out->push_back("keyed_write.key_index = " + Literal(Name(t.key_index)));
  }
  if (!t.memory_pool) out->push_back("keyed_write.memory_pool = false");
  if (!t.huge_pages) out->push_back("keyed_write.huge_pages = false");
  if (t.plain) out->push_back("keyed_write.plain = true");
  if (d.schema.declared()) {
    const auto& md = d.schema.arrow->metadata();
    if (md && md->size() > 0) {
      std::string map;
      for (int64_t i = 0; i < md->size(); ++i) {
        map += (i ? ", " : "") + Literal(md->key(i)) + " = " + Literal(md->value(i));
      }
      out->push_back("schema_metadata = (" + map + ")");
    }
  }
}

std::string PropertyList(const StringMap& m) {
  std::string out;
  for (const auto& [k, v] : m) out += (out.empty() ? "" : ", ") + Literal(k) + " = " + Literal(v);
  return "(" + out + ")";
}

std::string Predicate(const std::string& p) {
  if (sqlp::VerbatimSafe(p)) return "(" + p + ")";
  return "SQL " + Literal(p);
}

std::string ColumnList(const Dataset& d) {
  std::vector<std::string> items;
  if (d.schema.declared()) {
    for (const auto& f : d.schema.arrow->fields()) {
      std::string col = "  " + QuoteIdent(f->name()) + " " + FormatTypeName(*f->type());
      if (!f->nullable()) col += " NOT NULL";
      std::string meta;
      if (const auto& md = f->metadata()) {
        for (int64_t i = 0; i < md->size(); ++i) {
          if (md->key(i) == "comment") {
            col += " COMMENT " + Literal(md->value(i));
          } else {
            meta +=
                (meta.empty() ? "" : ", ") + Literal(md->key(i)) + " = " + Literal(md->value(i));
          }
        }
      }
      if (!meta.empty()) col += " METADATA (" + meta + ")";
      items.push_back(col);
    }
  }
  for (const auto& e : d.expectations) {
    std::string c = "  CONSTRAINT " + QuoteIdent(e.name) + " EXPECT " + Predicate(e.predicate);
    if (e.action == ExpectationAction::kDrop) c += " ON VIOLATION DROP ROW";
    if (e.action == ExpectationAction::kFail) c += " ON VIOLATION FAIL UPDATE";
    items.push_back(c);
  }
  if (items.empty()) return d.schema.declared() ? " ()" : "";
  std::string out = " (\n";
  for (size_t i = 0; i < items.size(); ++i) out += items[i] + (i + 1 < items.size() ? ",\n" : "\n");
  return out + ")";
}

std::string WithClause(const std::vector<std::string>& opts) {
  if (opts.empty()) return "";
  std::string out = "\nWITH (";
  for (size_t i = 0; i < opts.size(); ++i) out += (i ? ", " : "") + opts[i];
  return out + ")";
}

bool Mergeable(const Dataset& d, const Flow& f) {
  return f.name == d.name && f.target == d.name && !f.once && f.comment.empty() && !f.cdc &&
         d.kind != DatasetKind::kSink;
}

std::string DatasetStatement(const Dataset& d, const Flow* f) {
  std::string name = d.kind == DatasetKind::kTemporaryView ? QuoteIdent(d.name) : QuoteName(d.name);
  std::string out = std::string("CREATE ") + KindSql(d.kind) + " " + name + ColumnList(d);
  if (d.storage.format) out += "\nUSING " + QuoteName(Name(*d.storage.format));
  if (!d.storage.options.empty()) out += "\nOPTIONS " + PropertyList(d.storage.options);
  if (!d.storage.partition_by.empty()) {
    std::string cols;
    for (const auto& c : d.storage.partition_by) cols += (cols.empty() ? "" : ", ") + QuoteIdent(c);
    out += "\nPARTITIONED BY (" + cols + ")";
  }
  if (!d.storage.location.empty()) out += "\nLOCATION " + Literal(d.storage.location);
  if (!d.comment.empty()) out += "\nCOMMENT " + Literal(d.comment);
  if (!d.properties.empty()) out += "\nTBLPROPERTIES " + PropertyList(d.properties);
  std::vector<std::string> opts;
  DatasetOptions(d, &opts);
  if (d.schema.declared() && d.schema.arrow->num_fields() == 0 && !d.expectations.empty()) {
    opts.push_back("empty_schema = true");
  }
  std::string body;
  if (f) {
    bool verbatim = false;
    body = BodyText(*f, &verbatim);
    StreamingOptions(f->streaming, ImpliedFor(*f, verbatim), &opts);
  }
  out += WithClause(opts);
  if (f) out += "\nAS " + body;
  return out + ";\n";
}

std::string CdcSource(const Flow& f, bool* verbatim) {
  *verbatim = false;
  if (f.source && f.sql.empty()) {
    return (IsStreamingSource(*f.source) ? "" : "SOURCE ") + sqlp::FormatSourceCall(*f.source);
  }
  if (!f.source && SafeBody(f.sql)) {
    const std::string prefix = "SELECT * FROM ";
    if (f.sql.rfind(prefix, 0) == 0) {
      std::string rest = f.sql.substr(prefix.size());
      if (sqlp::VerbatimSafe(rest, kCdcWords) && !sql::IsOp(sql::Lex(rest).tokens.front(), "(")) {
        *verbatim = true;
        return rest;
      }
    }
    *verbatim = true;
    return "(" + f.sql + ")";
  }
  return Escaped(f);
}

std::string FlowStatement(const Flow& f) {
  std::string out = "CREATE FLOW " + QuoteIdent(f.name);
  if (!f.comment.empty()) out += "\nCOMMENT " + Literal(f.comment);
  bool verbatim = false;
  std::string op;
  if (f.cdc) {
    const Cdc& c = *f.cdc;
    op = std::string("AUTO CDC INTO ") + (f.once ? "ONCE " : "") + QuoteName(f.target) + "\nFROM " +
         CdcSource(f, &verbatim);
    std::string keys;
    for (const auto& k : c.keys) keys += (keys.empty() ? "" : ", ") + QuoteIdent(k);
    op += "\nKEYS (" + keys + ")";
    if (!c.apply_as_deletes.empty()) {
      op += "\nAPPLY AS DELETE WHEN " + (sqlp::VerbatimSafe(c.apply_as_deletes, kCdcWords)
                                             ? c.apply_as_deletes
                                             : "SQL " + Literal(c.apply_as_deletes));
    }
    if (!c.sequence_by.empty()) op += "\nSEQUENCE BY " + QuoteIdent(c.sequence_by);
    if (!c.except_columns.empty()) {
      std::string cols;
      for (const auto& k : c.except_columns) cols += (cols.empty() ? "" : ", ") + QuoteIdent(k);
      op += "\nCOLUMNS * EXCEPT (" + cols + ")";
    }
    auto list = [](const std::vector<std::string>& names) {
      std::string cols;
      for (const auto& k : names) cols += (cols.empty() ? "" : ", ") + QuoteIdent(k);
      return "(" + cols + ")";
    };
    if (!c.columns.empty()) op += "\nCOLUMNS " + list(c.columns);
    if (c.scd_type != 1) op += "\nSTORED AS SCD TYPE " + std::to_string(c.scd_type);
    if (!c.track_history.empty()) op += "\nTRACK HISTORY ON " + list(c.track_history);
    if (!c.track_history_except.empty()) {
      op += "\nTRACK HISTORY ON * EXCEPT " + list(c.track_history_except);
    }
  } else {
    op = std::string("INSERT INTO ") + (f.once ? "ONCE " : "") + QuoteName(f.target) +
         " BY NAME\n" + BodyText(f, &verbatim);
  }
  std::vector<std::string> opts;
  std::optional<StreamingSpec> implied;
  if (verbatim) {
    std::string body = f.sql;
    implied = sqlp::ImpliedStreaming(sqlp::AnalyzeBody(body).info);
  }
  StreamingOptions(f.streaming, implied, &opts);
  out += WithClause(opts);
  return out + "\nAS " + op + ";\n";
}

}  // namespace

std::string FormatSql(const Pipeline& p) {
  std::string out;
  if (!p.name.empty() || !p.storage.empty()) {
    out += "CREATE PIPELINE " + QuoteIdent(p.name);
    if (!p.storage.empty()) out += " WITH (storage = " + Literal(p.storage) + ")";
    out += ";\n";
  }
  if (!p.catalog.empty()) out += "USE CATALOG " + QuoteIdent(p.catalog) + ";\n";
  if (!p.database.empty()) out += "USE SCHEMA " + QuoteIdent(p.database) + ";\n";
  for (const auto& [k, v] : p.configuration) {
    bool simple_key = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    }) && std::isalpha(static_cast<unsigned char>(k[0]));
    bool simple_value = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    }) && v.find("..") == std::string::npos;
    if (sql::EqualsIgnoreCase(k, "catalog")) simple_key = false;  // SET CATALOG is a statement
    std::string quoted = "`";
    for (char c : k) quoted += c == '`' ? std::string("``") : std::string(1, c);
    quoted += "`";
    out += "SET " + (simple_key ? k : quoted) + " = " + (simple_value ? v : Literal(v)) + ";\n";
  }
  // Statements in dataset order, each flow as early as the flow order allows;
  // `CREATE <kind> x AS ...` when dataset x's own flow comes next.
  size_t j = 0;
  std::vector<bool> done(p.flows.size(), false);
  for (const Dataset& d : p.datasets) {
    size_t own = p.flows.size();
    for (size_t k = j; k < p.flows.size(); ++k) {
      if (!done[k] && Mergeable(d, p.flows[k])) {
        own = k;
        break;
      }
    }
    if (!out.empty()) out += "\n";
    if (own == p.flows.size()) {
      out += DatasetStatement(d, nullptr);
      continue;
    }
    for (; j < own; ++j) {
      if (done[j]) continue;
      out += FlowStatement(p.flows[j]) + "\n";
      done[j] = true;
    }
    out += DatasetStatement(d, &p.flows[own]);
    done[own] = true;
    j = own + 1;
  }
  for (size_t k = 0; k < p.flows.size(); ++k) {
    if (done[k]) continue;
    if (!out.empty()) out += "\n";
    out += FlowStatement(p.flows[k]);
  }
  return out;
}

}  // namespace thund
