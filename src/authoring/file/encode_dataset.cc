// FormatPipelineFile and the dataset half of the encoder.
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include "authoring/file/encode.h"
#include "thund/duration.h"
#include "thund/pipeline_file.h"
#include "thund/type_names.h"

namespace thund {
namespace file {
namespace {

OutNode EncodeColumn(const arrow::Field& f) {
  OutNode extra = OutNode::Map();
  std::optional<std::string> comment;
  if (const auto& md = f.metadata()) {
    for (int64_t i = 0; i < md->size(); ++i) {
      if (md->key(i) == "comment" && !comment) {
        comment = md->value(i);
      } else {
        extra.Add(md->key(i), OutNode::Str(md->value(i)));
      }
    }
  }
  // Short records read best on one line; metadata needs a nested block.
  OutNode c = OutNode::Map(/*flow=*/extra.entries.empty());
  c.Add("name", OutNode::Str(f.name()));
  c.Add("type", OutNode::Str(FormatTypeName(*f.type())));
  if (!f.nullable()) c.Add("nullable", OutNode::Bool(false));
  if (comment) c.Add("comment", OutNode::Str(*comment));
  if (!extra.entries.empty()) c.Add("metadata", std::move(extra));
  return c;
}

OutNode EncodeExpectation(const Expectation& x) {
  OutNode e = OutNode::Map();
  e.Add("name", OutNode::Str(x.name));
  e.Add("expect", OutNode::Str(x.predicate));
  if (x.action != ExpectationAction::kWarn) e.Add("on_violation", OutNode::Str(Name(x.action)));
  return e;
}

OutNode EncodeStorage(const StorageSpec& s) {
  OutNode m = OutNode::Map();
  if (s.format) m.Add("format", OutNode::Str(Name(*s.format)));
  if (!s.location.empty()) m.Add("location", OutNode::Str(s.location));
  if (s.mode) m.Add("mode", OutNode::Str(Name(*s.mode)));
  if (!s.partition_by.empty()) m.Add("partition_by", OutNode::StrList(s.partition_by));
  if (!s.options.empty()) m.Add("options", EncodeStringMap(s.options));
  if (!s.merge_keys.empty()) m.Add("merge_keys", OutNode::StrList(s.merge_keys));
  return m;
}

OutNode EncodeKeyedWrite(const KeyedWrite& k) {
  OutNode m = OutNode::Map();
  if (!k.keys.empty()) m.Add("keys", OutNode::StrList(k.keys));
  if (k.tuning.buckets != 0) m.Add("buckets", OutNode::Int(k.tuning.buckets));
  if (k.tuning.threads != 0) m.Add("threads", OutNode::Int(k.tuning.threads));
  if (k.tuning.batch_size != 0) m.Add("batch_size", OutNode::Int(k.tuning.batch_size));
  if (k.duplicates != DuplicateKeys::kFirst) m.Add("duplicates", OutNode::Str(Name(k.duplicates)));
  if (k.null_keys != NullKeys::kError) m.Add("null_keys", OutNode::Str(Name(k.null_keys)));
  if (k.key_match != KeyMatch::kExact) m.Add("key_match", OutNode::Str(Name(k.key_match)));
  const KeyedWriteTuning& t = k.tuning;
  for (auto [on, name] : {std::pair{t.settle, "settle"}, std::pair{t.passthrough, "passthrough"},
                          std::pair{t.join, "join"}, std::pair{t.direct_io, "direct_io"}}) {
    if (!on) m.Add(name, OutNode::Bool(false));
  }
  if (t.key_index != KeyIndex::kRows) m.Add("key_index", OutNode::Str(Name(t.key_index)));
  if (!t.memory_pool) m.Add("memory_pool", OutNode::Bool(false));
  if (!t.huge_pages) m.Add("huge_pages", OutNode::Bool(false));
  if (t.plain) m.Add("plain", OutNode::Bool(true));
  return m;
}

}  // namespace

OutNode EncodeDuration(int64_t ms) {
  std::string text = FormatDuration(ms);
  auto back = ParseDuration(text);
  if (back.ok() && *back == ms) return OutNode::Str(std::move(text));
  return OutNode::Int(ms);
}

OutNode EncodeStringMap(const StringMap& m) {
  OutNode out = OutNode::Map();
  for (const auto& [k, v] : m) out.Add(k, OutNode::Str(v));
  return out;
}

OutNode EncodeDataset(const Dataset& d) {
  OutNode m = OutNode::Map();
  m.Add("name", OutNode::Str(d.name));
  if (d.kind != DatasetKind::kMaterializedView) m.Add("kind", OutNode::Str(Name(d.kind)));
  if (!d.comment.empty()) m.Add("comment", OutNode::Str(d.comment));
  if (d.materialization != Materialization::kFull) {
    m.Add("materialization", OutNode::Str(Name(d.materialization)));
  }
  if (d.schema.declared()) {
    OutNode cols = OutNode::Seq();
    for (const auto& f : d.schema.arrow->fields()) cols.items.push_back(EncodeColumn(*f));
    const auto& md = d.schema.arrow->metadata();
    if (md != nullptr && md->size() > 0) {  // the long form keeps schema-level metadata
      OutNode schema = OutNode::Map();
      schema.Add("columns", std::move(cols));
      OutNode& meta = schema.Add("metadata", OutNode::Map());
      for (int64_t i = 0; i < md->size(); ++i) meta.Add(md->key(i), OutNode::Str(md->value(i)));
      m.Add("schema", std::move(schema));
    } else {
      m.Add("schema", std::move(cols));
    }
  }
  if (!d.expectations.empty()) {
    OutNode& list = m.Add("expectations", OutNode::Seq());
    for (const auto& x : d.expectations) list.items.push_back(EncodeExpectation(x));
  }
  if (!d.storage.empty()) m.Add("storage", EncodeStorage(d.storage));
  if (!(d.keyed_write == KeyedWrite{})) m.Add("keyed_write", EncodeKeyedWrite(d.keyed_write));
  if (!d.properties.empty()) m.Add("properties", EncodeStringMap(d.properties));
  return m;
}

}  // namespace file

std::string FormatPipelineFile(const Pipeline& p) {
  using file::OutNode;
  OutNode root = OutNode::Map();
  root.Add("name", OutNode::Str(p.name));
  if (!p.storage.empty()) root.Add("storage", OutNode::Str(p.storage));
  if (!p.catalog.empty()) root.Add("catalog", OutNode::Str(p.catalog));
  if (!p.database.empty()) root.Add("database", OutNode::Str(p.database));
  if (!p.configuration.empty()) root.Add("configuration", file::EncodeStringMap(p.configuration));
  if (!p.datasets.empty()) {
    OutNode& list = root.Add("datasets", OutNode::Seq());
    for (const auto& d : p.datasets) list.items.push_back(file::EncodeDataset(d));
  }
  if (!p.flows.empty()) {
    OutNode& list = root.Add("flows", OutNode::Seq());
    for (const auto& f : p.flows) list.items.push_back(file::EncodeFlow(f));
  }
  return file::Render(root);
}

}  // namespace thund
