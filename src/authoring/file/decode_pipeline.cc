// ParsePipelineFile / LoadPipelineFile: the top-level mapping, YAML syntax
// errors and file access.
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "authoring/file/decode.h"
#include "authoring/file/yaml_reader.h"
#include "thund/pipeline_file.h"

namespace thund {
namespace file {

const std::vector<std::string_view> kPipelineKeys = {
    "name", "storage", "catalog", "database", "configuration", "datasets", "flows"};

namespace {

void DecodePipeline(Reader& r, const YAML::Node& root, Pipeline* p) {
  MapView m(r, root, root.Mark(), "", "pipeline", kPipelineKeys);
  p->location = r.Location(m.mark());
  if (!m.ok()) return;
  m.String("name", &p->name, /*required=*/true);
  m.String("storage", &p->storage);
  m.String("catalog", &p->catalog);
  m.String("database", &p->database);
  m.StringMap("configuration", &p->configuration);

  // Flows written as `query:` on a dataset come first, in dataset order, then
  // the `flows:` list in file order.
  if (const Entry* e = m.Find("datasets"); e && !e->value.IsNull()) {
    ForEachItem(r, e->value, e->mark(), "datasets", "a list of datasets",
                [&](const YAML::Node& item, const YAML::Mark& at, const std::string& path, size_t) {
                  std::optional<Flow> query_flow;
                  p->datasets.push_back(DecodeDataset(r, item, at, path, &query_flow));
                  if (query_flow) p->flows.push_back(std::move(*query_flow));
                });
  }
  if (const Entry* e = m.Find("flows"); e && !e->value.IsNull()) {
    ForEachItem(r, e->value, e->mark(), "flows", "a list of flows",
                [&](const YAML::Node& item, const YAML::Mark& at, const std::string& path, size_t) {
                  p->flows.push_back(DecodeFlow(r, item, at, path));
                });
  }
}

}  // namespace
}  // namespace file

ParseResult ParsePipelineFile(const std::string& text, const std::string& file_name) {
  ParseResult result;
  file::Reader r(file_name, &result.diagnostics);
  r.text = text;
  result.pipeline.location.file = file_name;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    r.Error(e.mark, "", "yaml-syntax", "YAML syntax error: " + e.msg,
            "fix the YAML at this position (check indentation, quotes and brackets)");
    return result;
  }
  if (docs.empty() || docs[0].IsNull()) {
    r.Error(YAML::Mark(), "", "empty-file", "the pipeline file is empty",
            "a pipeline file is a mapping that starts with `name: <pipeline name>`");
    return result;
  }
  if (docs.size() > 1) {
    r.Error(docs[1].Mark(), "", "multiple-documents",
            "the file holds " + std::to_string(docs.size()) +
                " YAML documents; a pipeline file holds one",
            "remove the '---' separator and merge the documents");
  }
  try {
    file::DecodePipeline(r, docs[0], &result.pipeline);
  } catch (const std::exception& e) {  // yaml-cpp throws on internal inconsistencies only
    r.Error(YAML::Mark(), "", "internal",
            std::string("internal error while reading the file: ") + e.what());
  }
  return result;
}

ParseResult LoadPipelineFile(const std::string& path) {
  std::error_code ec;
  std::string problem;
  if (std::filesystem::is_directory(path, ec)) {
    problem = "is a directory";
  } else {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream text;
      text << in.rdbuf();
      if (!in.bad()) return ParsePipelineFile(text.str(), path);
    }
    problem = std::strerror(errno);
  }
  ParseResult result;
  result.pipeline.location.file = path;
  Diagnostic d;
  d.message = "cannot read pipeline file '" + path + "': " + problem;
  d.hint = "check that the path exists and is a readable YAML or JSON file";
  d.location.file = path;
  d.code = "file-unreadable";
  result.diagnostics.push_back(std::move(d));
  return result;
}

}  // namespace thund
