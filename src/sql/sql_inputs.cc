// Input inference (validate.h): which relations a flow's SQL reads, from its
// logical plan.
#include <algorithm>

#include "ir/validate_internal.h"
#include "sql/sql_analysis.h"
#include "thund/validate.h"

namespace thund {

arrow::Result<std::vector<std::string>> InferSqlInputs(const std::string& sql) {
  ARROW_ASSIGN_OR_RAISE(internal::SqlFacts facts, sql::AnalyzeSql(sql));
  std::vector<std::string> out;
  out.reserve(facts.inputs.size());
  for (const auto& ref : facts.inputs) out.push_back(ref.Joined());
  return out;
}

arrow::Result<std::vector<std::string>> FlowInputs(const Pipeline& p, const Flow& flow) {
  if (flow.sql.empty()) return std::vector<std::string>{};
  ARROW_ASSIGN_OR_RAISE(internal::SqlFacts facts, sql::AnalyzeSql(flow.sql));
  std::vector<std::string> out;
  for (const auto& ref : facts.inputs) {
    std::string name = internal::ResolveInput(p, ref).name;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

StreamingMode FlowStreamingMode(const Pipeline& p, const Flow& flow,
                                std::optional<StreamingMode> run_default) {
  const bool chosen = (flow.streaming && flow.streaming->mode) || run_default;
  if (!chosen && !flow.source) {
    auto inputs = FlowInputs(p, flow);
    if (inputs.ok()) {
      for (const auto& in : *inputs) {
        const Dataset* d = p.FindDataset(in);
        if (d && IsStreamView(p, *d)) return StreamingMode::kIncremental;
      }
    }
  }
  return EffectiveStreamingMode(flow, run_default);
}

}  // namespace thund
