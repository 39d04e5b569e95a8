// Validate(): runs every rule group and returns all findings, errors first
// in rule order, then warnings.
#include "thund/validate.h"

#include <algorithm>

#include "ir/validate_internal.h"

namespace thund {

Diagnostics Validate(const Pipeline& p) {
  internal::ValidateContext ctx(p);
  Diagnostics out;
  internal::CheckNames(ctx, &out);
  internal::CheckFlowBodies(ctx, &out);
  internal::CheckGraph(ctx, &out);
  internal::CheckStreaming(ctx, &out);
  internal::CheckCdc(ctx, &out);
  internal::CheckDatasets(ctx, &out);
  std::stable_partition(out.begin(), out.end(),
                        [](const Diagnostic& d) { return d.severity == Severity::kError; });
  return out;
}

}  // namespace thund
