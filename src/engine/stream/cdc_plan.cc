#include "engine/stream/cdc_plan.h"

#include <string>

namespace thund::engine::stream {

std::string CdcStateText(const Cdc& cdc) {
  const std::string what =
      cdc.scd_type == 2
          ? "SCD2 keeps every change of each key (the last arrival per sequence value)"
          : "SCD1 keeps the latest change per key (a delete as a tombstone)";
  return "change log per key: " + what + "; NULL-key and NULL-sequence changes are counted, "
         "never kept";
}

void PlanCdcOperator(const Cdc& cdc, IncrementalPlan* plan) {
  if (!plan->runnable) return;
  if (plan->op != IncrementalOperator::kStateless) {
    plan->runnable = false;
    plan->fallback = std::string("AutoCdc: its change feed runs as a ") + Name(plan->op) +
                     " operator; incremental AUTO CDC needs a feed that only filters and "
                     "projects its stream (aggregate in a streaming table of its own first)";
    return;
  }
  if (plan->stream_inputs.empty()) {
    plan->runnable = false;
    plan->fallback = "AutoCdc: its change feed reads no stream";
    return;
  }
  for (auto& n : plan->nodes) ++n.depth;
  NodeOperator op;
  op.depth = 0;
  op.op = "AUTO CDC (SCD type " + std::to_string(cdc.scd_type) +
          "): each trigger's changes are applied to the keys they touch, in SEQUENCE BY "
          "order; a change that arrives out of sequence order rewrites only its key's history";
  op.state = CdcStateText(cdc);
  plan->nodes.insert(plan->nodes.begin(), op);
  plan->op = IncrementalOperator::kCdc;
}

}  // namespace thund::engine::stream
