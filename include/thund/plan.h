// The bound logical plan of a flow's query: the one structure every consumer
// reads (input inference, the streaming rules, Update keys, keyed-write filter
// placement, file inputs, the stream runner's shape, `thund explain`).
//
// How a plan is made (src/sql/): the flow's SQL, as the user wrote it (Spark
// SQL or DuckDB SQL), goes through the Spark -> DuckDB dialect, then DuckDB's
// parser; one walk of that parse tree builds the nodes below. Output schemas
// come from DuckDB's binder: each node is rendered back to DuckDB SQL and
// prepared over empty tables that have the inputs' schemas. Nothing else in
// thund reads DuckDB's parse tree.
//
// Contract:
//  * Plans are immutable values once built; share them through
//    std::shared_ptr<const PlanNode>. Thread-compatible (no hidden state).
//  * Every node has an output schema. `schema` is null only when it could not
//    be bound (an input whose schema is unknown until run time, a file that
//    does not exist yet); `bind_error` then says why. Structure never depends
//    on binding.
//  * What the walk does not understand is a kOpaque node holding its DuckDB SQL
//    (and its schema when bound) and `opaque_reason` naming the construct, so a
//    consumer can still run it and can say exactly what it could not see into.
//    Inputs below an opaque node are still listed (PlanInputs is exact).
//  * Positions (`pos`) are 1-based line:column in the flow's SQL as the user
//    wrote it (before translation), or 0:0 when not known.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

namespace thund::plan {

struct TextPos {
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
};

// ------------------------------------------------------------ expressions ---

enum class ExprKind {
  kColumn,     // a column reference: `name` (last part), `qualifier` (the rest)
  kLiteral,    // a constant; `sql` is its text
  kStar,       // * or t.* (with EXCLUDE / REPLACE kept in `sql`)
  kFunction,   // a scalar function call: `name` (lower case), `args`
  kOperator,   // an operator: `name` is "=", "and", "not", "is null", "in", "between", ...
  kAggregate,  // an aggregate call: `name`, `args`, `distinct`, `filter`
  kWindowFunction,  // f(...) OVER (...): `name`; `args` are f's arguments, then the
                    // PARTITION BY, then the ORDER BY expressions; the frame is in `sql`
  kCast,       // CAST(arg AS type): `name` is the target type text
  kCase,       // CASE ...; `args` are its parts in order
  kSubquery,   // a scalar / EXISTS / IN subquery: `subquery`
  kOther,      // anything else (lambda, parameters, ...): `sql` says what
};
const char* Name(ExprKind k);

struct Expr {
  ExprKind kind = ExprKind::kOther;
  std::string name;                    // column, function (lower case) or cast type
  std::vector<std::string> qualifier;  // kColumn: table / struct path before `name`
  std::vector<Expr> args;
  bool distinct = false;                // kAggregate: f(DISTINCT ...)
  std::shared_ptr<const Expr> filter;   // kAggregate: FILTER (WHERE ...)
  std::shared_ptr<const struct PlanNode> subquery;  // kSubquery
  std::string alias;                    // AS alias, "" when none
  // kStar: the columns after EXCLUDE and REPLACE (names as written).
  std::vector<std::string> star_exclude, star_replace;
  std::string sql;                      // the expression as DuckDB SQL
  // kWindowFunction: how many of `args` are f's own arguments, and how many
  // after them are the PARTITION BY (the rest are the ORDER BY).
  int function_args = 0, partition_args = 0;
  std::vector<bool> order_descending;  // kWindowFunction: per ORDER BY expression
  std::shared_ptr<arrow::DataType> type;  // bound type, null when unknown
  TextPos pos;

  // `alias` if set, else the column name DuckDB gives the expression.
  std::string OutputName() const;
  // Every column this expression reads (not inside subqueries), by last part.
  std::vector<std::string> Columns() const;
};

// --------------------------------------------------------------- nodes -----

enum class NodeKind {
  kScan,          // a dataset, external table, CTE reference resolved inline,
                  // or table function (read_parquet(...), range(...), sources)
  kFilter,        // WHERE / HAVING / QUALIFY: `predicate`
  kProject,       // the SELECT list: `exprs`
  kAggregate,     // GROUP BY `group_keys`, `aggregates`
  kWindowAssign,  // window() / session_window() / TUMBLE / HOP / SESSION: `window`
  kJoin,          // `join`
  kUnion,         // UNION / EXCEPT / INTERSECT (see `set_op`), n inputs
  kDistinct,      // SELECT DISTINCT [ON (...)]: `exprs` are the ON keys (may be empty)
  kSort,          // ORDER BY `order`
  kLimit,         // LIMIT / OFFSET
  kValues,        // VALUES (...), (...); with no rows: the one row of no columns a
                  // SELECT without FROM reads (its schema has no fields)
  kOpaque,        // not seen into: `sql`, `opaque_reason`
};
const char* Name(NodeKind k);

enum class ScanKind {
  kDataset,        // a dataset of the pipeline (or an external table: qualified)
  kTableFunction,  // read_parquet(...), range(...), thund's source functions
};

struct ScanInfo {
  ScanKind kind = ScanKind::kDataset;
  std::vector<std::string> name;  // name parts as written (table functions: {name})
  bool stream = false;            // read as a stream: FROM STREAM(x)
  std::vector<Expr> args;         // table function arguments
  // Files a table function reads (its first argument, a string or a list of
  // strings), e.g. read_csv('a.csv'); empty when not constant.
  std::vector<std::string> files;
  std::string alias;
  std::vector<std::string> column_aliases;  // FROM t AS x(a, b)
  std::string Joined() const;  // "db.t"
};

enum class WindowShape { kTumbling, kHopping, kSession };
const char* Name(WindowShape s);

struct WindowInfo {
  WindowShape shape = WindowShape::kTumbling;
  std::string time_column;    // the event-time expression as written, e.g. "ts"
  int64_t size_us = 0;        // tumbling / hopping
  int64_t slide_us = 0;       // hopping (== size for tumbling)
  int64_t offset_us = 0;
  int64_t gap_us = 0;         // session
  std::vector<std::string> partition_keys;  // SESSION(... PARTITION BY k)
  // The columns the window adds to its input: a struct "window" (start, end)
  // from window(); "session_window" from session_window(); window_start and
  // window_end from the table functions.
  std::vector<std::string> output_columns;
  bool from_table_function = false;
  TextPos pos;  // where the window() call or the table function is written

  // The time column as the window's input rows name it: the last part of
  // time_column, unquoted (a qualifier belongs to the query's FROM).
  std::string TimeColumnName() const;
};

enum class JoinKind { kInner, kLeft, kRight, kFull, kSemi, kAnti, kCross, kAsOf, kPositional };
const char* Name(JoinKind k);

struct JoinInfo {
  JoinKind kind = JoinKind::kInner;
  bool lateral = false;
  // Equi-key pairs (left expression, right expression) read off the condition's
  // top-level conjunction; the rest is `residual`.
  std::vector<std::pair<Expr, Expr>> equi_keys;
  std::optional<Expr> residual;
  std::vector<std::string> using_columns;
  // b.ts BETWEEN a.ts - INTERVAL x AND a.ts + INTERVAL y (or the same with <=
  // and >=): the time bound, when the condition has one.
  struct TimeBound {
    Expr left_time, right_time;  // the two time columns
    std::string lower_sql, upper_sql;  // the bounds as written (DuckDB SQL)
    Expr lower, upper;                 // the bounds as expressions
  };
  std::optional<TimeBound> time_bound;
};

enum class SetOp { kUnion, kUnionAll, kExcept, kExceptAll, kIntersect, kIntersectAll,
                   kUnionByName, kUnionAllByName };
const char* Name(SetOp s);

struct SortKey {
  Expr expr;
  bool descending = false;
  std::string nulls;  // "", "first", "last"
};

struct PlanNode {
  NodeKind kind = NodeKind::kOpaque;
  std::vector<std::shared_ptr<const PlanNode>> inputs;

  // Kind-specific parts (only the ones of `kind` are set).
  ScanInfo scan;                      // kScan
  std::optional<Expr> predicate;      // kFilter
  std::string filter_clause;          // kFilter: "where" | "having" | "qualify"
  std::vector<Expr> exprs;            // kProject, kDistinct (ON keys)
  std::vector<Expr> group_keys;       // kAggregate
  std::vector<Expr> aggregates;       // kAggregate (every aggregate call of the block)
  bool group_by_all = false;          // kAggregate: GROUP BY ALL
  bool grouping_sets = false;         // kAggregate: ROLLUP / CUBE / GROUPING SETS
  WindowInfo window;                  // kWindowAssign
  JoinInfo join;                      // kJoin
  SetOp set_op = SetOp::kUnionAll;    // kUnion
  std::vector<SortKey> order;         // kSort
  std::optional<std::string> limit, offset;  // kLimit (DuckDB SQL)
  std::vector<std::vector<Expr>> rows;       // kValues
  std::string opaque_reason;          // kOpaque: the construct, e.g. "PIVOT"

  // The name the enclosing FROM clause gives this relation (a derived table's
  // or a CTE reference's alias), and for a CTE reference the CTE's name.
  std::string alias;
  std::string cte;

  // For every node: the subtree as DuckDB SQL (a query), and its output schema.
  std::string sql;
  std::shared_ptr<arrow::Schema> schema;  // null when not bound
  std::string bind_error;                 // why `schema` is null
  TextPos pos;

  const PlanNode* input(size_t i = 0) const { return inputs.at(i).get(); }
};

using PlanPtr = std::shared_ptr<const PlanNode>;

// ------------------------------------------------------------ questions ---
// The questions consumers ask, answered from the plan alone.

// Every relation the plan reads, in order of first appearance in the text,
// deduplicated case-insensitively (CTE names are never inputs).
std::vector<const ScanInfo*> PlanInputs(const PlanNode& root);

// The aggregate on the plan's row path (the root's chain through project,
// filter, sort, limit, distinct, and set-operation branches), or null. An
// aggregate inside an expression subquery does not count.
const PlanNode* RowPathAggregate(const PlanNode& root);

// The window assignment under `aggregate` whose columns are among its group
// keys (the windowed aggregation), or null.
const PlanNode* AggregateWindow(const PlanNode& aggregate);

// Every node of the plan, pre-order (inputs before subqueries).
std::vector<const PlanNode*> Nodes(const PlanNode& root);

// A superset of the column names (lower case) the plan reads from the
// relations it scans: every name a column reference (each of its parts), a
// join or a window in it uses, whichever relation it belongs to. nullopt when
// no such bound is known: a star or COLUMNS(...), an expression or relation the
// plan does not see into, a relation named as a value (its row as a struct),
// columns renamed by position (FROM t AS x(a, b)), or a join without a
// condition (NATURAL).
std::optional<std::set<std::string>> ColumnNamesRead(const PlanNode& root);

// One node per line, indented, with output schemas:
//   Project [id, total] -> (id bigint, total bigint)
//     Aggregate keys=[id] aggs=[sum(v)] -> ...
std::string ToText(const PlanNode& root, bool with_schemas = true);
// The same as a JSON document (nlohmann-free: a string).
std::string ToJson(const PlanNode& root);

}  // namespace thund::plan
