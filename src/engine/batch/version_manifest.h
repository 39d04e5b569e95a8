// The manifest of one committed dataset version ({version dir}/_manifest.json),
// also used for a sink's last successful write (_thund/sinks/{sink}.json).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <arrow/result.h>

#include "engine/batch/fingerprint.h"

namespace thund::engine::batch {

struct PartFile {
  std::string flow;  // the flow that wrote it
  std::string file;  // name inside the version dir (sinks: absolute path)
  int64_t rows = 0;
  // Streaming tables: how many triggers' rows the file holds (merged parts
  // hold several; backend/native/part_tiers.h). Written only when above 1.
  int64_t triggers = 1;
  bool operator==(const PartFile&) const = default;
};

struct VersionManifest {
  std::string dataset;
  int64_t version = 0;  // 0 for sinks
  std::string run_id;
  int64_t committed_ms = 0;  // wall clock, ms since the Unix epoch
  int64_t rows = 0;
  std::vector<PartFile> files;
  // Once-flows (Flow::once) whose rows this version holds; they are carried
  // into the next version instead of running again (until a full refresh).
  std::vector<std::string> once_flows;
  Fingerprint fingerprint;
  std::string schema;  // readable, e.g. "(id bigint, name string)"
  // Merge tables (merge_table.h): the epoch whose changes this version
  // applied, so a replay of it is recognized. Unset for every other version
  // (and absent from their JSON; manifests without it parse as unset).
  std::optional<int64_t> epoch;

  // "v-000003@<run id>": how dependents record this version in their fingerprints.
  std::string Stamp() const;
  std::string ToJson() const;
  // `where` names the file in errors.
  static arrow::Result<VersionManifest> Parse(const std::string& text, const std::string& where);
};

}  // namespace thund::engine::batch
