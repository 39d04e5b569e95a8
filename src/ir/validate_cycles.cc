// Cycle finding for the dataset graph (Validate) and the flow graph (TopoOrder).
#include <algorithm>
#include <deque>
#include <functional>
#include <set>

#include "ir/validate_internal.h"

namespace thund::internal {
namespace {

// Tarjan's strongly connected components over string nodes. Nodes are visited
// in sorted order, so the result is deterministic.
class Tarjan {
 public:
  explicit Tarjan(const std::map<std::string, std::vector<std::string>>& edges) : edges_(edges) {
    for (const auto& [from, tos] : edges_) {
      nodes_.insert(from);
      nodes_.insert(tos.begin(), tos.end());
    }
  }

  std::vector<std::set<std::string>> Run() {
    for (const auto& n : nodes_) {
      if (!index_.count(n)) Visit(n);
    }
    return components_;
  }

 private:
  // Recursive: the depth is bounded by the longest dependency chain, which
  // is small for pipelines (hundreds of datasets at most).
  void Visit(const std::string& v) {
    index_[v] = low_[v] = counter_++;
    stack_.push_back(v);
    on_stack_.insert(v);
    auto it = edges_.find(v);
    if (it != edges_.end()) {
      std::vector<std::string> succ = it->second;
      std::sort(succ.begin(), succ.end());
      for (const auto& w : succ) {
        if (!index_.count(w)) {
          Visit(w);
          low_[v] = std::min(low_[v], low_[w]);
        } else if (on_stack_.count(w)) {
          low_[v] = std::min(low_[v], index_[w]);
        }
      }
    }
    if (low_[v] == index_[v]) {
      std::set<std::string> comp;
      while (true) {
        std::string w = stack_.back();
        stack_.pop_back();
        on_stack_.erase(w);
        comp.insert(w);
        if (w == v) break;
      }
      components_.push_back(std::move(comp));
    }
  }

  const std::map<std::string, std::vector<std::string>>& edges_;
  std::set<std::string> nodes_;
  std::map<std::string, int> index_, low_;
  std::vector<std::string> stack_;
  std::set<std::string> on_stack_;
  std::vector<std::set<std::string>> components_;
  int counter_ = 0;
};

bool HasSelfEdge(const std::map<std::string, std::vector<std::string>>& edges,
                 const std::string& n) {
  auto it = edges.find(n);
  return it != edges.end() &&
         std::find(it->second.begin(), it->second.end(), n) != it->second.end();
}

// Shortest path start -> ... -> start inside `comp` (BFS, neighbours in name
// order so ties resolve deterministically).
std::vector<std::string> ShortestCycle(const std::map<std::string, std::vector<std::string>>& edges,
                                       const std::set<std::string>& comp,
                                       const std::string& start) {
  std::map<std::string, std::string> parent;
  std::deque<std::string> queue{start};
  std::set<std::string> seen{start};
  while (!queue.empty()) {
    std::string v = queue.front();
    queue.pop_front();
    auto it = edges.find(v);
    if (it == edges.end()) continue;
    std::vector<std::string> succ = it->second;
    std::sort(succ.begin(), succ.end());
    for (const auto& w : succ) {
      if (!comp.count(w)) continue;
      if (w == start) {
        std::vector<std::string> path{v};
        while (path.back() != start) path.push_back(parent[path.back()]);
        std::reverse(path.begin(), path.end());
        return path;
      }
      if (seen.insert(w).second) {
        parent[w] = v;
        queue.push_back(w);
      }
    }
  }
  return {start};  // unreachable for a real component
}

}  // namespace

std::string Cycle::ToString() const {
  std::string out = JoinNames(path, " -> ");
  if (!path.empty()) out += " -> " + path.front();
  return out;
}

std::vector<Cycle> FindCycles(const std::map<std::string, std::vector<std::string>>& edges) {
  std::vector<Cycle> out;
  for (const auto& comp : Tarjan(edges).Run()) {
    const std::string& start = *comp.begin();
    if (comp.size() == 1 && !HasSelfEdge(edges, start)) continue;
    Cycle c;
    c.path = ShortestCycle(edges, comp, start);
    for (const auto& n : comp) {
      if (std::find(c.path.begin(), c.path.end(), n) == c.path.end()) c.others.push_back(n);
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(),
            [](const Cycle& a, const Cycle& b) { return a.path.front() < b.path.front(); });
  return out;
}

}  // namespace thund::internal
