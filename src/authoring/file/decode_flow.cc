// Flows: target, SQL or source, once, streaming knobs, CDC.
#include "authoring/file/decode.h"

namespace thund::file {

const std::vector<std::string_view> kFlowKeys = {"name", "target",    "comment", "source",
                                                 "once", "streaming", "cdc",     "sql"};
const std::vector<std::string_view> kCdcKeys = {
    "keys",     "sequence_by",   "apply_as_deletes",    "except_columns",
    "columns",  "scd_type",      "track_history",       "track_history_except"};

Cdc DecodeCdc(Reader& r, const YAML::Node& node, const YAML::Mark& at, const std::string& path) {
  Cdc c;
  MapView m(r, node, at, path, "cdc", kCdcKeys);
  if (!m.ok()) return c;
  m.StringList("keys", &c.keys);
  m.String("sequence_by", &c.sequence_by);
  m.String("apply_as_deletes", &c.apply_as_deletes);
  m.StringList("except_columns", &c.except_columns);
  m.StringList("columns", &c.columns);
  m.Int("scd_type", &c.scd_type);
  m.StringList("track_history", &c.track_history);
  m.StringList("track_history_except", &c.track_history_except);
  return c;
}

namespace {

// Where the text of `f.sql` starts in the file, when the scalar holds the
// query line for line: a literal block (`sql: |`) or a one-line plain or
// quoted scalar without escapes. Folded forms keep no line correspondence.
void SqlLocation(const Reader& r, const YAML::Mark& mark, Flow* f) {
  const std::string_view text = r.text;
  if (mark.is_null() || mark.pos < 0 || static_cast<size_t>(mark.pos) >= text.size()) return;
  const size_t at = static_cast<size_t>(mark.pos);
  const bool one_line = f->sql.find('\n') == std::string::npos;
  if (text[at] == '|') {
    // The block's first non-empty line gives the indentation of every line.
    size_t line_start = text.find('\n', at);
    int line = mark.line + 2;
    while (line_start != std::string_view::npos) {
      ++line_start;
      size_t end = text.find('\n', line_start);
      std::string_view l = text.substr(line_start, end == std::string_view::npos ? end : end - line_start);
      const size_t indent = l.find_first_not_of(' ');
      if (indent != std::string_view::npos) {
        if (l.substr(indent) != std::string_view(f->sql).substr(0, f->sql.find('\n'))) return;
        f->sql_location = r.Location(mark);
        f->sql_location.line = line;
        f->sql_location.column = static_cast<int>(indent) + 1;
        f->sql_indent = static_cast<int>(indent);
        return;
      }
      line_start = end;
      ++line;
    }
    return;
  }
  if (!one_line) return;
  const bool quoted = text[at] == '"' || text[at] == '\'';
  const size_t start = quoted ? at + 1 : at;
  if (text.substr(start, f->sql.size()) != f->sql) return;  // escapes moved the text
  f->sql_location = r.Location(mark);
  f->sql_location.column += quoted ? 1 : 0;
}

}  // namespace

Flow DecodeFlow(Reader& r, const YAML::Node& node, const YAML::Mark& at, const std::string& path) {
  Flow f;
  r.flow = PeekScalar(node, "name");  // names the flow in every diagnostic below
  if (r.flow.empty()) r.flow = PeekScalar(node, "target");
  MapView m(r, node, at, path, "flow", kFlowKeys);
  f.location = r.Location(m.mark());
  if (!m.ok()) {
    r.flow.clear();
    return f;
  }
  m.String("target", &f.target, /*required=*/true);
  // The name defaults to the target: most datasets have exactly one flow.
  if (const Entry* e = m.Find("name"); e && !e->value.IsNull()) {
    m.String("name", &f.name);
  } else {
    f.name = f.target;
  }
  m.String("comment", &f.comment);
  if (const Entry* e = m.Find("source"); e && !e->value.IsNull()) {
    f.source = DecodeSource(r, e->value, e->mark(), m.PathOf("source"));
  }
  m.Bool("once", &f.once);
  if (const Entry* e = m.Find("streaming"); e && !e->value.IsNull()) {
    f.streaming = DecodeStreaming(r, e->value, e->mark(), m.PathOf("streaming"));
  }
  if (const Entry* e = m.Find("cdc"); e && !e->value.IsNull()) {
    f.cdc = DecodeCdc(r, e->value, e->mark(), m.PathOf("cdc"));
  }
  m.String("sql", &f.sql);
  if (const Entry* e = m.Find("sql"); e && !f.sql.empty()) SqlLocation(r, e->value.Mark(), &f);
  r.flow.clear();
  return f;
}

}  // namespace thund::file
