// TopoOrder: Kahn's algorithm over flows, smallest ready name first. A flow
// writes its target and the streaming table its late rows go to (late_rows).
#include <map>
#include <set>

#include "ir/validate_internal.h"

namespace thund::internal {

arrow::Result<std::vector<const Flow*>> TopoOrderGiven(
    const Pipeline& p, const std::vector<std::vector<std::string>>& flow_inputs) {
  const size_t n = p.flows.size();
  std::map<std::string, std::vector<size_t>> writers;  // dataset -> flows writing it
  for (size_t i = 0; i < n; ++i) {
    writers[p.flows[i].target].push_back(i);
    // A flow writes the streaming table its late rows go to, too.
    const auto& s = p.flows[i].streaming;
    if (s && !s->late_rows.empty() && s->late_rows != p.flows[i].target) {
      writers[s->late_rows].push_back(i);
    }
  }

  // succ[f] = flows that read a dataset f writes (each edge once).
  std::vector<std::set<size_t>> succ(n);
  std::vector<size_t> indegree(n, 0);
  for (size_t g = 0; g < n; ++g) {
    if (g >= flow_inputs.size()) break;
    for (const auto& in : flow_inputs[g]) {
      auto it = writers.find(in);
      if (it == writers.end()) continue;
      for (size_t f : it->second) {
        if (succ[f].insert(g).second) ++indegree[g];
      }
    }
  }

  // Ready flows ordered by (name, position): duplicate names stay deterministic.
  std::set<std::pair<std::string, size_t>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.emplace(p.flows[i].name, i);
  }
  std::vector<const Flow*> order;
  order.reserve(n);
  while (!ready.empty()) {
    auto [name, f] = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(&p.flows[f]);
    for (size_t g : succ[f]) {
      if (--indegree[g] == 0) ready.emplace(p.flows[g].name, g);
    }
  }
  if (order.size() == n) return order;

  // The flows left over contain at least one cycle; name it.
  std::map<std::string, std::vector<std::string>> edges;
  for (size_t f = 0; f < n; ++f) {
    if (indegree[f] == 0) continue;
    for (size_t g : succ[f]) {
      if (indegree[g] > 0) edges[p.flows[f].name].push_back(p.flows[g].name);
    }
  }
  std::vector<std::string> cycles;
  for (const auto& c : FindCycles(edges)) cycles.push_back(c.ToString());
  return arrow::Status::Invalid("the flows form a cycle, so they have no execution order: ",
                                JoinNames(cycles, "; "),
                                " (each flow writes a dataset that the next one reads)");
}

}  // namespace thund::internal
