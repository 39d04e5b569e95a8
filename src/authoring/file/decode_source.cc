// `source:` — a mapping tagged by `kind` (files | file_drop | generator |
// memory | kafka); the other keys depend on the kind.
#include "authoring/file/decode.h"
#include "authoring/file/did_you_mean.h"

namespace thund::file {
namespace {

const std::vector<std::string_view> kSourceKinds = {"files", "file_drop", "generator", "memory",
                                                    "kafka"};
const std::vector<std::string_view> kFileKeys = {"kind", "path", "format", "options"};
const std::vector<std::string_view> kGeneratorKeys = {"kind",
                                                      "generator",
                                                      "seed",
                                                      "rows_per_batch",
                                                      "total_rows",
                                                      "events_per_second",
                                                      "out_of_orderness",
                                                      "options"};
const std::vector<std::string_view> kMemoryKeys = {"kind", "name"};
const std::vector<std::string_view> kKafkaKeys = {"kind",   "bootstrap_servers", "topic",
                                                  "format", "starting_offsets",  "options"};

// Every key of every kind: used when the kind itself is missing or unknown, so
// that the other keys are still checked for typos.
std::vector<std::string_view> AllSourceKeys() {
  std::vector<std::string_view> all;
  for (const auto* keys : {&kFileKeys, &kGeneratorKeys, &kMemoryKeys, &kKafkaKeys}) {
    for (std::string_view k : *keys) {
      bool seen = false;
      for (std::string_view a : all) seen = seen || a == k;
      if (!seen) all.push_back(k);
    }
  }
  return all;
}

FileSource DecodeFiles(MapView& m, bool file_drop) {
  FileSource s;
  s.file_drop = file_drop;
  m.String("path", &s.path, /*required=*/true);
  m.Value("format", &s.format, authoring::ParseSourceFormat);
  m.StringMap("options", &s.options);
  return s;
}

GeneratorSource DecodeGenerator(MapView& m) {
  GeneratorSource g;
  m.Value("generator", &g.kind, authoring::ParseSourceGeneratorKind);
  m.UInt("seed", &g.seed);
  m.Int("rows_per_batch", &g.rows_per_batch);
  m.Int("total_rows", &g.total_rows);
  m.Int("events_per_second", &g.events_per_second);
  m.Duration("out_of_orderness", &g.out_of_orderness_ms);
  m.StringMap("options", &g.options);
  return g;
}

KafkaSource DecodeKafka(MapView& m) {
  KafkaSource k;
  m.String("bootstrap_servers", &k.bootstrap_servers, /*required=*/true);
  m.String("topic", &k.topic, /*required=*/true);
  m.String("format", &k.format);
  m.Value("starting_offsets", &k.starting_offsets, authoring::ParseSourceStartingOffsets);
  m.StringMap("options", &k.options);
  return k;
}

// The `kind` scalar, or "" (with an error) when it is missing or not a scalar.
std::string ReadKind(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                     const std::string& path) {
  const std::string kind_path = Child(path, "kind");
  const YAML::Node kind = node["kind"];
  if (!kind || kind.IsNull()) {
    r.Error(node.Mark().is_null() ? at : node.Mark(), kind_path, "missing-key",
            "missing required key 'kind' in source", "allowed kinds: " + JoinNames(kSourceKinds));
    return "";
  }
  auto text = ScalarText(r, kind, kind.Mark(), kind_path, "a source kind");
  if (!text) return "";
  for (std::string_view k : kSourceKinds) {
    if (k == *text) return *text;
  }
  std::string hint = "allowed: " + JoinNames(kSourceKinds);
  if (auto m = ClosestMatch(*text, kSourceKinds)) hint = "did you mean '" + *m + "'? " + hint;
  r.Error(kind.Mark(), kind_path, "bad-enum", "unknown source kind '" + *text + "'", hint);
  return "";
}

}  // namespace

std::optional<SourceSpec> DecodeSource(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                                       const std::string& path) {
  if (!node.IsMap()) {
    r.Error(at, path, "wrong-type", "expected a source mapping, got " + Describe(node),
            "write e.g. {kind: files, path: data/*.parquet, format: parquet}");
    return std::nullopt;
  }
  const std::string kind = ReadKind(r, node, at, path);
  const std::vector<std::string_view>* keys = nullptr;
  if (kind == "files" || kind == "file_drop") keys = &kFileKeys;
  if (kind == "generator") keys = &kGeneratorKeys;
  if (kind == "memory") keys = &kMemoryKeys;
  if (kind == "kafka") keys = &kKafkaKeys;
  if (keys == nullptr) {
    MapView check(r, node, at, path, "source", AllSourceKeys());  // reports misspelled keys
    return std::nullopt;
  }
  MapView m(r, node, at, path, kind + " source", *keys);
  if (kind == "generator") return DecodeGenerator(m);
  if (kind == "memory") {
    MemorySource s;
    m.String("name", &s.name, /*required=*/true);
    return s;
  }
  if (kind == "kafka") return DecodeKafka(m);
  return DecodeFiles(m, kind == "file_drop");
}

}  // namespace thund::file
