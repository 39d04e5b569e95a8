// RunRules(): runs every rule group and returns all findings, errors first
// in rule order, then warnings.
#include <algorithm>

#include "ir/validate_internal.h"

namespace thund::internal {

Diagnostics RunRules(const ValidateContext& ctx) {
  Diagnostics out;
  CheckNames(ctx, &out);
  CheckFlowBodies(ctx, &out);
  CheckGraph(ctx, &out);
  CheckStreaming(ctx, &out);
  CheckLateRows(ctx, &out);
  CheckCdc(ctx, &out);
  CheckDatasets(ctx, &out);
  std::stable_partition(out.begin(), out.end(),
                        [](const Diagnostic& d) { return d.severity == Severity::kError; });
  return out;
}

}  // namespace thund::internal
