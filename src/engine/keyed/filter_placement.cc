#include "engine/keyed/filter_placement.h"

#include <set>

#include "engine/keyed/key_spec.h"
#include "engine/keyed/placement_tree.h"
#include "sql/sql_analysis.h"

namespace thund::engine::keyed {
namespace {

using placement_internal::AnalyzeQuery;
using placement_internal::IsRowWise;
using placement_internal::Lower;
using placement_internal::OutColumn;
using placement_internal::QueryColumns;

std::string JoinNames(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i > 0 ? ", " : "") + v[i];
  return out;
}

FilterPlacement BeforeWrite(const std::string& why) {
  FilterPlacement p;
  p.before_write = true;
  p.explanation = "filter before the write: " + why;
  return p;
}

}  // namespace

arrow::Result<FilterPlacement> PlanFilterPlacement(const std::string& sql,
                                                   const std::vector<std::string>& keys,
                                                   const std::vector<SourceSchema>& sources) {
  if (sql.empty()) {
    if (sources.size() != 1) {
      return arrow::Status::Invalid("a keyed write without SQL needs exactly one source");
    }
    FilterPlacement p;
    std::vector<std::string> columns;
    for (const auto& k : keys) {
      int i = FindColumn(*sources[0].schema, k);
      if (i < 0) {
        return arrow::Status::Invalid("source '", sources[0].name, "' has no key column '", k, "'");
      }
      columns.push_back(sources[0].schema->field(i)->name());
    }
    p.at_source[sources[0].name] = columns;
    p.before_write = false;
    p.row_wise = true;
    p.explanation =
        "filter right after source '" + sources[0].name + "' (key " + JoinNames(columns) + ")";
    return p;
  }
  auto planned = sql::PlanQuery(sql);
  if (!planned.ok()) {
    if (planned.status().message().find("expected one SELECT query") != std::string::npos) {
      return arrow::Status::Invalid("the transform must be exactly one SELECT query");
    }
    return planned.status();
  }
  const plan::PlanNode& root = **planned;
  const bool row_wise = IsRowWise(root, sources);
  auto before_write = [&](const std::string& why) {
    FilterPlacement p = BeforeWrite(why);
    p.row_wise = row_wise;
    return p;
  };
  std::map<std::string, int> references;
  QueryColumns r = AnalyzeQuery(root, sources, &references);
  if (r.opaque) return before_write(r.why);
  // source -> key -> column; every key must come from the same sources.
  std::map<std::string, std::vector<std::string>> per_source;
  std::set<std::string> all_sources;
  for (size_t k = 0; k < keys.size(); ++k) {
    const OutColumn* col = nullptr;
    for (const auto& c : r.columns) {
      if (Lower(c.name) == Lower(keys[k])) {
        if (col != nullptr) return before_write("the output has two columns named " + keys[k]);
        col = &c;
      }
    }
    if (col == nullptr) return before_write("the output has no column " + keys[k]);
    if (!col->plain || col->origins.empty()) {
      return before_write("key " + keys[k] + " is computed in the query, not copied from a source" +
                          (r.why.empty() ? "" : " (" + r.why + ")"));
    }
    std::set<std::string> these;
    for (const auto& o : col->origins) {
      auto& cols = per_source[o.source];
      cols.resize(keys.size());
      if (!cols[k].empty() && cols[k] != o.column) {
        return before_write("key " + keys[k] + " comes from two columns of " + o.source);
      }
      cols[k] = o.column;
      these.insert(o.source);
    }
    if (k == 0) {
      all_sources = these;
    } else if (these != all_sources) {
      return before_write("the key columns come from different sources");
    }
  }
  FilterPlacement p;
  p.row_wise = row_wise;
  for (const auto& [source, cols] : per_source) {
    if (references[Lower(source)] != 1) {
      return before_write("source " + source + " is read more than once in the query");
    }
    p.at_source[source] = cols;
  }
  p.before_write = false;
  std::string where;
  for (const auto& [source, cols] : p.at_source) {
    where += (where.empty() ? "" : ", ") + source + " (" + JoinNames(cols) + ")";
  }
  p.explanation = "filter right after source" + std::string(p.at_source.size() > 1 ? "s " : " ") +
                  where + ": the key reaches the output unchanged";
  return p;
}

}  // namespace thund::engine::keyed
