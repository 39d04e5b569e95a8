#include "engine/batch/version_manifest.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/batch/storage_layout.h"
#include "thund/json_text.h"

namespace thund::engine::batch {

std::string VersionManifest::Stamp() const {
  return (version > 0 ? VersionName(version) : std::string("write")) + "@" + run_id;
}

std::string VersionManifest::ToJson() const {
  nlohmann::json j;
  j["format"] = "thund.version/1";
  j["dataset"] = dataset;
  j["version"] = version;
  j["run_id"] = run_id;
  j["committed_ms"] = committed_ms;
  j["rows"] = rows;
  j["schema"] = schema;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : this->files) {
    files.push_back({{"flow", f.flow}, {"file", f.file}, {"rows", f.rows}});
    if (f.triggers > 1) files.back()["triggers"] = f.triggers;
  }
  j["files"] = std::move(files);
  j["once_flows"] = once_flows;
  j["fingerprint"] = fingerprint.ToJson();
  if (epoch) j["epoch"] = *epoch;
  return JsonText(j, 2) + "\n";
}

arrow::Result<VersionManifest> VersionManifest::Parse(const std::string& text,
                                                      const std::string& where) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return arrow::Status::IOError("manifest ", where, " is not valid JSON");
  }
  VersionManifest m;
  try {
    m.dataset = j.value("dataset", "");
    m.version = j.value("version", int64_t{0});
    m.run_id = j.value("run_id", "");
    m.committed_ms = j.value("committed_ms", int64_t{0});
    m.rows = j.value("rows", int64_t{0});
    m.schema = j.value("schema", "");
    if (j.contains("files") && j["files"].is_array()) {
      for (const auto& f : j["files"]) {
        m.files.push_back({f.value("flow", ""), f.value("file", ""), f.value("rows", int64_t{0}),
                           std::max<int64_t>(f.value("triggers", int64_t{1}), 1)});
      }
    }
    if (j.contains("once_flows") && j["once_flows"].is_array()) {
      m.once_flows = j["once_flows"].get<std::vector<std::string>>();
    }
    if (j.contains("fingerprint")) m.fingerprint = Fingerprint::FromJson(j["fingerprint"]);
    if (j.contains("epoch") && !j["epoch"].is_null()) m.epoch = j["epoch"].get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    return arrow::Status::IOError("manifest ", where, " has an unexpected shape: ", e.what());
  }
  return m;
}

}  // namespace thund::engine::batch
