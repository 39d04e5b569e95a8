// Internal: the SQL frontend's entry points for the rest of thund. Everything
// here reads the flow's logical plan (thund/plan.h); nothing outside src/sql/
// sees DuckDB's parse tree.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <arrow/result.h>
#include <arrow/type_fwd.h>

#include "ir/validate_internal.h"
#include "thund/plan.h"

namespace thund::sql {

// Schemas of the relations a plan reads, by lower-cased name (a dataset's bare
// name, or "db.t"). A relation missing here is bound as unknown: the nodes
// above it get no schema, the plan's structure is unchanged.
using InputSchemas = std::map<std::string, std::shared_ptr<arrow::Schema>>;

// The logical plan of one query (Spark or DuckDB SQL, as the user wrote it).
// Built by one walk of DuckDB's parse tree, bound against `inputs` (null: not
// bound, every schema null). Cached for the process by (text, input schemas),
// so each flow is planned once per run however many consumers ask.
// Invalid (with line:column) when the text does not translate or parse, or is
// not exactly one query. Thread-safe.
arrow::Result<plan::PlanPtr> PlanQuery(const std::string& sql, const InputSchemas* inputs = nullptr);

// The bound plan of every SQL flow of `p`, by flow name, planned in
// execution order: a dataset's schema is its declared one, else the output
// schema of the flow that writes it. Flows without SQL are absent. A flow
// whose SQL does not plan is absent too (Validate reports it).
// `source_schema` (may be empty) gives the schema a source flow produces when
// the engine knows it before running (a generator's), else null.
using SourceSchemaFn = std::function<std::shared_ptr<arrow::Schema>(const Flow&)>;
arrow::Result<std::map<std::string, plan::PlanPtr>> PlanPipeline(
    const Pipeline& p, const SourceSchemaFn& source_schema = {});

// The facts the IR rules read (inputs with positions, aggregation, window,
// stream reads), from the unbound plan.
arrow::Result<internal::SqlFacts> AnalyzeSql(const std::string& sql);

// The flow's query as DuckDB SQL with one more output column `name` holding
// each row's window end, for a windowed aggregation whose SELECT keeps no
// window column (the plan knows the window; the output does not show it).
// NotImplemented when the outermost SELECT is not that aggregation.
arrow::Result<std::string> WithWindowEndColumn(const std::string& sql, const std::string& name);

// The flow's query as DuckDB SQL with derived tables read from tables instead:
// each whose SELECT is the plan block with SQL `tables[i].first` reads the
// table named `tables[i].second` (window panes compute their rows).
// NotImplemented when one is not found.
arrow::Result<std::string> WithDerivedTablesReplaced(
    const std::string& sql, const std::vector<std::pair<std::string, std::string>>& tables);
// The same for the references to the query's CTE `cte` (ReplaceCteReferences).
arrow::Result<std::string> WithCteReplaced(const std::string& sql, const std::string& cte,
                                           const std::string& table);

// The incremental aggregate operator's SQL for a query whose outermost SELECT
// is a GROUP BY aggregation of decomposable aggregates (COUNT, SUM, MIN, MAX,
// AVG, BOOL_AND, BOOL_OR, with FILTER clauses; see src/sql/incremental_sql.cc).
struct AggregateDecomposition {
  // Over the query's FROM (its inputs bound to one trigger's new rows): one
  // row per group, columns __g0..__g{n-1} (the grouping keys), then the
  // partials __p0.. .
  std::string partial_sql;
  int num_groups = 0;
  // Per partial column, the aggregate that merges two partials of one group:
  // "sum", "min", "max", "bool_and" or "bool_or".
  std::vector<std::string> merge;
  // Over a relation `state_name` with the partial columns (merged): the
  // query's output rows, HAVING applied.
  std::string final_sql;
  // When final_sql only renames state columns: per output column, (state
  // column, output name); empty otherwise.
  std::vector<std::pair<std::string, std::string>> final_columns;
  // SQL over the __g columns giving a state row's window end; "" when no
  // grouping key is a time window.
  std::string window_end_sql;
  // Which __g column is the window: a {start, end} struct (window(),
  // session_window()), or the window_start / window_end columns of the table
  // functions; -1 when none.
  int window_struct_key = -1;
  int window_start_key = -1;
  int window_end_key = -1;
  int64_t window_size_us = 0;  // the end of a window_start-only key is start + size
  // Hopping windows as panes (see HopPanes below): each row of partial_sql
  // is one pane (window start = the pane's start) and stands for
  // pane_windows windows, each pane_slide_us earlier than the one before.
  int64_t pane_windows = 0;
  int64_t pane_slide_us = 0;
  // The partial aggregation as C++ can compute it from the input rows alone
  // (backend/native/direct_partial.h): usable when the block has no WHERE,
  // every grouping key is an input column or the window, and every partial
  // is count(*), or count / sum / min / max of an input column, without
  // FILTER or DISTINCT. The planner also requires the window to sit right on
  // the stream's scan.
  struct Direct {
    bool usable = false;
    std::vector<std::string> keys;  // per __g: the input column, "" for the window key
    std::vector<std::pair<std::string, std::string>> partials;  // per __p: (function, column)
  };
  Direct direct;
};
// A hopping window whose slide divides its size, offered to the
// decomposition: the partials then group rows by pane, not by window, so a
// row is aggregated once, not size/slide times. Taken only when the window
// reaches the aggregation through its grouping keys alone (no filter,
// aggregate argument or other key reads it).
struct HopPanes {
  int64_t windows = 0;  // size / slide
  int64_t slide_us = 0;
};
// `input_columns` (lower case; null = unknown) tells a GROUP BY alias from an
// input column; `window_size_us` gives the end of a window_start-only key;
// `panes`, when the plan's hopping window allows them (the result says
// whether they were taken: pane_windows > 0);
// `output_names` (the bound plan's, one per select item) name the final
// query's columns as the query names them.
// NotImplemented names what cannot be decomposed ("median(...) is not
// decomposable into partials", "count(DISTINCT ...) keeps the distinct values").
arrow::Result<AggregateDecomposition> DecomposeAggregation(
    const std::string& sql, const std::string& state_name,
    const std::set<std::string>* input_columns, int64_t window_size_us,
    std::optional<HopPanes> panes,
    const std::vector<std::string>& output_names);

// OK when `predicate` parses as one SQL boolean expression.
arrow::Status CheckPredicate(const std::string& predicate);

}  // namespace thund::sql
