// Rules on names: empty names, duplicate datasets, duplicate flows.
#include <map>

#include "ir/validate_internal.h"

namespace thund::internal {
namespace {

std::string Where(const SourceLocation& loc, const char* root, size_t index) {
  std::string at = loc.ToString();
  return at.empty() ? std::string(root) + "[" + std::to_string(index) + "]" : at;
}

}  // namespace

void CheckNames(const ValidateContext& ctx, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  std::map<std::string, size_t> first_dataset;
  for (size_t i = 0; i < p.datasets.size(); ++i) {
    const Dataset& d = p.datasets[i];
    if (d.name.empty()) {
      out->push_back(DatasetDiag(p, i, Severity::kError, "empty-name", "name",
                                 std::string("a ") + Name(d.kind) + " dataset has no name",
                                 "give every dataset a unique, non-empty name"));
      continue;
    }
    auto [it, inserted] = first_dataset.emplace(d.name, i);
    if (!inserted) {
      out->push_back(DatasetDiag(
          p, i, Severity::kError, "duplicate-dataset", "name",
          "dataset " + Quote(d.name) + " is declared more than once (first declared at " +
              Where(p.datasets[it->second].location, "datasets", it->second) + ")",
          "rename one of the declarations or remove the duplicate"));
    }
  }
  std::map<std::string, size_t> first_flow;
  for (size_t i = 0; i < p.flows.size(); ++i) {
    const Flow& f = p.flows[i];
    if (f.name.empty()) {
      out->push_back(
          FlowDiag(p, i, Severity::kError, "empty-name", "name",
                   "a flow" + (f.target.empty() ? "" : " into " + Quote(f.target)) + " has no name",
                   "give every flow a unique, non-empty name (often the name of "
                   "the dataset it computes)"));
      continue;
    }
    auto [it, inserted] = first_flow.emplace(f.name, i);
    if (!inserted) {
      out->push_back(
          FlowDiag(p, i, Severity::kError, "duplicate-flow", "name",
                   "flow " + Quote(f.name) + " is declared more than once (first declared at " +
                       Where(p.flows[it->second].location, "flows", it->second) + ")",
                   "rename one of the flows; flow names must be unique within a pipeline"));
    }
  }
}

}  // namespace thund::internal
