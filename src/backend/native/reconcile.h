// Internal: reconciliation — decides whether a stored dataset or a sink must
// be computed, and says why.
//
// Fingerprint (engine/batch/fingerprint.h) of dataset D:
//  * definition: the canonical text of D (kind, schema, expectations,
//    materialization, storage) and of every flow into D (name, SQL as
//    written, source, once), plus the pipeline configuration. Comments and
//    properties are not part of it.
//  * inputs: per dataset read by D's flows, its stamp (stored: committed
//    version + run id; view: "view:<digest of the view's own fingerprint>";
//    names thund does not manage: "external").
//  * files: size and mtime of every file read by D's flows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <arrow/result.h>

#include "backend/native/run_context.h"
#include "engine/batch/fingerprint.h"
#include "engine/batch/version_manifest.h"

namespace thund::native {

std::string CanonicalDefinition(const Pipeline& p, const Dataset& d,
                                const std::vector<const Flow*>& flows);

// REQUIRES: every input of `flows` has been processed (ctx.states).
// Fails like FlowInputFiles (a missing input file names the flow and path).
arrow::Result<engine::batch::Fingerprint> ComputeFingerprint(
    RunContext& ctx, const Dataset& d, const std::vector<const Flow*>& flows);

struct Decision {
  bool compute = true;
  std::string reason;  // "never materialized", "full refresh requested",
                       // "definition changed", "up to date: ..."
};

Decision Decide(const std::optional<engine::batch::VersionManifest>& previous,
                const engine::batch::Fingerprint& now, bool full_refresh);

}  // namespace thund::native
