// What the streaming tests ask of a run and a pipeline: a dataset's committed
// rows as SQL for the oracle, the incremental operators `thund explain`
// prints, and the largest state a flow's triggers reported.
#pragma once

#include <algorithm>
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "engine/duckdb/sql_quote.h"
#include "engine/stream/incremental_plan.h"
#include "sql/sql_analysis.h"
#include "thund/backend.h"
#include "thund/ir.h"

namespace thund::native::testing {

// `dataset`'s committed rows under `storage`, as a relation for DuckDB.
inline std::string StoredRows(const std::string& storage, const std::string& dataset) {
  return "read_parquet(" +
         engine::QuoteString(storage + "/" + dataset + "/current/*.parquet") + ")";
}

// What `thund explain` prints as the flow's incremental operators (or the
// error that stops it).
inline std::string ExplainIncremental(const Pipeline& p, const std::string& flow) {
  const Flow* f = p.FindFlow(flow);
  if (!f) return "no flow " + flow;
  auto root = sql::PlanQuery(f->sql);
  if (!root.ok()) return root.status().ToString();
  auto planned = engine::stream::PlanFlowIncremental(p, *f, **root, "__s");
  if (!planned.ok()) return planned.status().ToString();
  return engine::stream::DescribeIncremental(planned->plan);
}

// The largest state (rows) the trigger events of `flow` reported, or -1.
inline int64_t MaxStateRows(const std::vector<RunEvent>& events, const std::string& flow) {
  int64_t n = -1;
  const std::regex state("state ([0-9]+) rows");
  for (const auto& e : events) {
    std::smatch m;
    if (e.flow == flow && std::regex_search(e.message, m, state)) {
      n = std::max<int64_t>(n, std::stoll(m[1]));
    }
  }
  return n;
}

}  // namespace thund::native::testing
