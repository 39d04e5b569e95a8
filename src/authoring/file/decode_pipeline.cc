// ParsePipelineFile / LoadPipelineFile: the top-level mapping, YAML syntax
// errors and file access.
#include <yaml-cpp/eventhandler.h>
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
#include "thund/utf8.h"

namespace thund {
namespace file {

const std::vector<std::string_view> kPipelineKeys = {
    "name", "storage", "catalog", "database", "configuration", "datasets", "flows"};

namespace {

// The documents of a YAML stream: the first as a node, how many there are,
// and where the second one's root is (if there is one). Not YAML::LoadAll: yaml-cpp 0.7's LoadAll loops
// for ever, allocating, on some malformed streams ("{},", a lone ","): its
// parser keeps reporting an empty document without consuming anything
// (jbeder/yaml-cpp#1040; fixed upstream by stopping at the first empty root).
// Here documents are counted with an event handler that stops the same way,
// and only the first is built (YAML::Load parses one document).
struct Documents {
  YAML::Node first;
  int count = 0;
  YAML::Mark second;
};

class DocumentCounter final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    root_ = mark;
    events_ = 0;
    root_is_null_ = false;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { Event(m, /*null=*/true); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { Event(m, false); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Event(m, false);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Event(m, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Event(m, false);
  }
  void OnMapEnd() override {}

  // True when the last document was an empty root (then the stream ends).
  bool empty_root() const { return events_ == 1 && root_is_null_; }
  // Where the last document's root node is.
  const YAML::Mark& root() const { return root_; }

 private:
  void Event(const YAML::Mark& mark, bool null) {
    if (events_++ > 0) return;
    root_ = mark;
    root_is_null_ = null;
  }
  YAML::Mark root_;
  int events_ = 0;
  bool root_is_null_ = false;
};

// Throws YAML::Exception for a syntax error, as YAML::LoadAll does.
Documents LoadDocuments(const std::string& text) {
  Documents out;
  out.first = YAML::Load(text);
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentCounter counter;
  while (parser.HandleNextDocument(counter)) {
    if (out.count > 0 && counter.empty_root()) break;  // the loop of yaml-cpp#1040
    if (++out.count == 2) out.second = counter.root();
  }
  return out;
}

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
  // yaml-cpp takes any bytes; refuse what is not UTF-8 before anything of it
  // reaches a name or a message.
  auto bad = Utf8Diagnostic(text, file_name);
  if (!bad) bad = ControlCharacterDiagnostic(text, file_name, /*nul_only=*/false);
  if (bad) {
    result.diagnostics.push_back(std::move(*bad));
    return result;
  }
  file::Documents docs;
  try {
    docs = file::LoadDocuments(text);
  } catch (const YAML::Exception& e) {
    // yaml-cpp quotes the byte after a bad escape, which may be the first
    // byte of a UTF-8 character (fuzz_pipeline_file): escaped.
    r.Error(e.mark, "", "yaml-syntax", "YAML syntax error: " + EscapeInvalidUtf8(e.msg),
            "fix the YAML at this position (check indentation, quotes and brackets)");
    return result;
  }
  if (docs.count == 0 || !docs.first || docs.first.IsNull()) {
    r.Error(YAML::Mark(), "", "empty-file", "the pipeline file is empty",
            "a pipeline file is a mapping that starts with `name: <pipeline name>`");
    return result;
  }
  if (docs.count > 1) {
    r.Error(docs.second, "", "multiple-documents",
            "the file holds " + std::to_string(docs.count) +
                " YAML documents; a pipeline file holds one",
            "remove the '---' separator and merge the documents");
  }
  try {
    file::DecodePipeline(r, docs.first, &result.pipeline);
  } catch (const std::exception& e) {  // yaml-cpp throws on internal inconsistencies only
    r.Error(YAML::Mark(), "", "internal",
            std::string("internal error while reading the file: ") + e.what());
  }
  // yaml-cpp 0.7 decodes the escapes \_ and \N of double-quoted strings to
  // single bytes (0xA0, 0x85), which are not UTF-8 (fuzz_pipeline_file): what
  // the file's strings bring into a diagnostic is escaped.
  for (auto& d : result.diagnostics) {
    d.message = EscapeInvalidUtf8(d.message);
    d.hint = EscapeInvalidUtf8(d.hint);
    d.field_path = EscapeInvalidUtf8(d.field_path);
    d.dataset = EscapeInvalidUtf8(d.dataset);
    d.flow = EscapeInvalidUtf8(d.flow);
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
