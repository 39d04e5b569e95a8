// Internal to filter_placement.cc: what a query's output columns are made of,
// read from the query's logical plan (thund/plan.h). Not public API.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/keyed/filter_placement.h"
#include "thund/plan.h"

namespace thund::engine::keyed::placement_internal {

std::string Lower(std::string s);

// Where an output column's values come from: plain copies of source columns.
struct Origin {
  std::string source;  // as given in SourceSchema::name
  std::string column;  // the source's spelling
};
struct OutColumn {
  std::string name;
  bool plain = false;           // a copy of source column(s) (no computation)
  std::vector<Origin> origins;  // one per UNION branch it came through
};
// A relation in scope: its columns, or opaque (unknown columns, nothing plain).
struct Relation {
  std::string alias;
  bool preserved = true;  // rows reach the output unchanged (not null-supplied)
  bool visible = true;    // columns visible to the SELECT list (false: SEMI/ANTI right)
  bool opaque = false;
  std::vector<OutColumn> columns;
};
struct QueryColumns {
  bool opaque = false;
  std::vector<OutColumn> columns;
  std::string why;  // when something blocked pushdown
};

// The output columns of the query plan `root` over
// `sources`, with where each plain column comes from; `references` counts how
// often each source (lower-cased) is read anywhere in the query.
QueryColumns AnalyzeQuery(const plan::PlanNode& root, const std::vector<SourceSchema>& sources,
                          std::map<std::string, int>* references);

// True when the query maps each row of its single source on its own.
bool IsRowWise(const plan::PlanNode& root, const std::vector<SourceSchema>& sources);

}  // namespace thund::engine::keyed::placement_internal
