// Datasets: kind, schema (decode_schema.cc), expectations, storage, keyed_write.
#include "authoring/file/decode.h"

namespace thund::file {

const std::vector<std::string_view> kDatasetKeys = {
    "name",         "kind",    "comment",     "materialization", "schema",
    "expectations", "storage", "keyed_write", "properties",      "query"};
const std::vector<std::string_view> kExpectationKeys = {"name", "expect", "on_violation"};
const std::vector<std::string_view> kStorageKeys = {"format", "location", "mode", "partition_by",
                                                    "options", "merge_keys"};
const std::vector<std::string_view> kKeyedWriteKeys = {
    "keys",   "buckets",     "threads", "batch_size", "duplicates", "null_keys",   "key_match",
    "settle", "passthrough", "join",    "direct_io",  "key_index",  "memory_pool", "huge_pages",
    "plain"};

namespace {

Expectation DecodeExpectation(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                              const std::string& path) {
  Expectation x;
  MapView m(r, node, at, path, "expectation", kExpectationKeys);
  x.location = r.Location(m.mark());
  if (!m.ok()) return x;
  m.String("name", &x.name, /*required=*/true);
  m.String("expect", &x.predicate, /*required=*/true);
  m.Enum("on_violation", &x.action, ParseExpectationAction,
         {ExpectationAction::kWarn, ExpectationAction::kDrop, ExpectationAction::kFail},
         "expectation action");
  return x;
}

StorageSpec DecodeStorage(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                          const std::string& path) {
  StorageSpec s;
  MapView m(r, node, at, path, "storage", kStorageKeys);
  if (!m.ok()) return s;
  m.Value("format", &s.format, authoring::ParseStorageFormat);
  m.String("location", &s.location);
  m.Value("mode", &s.mode, authoring::ParseStorageMode);
  m.StringList("partition_by", &s.partition_by);
  m.StringMap("options", &s.options);
  m.StringList("merge_keys", &s.merge_keys);
  return s;
}

KeyedWrite DecodeKeyedWrite(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                            const std::string& path) {
  KeyedWrite k;
  MapView m(r, node, at, path, "keyed_write", kKeyedWriteKeys);
  if (!m.ok()) return k;
  m.StringList("keys", &k.keys);
  m.Int("buckets", &k.tuning.buckets);
  m.Int("threads", &k.tuning.threads);
  m.Int("batch_size", &k.tuning.batch_size);
  m.Value("duplicates", &k.duplicates, authoring::ParseKeyedDuplicates);
  m.Value("null_keys", &k.null_keys, authoring::ParseKeyedNullKeys);
  m.Value("key_match", &k.key_match, authoring::ParseKeyedKeyMatch);
  KeyedWriteTuning& t = k.tuning;
  m.Bool("settle", &t.settle);
  m.Bool("passthrough", &t.passthrough);
  m.Bool("join", &t.join);
  m.Bool("direct_io", &t.direct_io);
  m.Value("key_index", &t.key_index, authoring::ParseKeyedKeyIndex);
  m.Bool("memory_pool", &t.memory_pool);
  m.Bool("huge_pages", &t.huge_pages);
  m.Bool("plain", &t.plain);
  return k;
}

}  // namespace

Dataset DecodeDataset(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                      const std::string& path, std::optional<Flow>* query_flow) {
  Dataset d;
  r.dataset = PeekScalar(node, "name");  // names the dataset in every diagnostic below
  MapView m(r, node, at, path, "dataset", kDatasetKeys);
  d.location = r.Location(m.mark());
  if (!m.ok()) {
    r.dataset.clear();
    return d;
  }
  m.String("name", &d.name, /*required=*/true);
  m.Enum("kind", &d.kind, ParseDatasetKind,
         {DatasetKind::kTable, DatasetKind::kStreamingTable, DatasetKind::kMaterializedView,
          DatasetKind::kView, DatasetKind::kTemporaryView, DatasetKind::kSink},
         "dataset kind");
  m.String("comment", &d.comment);
  m.Enum("materialization", &d.materialization, ParseMaterialization,
         {Materialization::kFull, Materialization::kIncremental}, "materialization");
  if (const Entry* e = m.Find("schema"); e && !e->value.IsNull()) {
    d.schema = DecodeSchema(r, e->value, e->mark(), m.PathOf("schema"));
  }
  if (const Entry* e = m.Find("expectations"); e && !e->value.IsNull()) {
    ForEachItem(
        r, e->value, e->mark(), m.PathOf("expectations"), "a list of expectations",
        [&](const YAML::Node& item, const YAML::Mark& item_at, const std::string& item_path,
            size_t) { d.expectations.push_back(DecodeExpectation(r, item, item_at, item_path)); });
  }
  if (const Entry* e = m.Find("storage"); e && !e->value.IsNull()) {
    d.storage = DecodeStorage(r, e->value, e->mark(), m.PathOf("storage"));
  }
  if (const Entry* e = m.Find("keyed_write"); e && !e->value.IsNull()) {
    d.keyed_write = DecodeKeyedWrite(r, e->value, e->mark(), m.PathOf("keyed_write"));
  }
  m.StringMap("properties", &d.properties);
  if (const Entry* e = m.Find("query"); e && !e->value.IsNull()) {
    if (auto sql = ScalarText(r, e->value, e->mark(), m.PathOf("query"), "a SQL query")) {
      Flow f(d.name, d.name, std::move(*sql));
      f.location = r.Location(e->mark());
      *query_flow = std::move(f);
    }
  }
  r.dataset.clear();
  return d;
}

}  // namespace thund::file
