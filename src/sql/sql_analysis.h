// Internal: the SQL frontend's entry points for the rest of thund. Everything
// here reads the flow's logical plan (thund/plan.h); nothing outside src/sql/
// sees DuckDB's parse tree.
#pragma once

#include <functional>
#include <map>
#include <memory>
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

// OK when `predicate` parses as one SQL boolean expression.
arrow::Status CheckPredicate(const std::string& predicate);

}  // namespace thund::sql
