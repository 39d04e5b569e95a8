// Reconciliation fingerprints: what a stored dataset (or a sink) was last
// computed from. A dataset whose fingerprint is unchanged is not recomputed.
//
// The parts are kept (not only their digest) so that a run can say *why* a
// dataset is recomputed: "definition changed", "input 'orders' has a new
// version", "input file data/a.csv changed".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <arrow/result.h>
#include <nlohmann/json.hpp>

namespace thund::engine::batch {

// A 128-bit non-cryptographic digest of `text` as 32 hex characters
// (two independent 64-bit FNV-1a lanes). Deterministic across runs/platforms.
std::string HashHex(std::string_view text);

struct Fingerprint {
  // HashHex of the canonical definition text (dataset + its flows + the
  // pipeline configuration).
  std::string definition;
  // Input dataset -> its stamp ("v-000003@<run id>" for stored inputs,
  // "view:<digest>" for views, "external" for names thund does not manage).
  std::map<std::string, std::string> inputs;
  // Absolute file path -> "size=<bytes> mtime=<ns>" for every file read
  // through a table function or a file source.
  std::map<std::string, std::string> files;

  // HashHex over all parts.
  std::string Digest() const;
  nlohmann::json ToJson() const;
  static Fingerprint FromJson(const nlohmann::json& j);  // missing keys -> empty
  bool operator==(const Fingerprint&) const = default;
};

// A short human reason why `now` differs from `before` ("definition changed",
// "input 'a' changed (v-000001@... -> v-000002@...)", "input file x changed",
// "new input file x", "input file x is gone"); empty when they are equal.
// Mentions at most three changes, then "and N more".
std::string ExplainChange(const Fingerprint& before, const Fingerprint& now);

}  // namespace thund::engine::batch
