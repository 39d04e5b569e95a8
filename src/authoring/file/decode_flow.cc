// Flows: target, SQL or source, once, streaming knobs, CDC.
#include "authoring/file/decode.h"

namespace thund::file {

const std::vector<std::string_view> kFlowKeys = {"name", "target",    "comment", "source",
                                                 "once", "streaming", "cdc",     "sql"};
const std::vector<std::string_view> kCdcKeys = {"keys", "sequence_by", "apply_as_deletes",
                                                "except_columns", "scd_type"};

Cdc DecodeCdc(Reader& r, const YAML::Node& node, const YAML::Mark& at, const std::string& path) {
  Cdc c;
  MapView m(r, node, at, path, "cdc", kCdcKeys);
  if (!m.ok()) return c;
  m.StringList("keys", &c.keys);
  m.String("sequence_by", &c.sequence_by);
  m.String("apply_as_deletes", &c.apply_as_deletes);
  m.StringList("except_columns", &c.except_columns);
  m.Int("scd_type", &c.scd_type);
  return c;
}

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
  r.flow.clear();
  return f;
}

}  // namespace thund::file
