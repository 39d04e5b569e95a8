// Internal: YAML tree -> IR decoders for the pipeline file (one per IR record),
// shared by decode_*.cc. Each decoder is best effort: it reports problems to
// the Reader and returns what it could decode.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "authoring/file/yaml_reader.h"
#include "thund/ir.h"

namespace thund::file {

// Keys accepted in each mapping, in canonical output order. docs/pipeline-file.md
// documents each of them.
extern const std::vector<std::string_view> kPipelineKeys;
extern const std::vector<std::string_view> kDatasetKeys;
extern const std::vector<std::string_view> kSchemaKeys;
extern const std::vector<std::string_view> kColumnKeys;
extern const std::vector<std::string_view> kExpectationKeys;
extern const std::vector<std::string_view> kStorageKeys;
extern const std::vector<std::string_view> kKeyedWriteKeys;
extern const std::vector<std::string_view> kFlowKeys;
extern const std::vector<std::string_view> kStreamingKeys;
extern const std::vector<std::string_view> kWatermarkKeys;
extern const std::vector<std::string_view> kWindowKeys;
extern const std::vector<std::string_view> kCdcKeys;

// A dataset. When it carries the `query:` shorthand, *query_flow receives the
// flow it stands for (same name as the dataset, targeting it).
Dataset DecodeDataset(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                      const std::string& path, std::optional<Flow>* query_flow);

// `schema:` — a list of column definitions, or {columns: [...], metadata: {...}}.
Schema DecodeSchema(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                    const std::string& path);

Flow DecodeFlow(Reader& r, const YAML::Node& node, const YAML::Mark& at, const std::string& path);

// `source:` — a mapping tagged by `kind`. nullopt when the kind is missing or unknown.
std::optional<SourceSpec> DecodeSource(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                                       const std::string& path);

StreamingSpec DecodeStreaming(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                              const std::string& path);

Cdc DecodeCdc(Reader& r, const YAML::Node& node, const YAML::Mark& at, const std::string& path);

}  // namespace thund::file
