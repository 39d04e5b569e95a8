// Shared helpers of the validation rules: context, diagnostics, names.
#include <algorithm>
#include <cctype>

#include "ir/validate_internal.h"

namespace thund::internal {

ValidateContext::ValidateContext(const Pipeline& pipeline, PipelineFacts given)
    : p(pipeline), predicates(std::move(given.predicates)) {
  for (size_t i = 0; i < p.datasets.size(); ++i) dataset_index.emplace(p.datasets[i].name, i);
  predicates.resize(p.datasets.size());
  given.flows.resize(p.flows.size(), SqlFacts{});
  flows.reserve(p.flows.size());
  for (size_t fi = 0; fi < p.flows.size(); ++fi) {
    const Flow& f = p.flows[fi];
    FlowFacts facts;
    facts.has_sql = !f.sql.empty();
    if (facts.has_sql) {
      const auto& analyzed = given.flows[fi];
      if (!analyzed.ok()) {
        facts.parse_status = analyzed.status();
      } else {
        facts.aggregates = analyzed->aggregates;
        facts.windowed = analyzed->windowed;
        facts.reads_stream = analyzed->reads_stream;
        for (const auto& ref : analyzed->inputs) {
          ResolvedInput in = ResolveInput(p, ref);
          bool seen = std::any_of(facts.inputs.begin(), facts.inputs.end(),
                                  [&](const ResolvedInput& x) { return x.name == in.name; });
          if (!seen) facts.inputs.push_back(std::move(in));
        }
      }
    }
    flows.push_back(std::move(facts));
  }
}

std::string TableRef::Joined() const { return JoinNames(parts, "."); }

ResolvedInput ResolveInput(const Pipeline& p, const TableRef& ref) {
  std::vector<std::string> parts = ref.parts;
  auto same = [](const std::string& a, const std::string& b) { return Lower(a) == Lower(b); };
  if (parts.size() == 2 &&
      (same(parts[0], "live") || (!p.database.empty() && same(parts[0], p.database)))) {
    parts.erase(parts.begin());
  } else if (parts.size() == 3 && !p.database.empty() && same(parts[1], p.database) &&
             (p.catalog.empty() || same(parts[0], p.catalog))) {
    parts.erase(parts.begin(), parts.begin() + 2);
  }
  if (parts.size() != 1) return {JoinNames(parts, "."), true, ref.line, ref.column};
  const std::string& name = parts[0];
  if (p.FindDataset(name)) return {name, false, ref.line, ref.column};
  const Dataset* match = nullptr;
  for (const auto& d : p.datasets) {
    if (same(d.name, name)) {
      if (match && match->name != d.name) return {name, false, ref.line, ref.column};  // ambiguous
      match = &d;
    }
  }
  return {match ? match->name : name, false, ref.line, ref.column};
}


const arrow::Status& ValidateContext::PredicateStatus(size_t dataset, size_t expectation) const {
  static const arrow::Status kOk = arrow::Status::OK();
  if (dataset >= predicates.size() || expectation >= predicates[dataset].size()) return kOk;
  return predicates[dataset][expectation];
}

const Dataset* ValidateContext::Find(std::string_view name) const {
  auto it = dataset_index.find(name);
  return it == dataset_index.end() ? nullptr : &p.datasets[it->second];
}

namespace {

std::string Path(const char* root, size_t index, const std::string& field) {
  std::string out = std::string(root) + "[" + std::to_string(index) + "]";
  if (!field.empty()) out += "." + field;
  return out;
}

// Optimal string alignment distance: insertions, deletions, substitutions and
// swaps of two adjacent characters ("clena" -> "clean") cost 1 each.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

namespace {

Diagnostic Make(Severity sev, std::string code, std::string message, std::string hint,
                SourceLocation location, std::string field_path) {
  Diagnostic d;
  d.severity = sev;
  d.code = std::move(code);
  d.message = std::move(message);
  d.hint = std::move(hint);
  d.location = std::move(location);
  d.field_path = std::move(field_path);
  return d;
}

}  // namespace

Diagnostic FlowDiag(const Pipeline& p, size_t index, Severity sev, std::string code,
                    std::string field, std::string message, std::string hint) {
  const Flow& f = p.flows[index];
  Diagnostic d = Make(sev, std::move(code), std::move(message), std::move(hint), f.location,
                      Path("flows", index, field));
  d.flow = f.name;
  d.dataset = f.target;
  return d;
}

Diagnostic DatasetDiag(const Pipeline& p, size_t index, Severity sev, std::string code,
                       std::string field, std::string message, std::string hint) {
  const Dataset& ds = p.datasets[index];
  Diagnostic d = Make(sev, std::move(code), std::move(message), std::move(hint), ds.location,
                      Path("datasets", index, field));
  d.dataset = ds.name;
  return d;
}

std::optional<std::string> ClosestName(std::string_view name,
                                       const std::vector<std::string>& candidates) {
  const std::string lower = Lower(name);
  std::optional<std::string> best;
  size_t best_dist = 0;
  for (const auto& c : candidates) {
    if (c.empty()) continue;
    size_t dist = EditDistance(lower, Lower(c));
    if (!best || dist < best_dist) {
      best = c;
      best_dist = dist;
    }
  }
  // Plausible typo: at most a third of the name, and at least one edit allowed.
  size_t limit = std::max<size_t>(1, name.size() / 3);
  if (!best || best_dist > limit) return std::nullopt;
  return best;
}

std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  auto best = ClosestName(name, candidates);
  return best ? " (did you mean " + Quote(*best) + "?)" : std::string();
}

std::vector<std::string> DatasetNames(const Pipeline& p) {
  std::vector<std::string> names;
  for (const auto& d : p.datasets) names.push_back(d.name);
  return names;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string JoinNames(const std::vector<std::string>& names, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += sep;
    out += names[i];
  }
  return out;
}

}  // namespace thund::internal
