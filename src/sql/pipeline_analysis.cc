// The SQL-dependent half of validate.h: each flow's facts come from its
// logical plan (src/sql/plan_*), then the IR rules (src/ir/) run over them.
#include <algorithm>

#include "ir/validate_internal.h"
#include "sql/sql_analysis.h"
#include "thund/validate.h"

namespace thund {
namespace {

// Does the expectation predicate parse as one boolean expression?
arrow::Status PredicateStatus(const std::string& predicate) {
  if (predicate.find_first_not_of(" \t\r\n") == std::string::npos) return arrow::Status::OK();
  return sql::CheckPredicate(predicate);
}

internal::PipelineFacts FactsOf(const Pipeline& p) {
  internal::PipelineFacts facts;
  facts.flows.reserve(p.flows.size());
  for (const auto& f : p.flows) {
    if (f.sql.empty()) {
      facts.flows.emplace_back(internal::SqlFacts{});
    } else {
      facts.flows.push_back(sql::AnalyzeSql(f.sql));
    }
  }
  for (const auto& d : p.datasets) {
    std::vector<arrow::Status> statuses;
    for (const auto& e : d.expectations) statuses.push_back(PredicateStatus(e.predicate));
    facts.predicates.push_back(std::move(statuses));
  }
  return facts;
}

}  // namespace

Diagnostics Validate(const Pipeline& p) {
  internal::ValidateContext ctx(p, FactsOf(p));
  return internal::RunRules(ctx);
}

bool IsStreamingFlow(const Pipeline& p, const Flow& flow) {
  bool reads_stream = false;
  if (!flow.sql.empty()) {
    auto facts = sql::AnalyzeSql(flow.sql);
    reads_stream = facts.ok() && facts->reads_stream;
  }
  return internal::IsStreamingFlowGiven(p, flow, reads_stream);
}

std::vector<std::string> RequiredCapabilities(const Pipeline& p, const Flow& flow) {
  return internal::RequiredCapabilitiesGiven(p, flow, IsStreamingFlow(p, flow));
}

arrow::Result<std::vector<const Flow*>> TopoOrder(const Pipeline& p) {
  std::vector<std::vector<std::string>> inputs;
  inputs.reserve(p.flows.size());
  for (const auto& f : p.flows) {
    auto in = FlowInputs(p, f);
    if (!in.ok()) {
      return in.status().WithMessage("flow '", f.name, "': ", in.status().message());
    }
    inputs.push_back(std::move(*in));
  }
  return internal::TopoOrderGiven(p, inputs);
}

}  // namespace thund
