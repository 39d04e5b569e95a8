// Where a keyed write's filter goes in a flow.
//
// The cheapest place is right after each source whose key columns reach the
// output unchanged: a skipped row then costs no transform, join or write work.
// That is correct when dropping the source row drops exactly the output rows
// with that key -- filtering on an output column pushed down, as any optimizer
// pushes a predicate. PlanFilterPlacement decides from the query's logical plan
// (thund/plan.h) and pushes the filter to a source only through:
//   * projections where the key is a plain column reference (optionally renamed),
//     `*` (with EXCLUDE; a REPLACEd key is computed);
//   * WHERE clauses and DISTINCT; ORDER BY;
//   * inner / cross joins (either side), LEFT joins (left side), RIGHT joins (right
//     side), SEMI / ANTI joins (left side);
//   * subqueries in FROM, and UNION / UNION ALL (each branch; by position).
// Anything else -- aggregation, window functions, LIMIT, DISTINCT ON, full
// outer or positional joins, CTEs, a computed or cast key, a source read more
// than once, keys coming from different sources -- keeps the filter before the
// write (always correct, but skipped rows are computed first); `explanation`
// says why, for the run's event.
#pragma once

#include <arrow/result.h>
#include <arrow/type.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace thund::engine::keyed {

struct SourceSchema {
  std::string name;  // as the SQL names it (matched case-insensitively)
  std::shared_ptr<arrow::Schema> schema;
};

struct FilterPlacement {
  // Sources filtered right after reading: name -> its key columns (keys order).
  std::map<std::string, std::vector<std::string>> at_source;
  // True when the write side must look keys up in the target too (some output
  // rows' keys were not checked at a source).
  bool before_write = true;
  // The query maps each row of its single source on its own (a SELECT list and
  // WHERE over one source: no aggregate, window, DISTINCT, ORDER BY, LIMIT,
  // subquery or join), so it may run batch by batch. True without SQL.
  bool row_wise = false;
  std::string explanation;
};

// `sql` is the flow's DuckDB SELECT over `sources`; empty means the output is
// the single source unchanged. Fails (Invalid) only when `sql` does not parse
// or, without SQL, when the source lacks a key column.
arrow::Result<FilterPlacement> PlanFilterPlacement(const std::string& sql,
                                                   const std::vector<std::string>& keys,
                                                   const std::vector<SourceSchema>& sources);

}  // namespace thund::engine::keyed
