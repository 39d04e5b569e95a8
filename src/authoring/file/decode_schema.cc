// `schema:` — a list of columns {name, type, nullable, comment, metadata}, or
// (when the schema itself carries Arrow metadata) a mapping
// {columns: [...], metadata: {...}}. The column comment is stored in Arrow
// field metadata under "comment".
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include "authoring/file/decode.h"
#include "thund/type_names.h"

namespace thund::file {

const std::vector<std::string_view> kColumnKeys = {"name", "type", "nullable", "comment",
                                                   "metadata"};
const std::vector<std::string_view> kSchemaKeys = {"columns", "metadata"};

namespace {

constexpr const char* kCommentKey = "comment";

// `metadata:` keeps its order (Arrow metadata is an ordered list of pairs).
// `reserved` is a key that has its own YAML key and may not appear here.
void DecodeMetadata(Reader& r, const Entry& e, const std::string& path, const char* reserved,
                    arrow::KeyValueMetadata* out) {
  if (!e.value.IsMap()) {
    r.Error(e.mark(), path, "wrong-type",
            "expected a mapping of metadata keys to string values, got " + Describe(e.value));
    return;
  }
  for (auto it = e.value.begin(); it != e.value.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: `it->` returns a temporary proxy
    const YAML::Node v = it->second;
    const YAML::Mark at = v.IsNull() ? k.Mark() : v.Mark();
    if (!k.IsScalar()) {
      r.Error(k.Mark(), path, "wrong-type", "expected a metadata key, got " + Describe(k));
      continue;
    }
    const std::string item_path = Child(path, k.Scalar());
    if (reserved != nullptr && k.Scalar() == reserved) {
      r.Error(k.Mark(), item_path, "bad-value",
              "the column comment belongs in `comment:`, not in `metadata:`",
              "move it to the column's `comment:` key");
      continue;
    }
    if (out->Contains(k.Scalar())) {
      r.Error(k.Mark(), item_path, "duplicate-key", "duplicate metadata key '" + k.Scalar() + "'");
      continue;
    }
    if (v.IsNull()) {
      r.Error(at, item_path, "wrong-type", "expected a string value, got null",
              "write \"\" for an empty value");
      continue;
    }
    if (auto s = ScalarText(r, v, at, item_path, "a string value")) out->Append(k.Scalar(), *s);
  }
}

std::shared_ptr<arrow::Field> DecodeColumn(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                                           const std::string& path) {
  MapView m(r, node, at, path, "column", kColumnKeys);
  if (!m.ok()) return nullptr;
  std::string name;
  bool nullable = true;
  m.String("name", &name, /*required=*/true);
  std::shared_ptr<arrow::DataType> type;
  if (const Entry* e = m.Require("type")) {
    if (auto text =
            ScalarText(r, e->value, e->mark(), m.PathOf("type"), "a type name such as bigint")) {
      auto parsed = ParseTypeName(*text);
      if (parsed.ok()) {
        type = *parsed;
      } else {
        r.Error(e->mark(), m.PathOf("type"), "bad-type",
                "bad column type: " + parsed.status().message(),
                "type names are Spark SQL style: bigint, string, double, timestamp, decimal(10,2), "
                "array<int>, struct<a: int>, map<string,int>");
      }
    }
  }
  m.Bool("nullable", &nullable);
  auto metadata = std::make_shared<arrow::KeyValueMetadata>();
  if (const Entry* e = m.Find("comment"); e && !e->value.IsNull()) {
    if (auto text = ScalarText(r, e->value, e->mark(), m.PathOf("comment"), "a string")) {
      metadata->Append(kCommentKey, *text);
    }
  }
  if (const Entry* e = m.Find("metadata"); e && !e->value.IsNull()) {
    DecodeMetadata(r, *e, m.PathOf("metadata"), kCommentKey, metadata.get());
  }
  if (type == nullptr) return nullptr;
  return arrow::field(name, type, nullable, metadata->size() > 0 ? metadata : nullptr);
}

arrow::FieldVector DecodeColumns(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                                 const std::string& path) {
  arrow::FieldVector fields;
  ForEachItem(
      r, node, at, path, "a list of column definitions",
      [&](const YAML::Node& item, const YAML::Mark& item_at, const std::string& item_path, size_t) {
        if (auto f = DecodeColumn(r, item, item_at, item_path)) fields.push_back(std::move(f));
      });
  return fields;
}

}  // namespace

Schema DecodeSchema(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                    const std::string& path) {
  Schema s;
  if (!node.IsMap()) {
    arrow::FieldVector fields = DecodeColumns(r, node, at, path);
    if (node.IsSequence()) s.arrow = arrow::schema(std::move(fields));
    return s;
  }
  MapView m(r, node, at, path, "schema", kSchemaKeys);
  arrow::FieldVector fields;
  if (const Entry* e = m.Find("columns"); e && !e->value.IsNull()) {
    fields = DecodeColumns(r, e->value, e->mark(), m.PathOf("columns"));
  }
  auto metadata = std::make_shared<arrow::KeyValueMetadata>();
  if (const Entry* e = m.Find("metadata"); e && !e->value.IsNull()) {
    DecodeMetadata(r, *e, m.PathOf("metadata"), nullptr, metadata.get());
  }
  s.arrow = arrow::schema(std::move(fields), metadata->size() > 0 ? metadata : nullptr);
  return s;
}

}  // namespace thund::file
