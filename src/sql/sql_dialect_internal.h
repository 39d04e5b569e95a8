// Internal: the passes of the Spark -> DuckDB translation (sql_dialect*.cc).
// Each pass looks at the freshly lexed text and returns non-overlapping
// edits; the driver applies them and runs the pass again until it has nothing
// left to do. Every pass removes the pattern it rewrites, so the translation is
// idempotent and terminates.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/result.h>
#include <arrow/status.h>

#include "sql/sql_lexer.h"
#include "sql/sql_structure.h"

namespace thund::sql {

struct Edit {
  size_t begin = 0;
  size_t end = 0;
  std::string text;
};

struct PassInput {
  std::string_view text;
  const std::vector<Token>& tokens;
  const Structure& st;
  // Hopping windows put each row in its newest window only (its pane): the
  // incremental aggregate expands panes to windows after the partial
  // aggregation (backend/native/partial_merge.h, ExpandPanes).
  bool hop_panes = false;
  // Every tumbling and hopping window assignment keeps only the windows whose
  // end E has getvariable('__thund_wlo') < epoch_us(E) <=
  // getvariable('__thund_whi') (the incremental mode's window-local operator
  // sets the two variables to the windows that close in a trigger).
  bool window_bounds = false;
};

// SparkToDuckDb, with hopping windows as panes when `hop_panes`.
arrow::Result<std::string> TranslateToDuckDb(std::string_view spark_sql, bool hop_panes,
                                             bool window_bounds = false);

// " AND <end within the bounds>" when `in.window_bounds`, else "".
std::string WindowBoundsSql(const PassInput& in, const std::string& end);

using Pass = arrow::Status (*)(const PassInput&, std::vector<Edit>*);

// The passes, in the order the driver runs them.
arrow::Status FileReadPass(const PassInput& in, std::vector<Edit>* out);
arrow::Status LexicalPass(const PassInput& in, std::vector<Edit>* out);
arrow::Status StreamPass(const PassInput& in, std::vector<Edit>* out);
arrow::Status WatermarkPass(const PassInput& in, std::vector<Edit>* out);
arrow::Status IntervalPass(const PassInput& in, std::vector<Edit>* out);
arrow::Status TypePass(const PassInput& in, std::vector<Edit>* out);
arrow::Status FunctionPass(const PassInput& in, std::vector<Edit>* out);
arrow::Status OperatorPass(const PassInput& in, std::vector<Edit>* out);
arrow::Status WindowTvfPass(const PassInput& in, std::vector<Edit>* out);
arrow::Status WindowGroupPass(const PassInput& in, std::vector<Edit>* out);
arrow::Status TablePass(const PassInput& in, std::vector<Edit>* out);

// A DuckDB string literal reading back as `value` that the translation leaves
// alone when it sees it again: E'...' (never re-read with Spark escapes) when
// `value` holds a backslash or a control character.
std::string StringLiteralFor(std::string_view value);

// Lower-cased names of the relations read with STREAM(x) / STREAM x.
std::vector<std::string> StreamReadsIn(const PassInput& in);

// Applies edits (any order, must not overlap) to `text`.
std::string ApplyEdits(std::string_view text, std::vector<Edit> edits);

// Keeps only edits that do not overlap an earlier-kept one, preferring the
// shortest spans (innermost rewrites first).
std::vector<Edit> InnermostNonOverlapping(std::vector<Edit> edits);

// True when the token at `i` starts a relation in a FROM clause: it follows
// FROM, JOIN, LATERAL or a comma of a FROM clause.
bool AtRelationStart(const PassInput& in, size_t i);

// A `name(...)` call: tokens[name] is an identifier followed by "(".
struct Call {
  size_t name = 0;
  size_t open = 0;
  size_t close = 0;                             // matching ")"
  std::vector<std::pair<size_t, size_t>> args;  // token ranges
  std::vector<std::string> arg_text;            // trimmed source text per arg
};
std::optional<Call> CallAt(const PassInput& in, size_t name);

// True when tokens[i] follows ".", "::", AS, INTO, TABLE or VIEW: `x(` there
// is a type, a table, or a LATERAL VIEW generator, not a function call.
bool AfterTypeOrTableWord(const std::vector<Token>& tokens, size_t i);

// Microseconds of a duration argument of window()/TUMBLE(): '10 seconds',
// INTERVAL 10 SECONDS, INTERVAL '10' SECOND. `what` names the argument in
// errors.
arrow::Result<int64_t> DurationArgMicros(const PassInput& in, std::pair<size_t, size_t> arg,
                                         std::string_view what);

// Error pointing into the query text.
arrow::Status ErrorAt(const PassInput& in, size_t token, const std::string& message);

// Spark (Java DateTimeFormatter) pattern -> DuckDB strftime pattern.
arrow::Result<std::string> JavaToStrftime(std::string_view pattern);

// ---- window helpers shared by window() and TUMBLE/HOP/SESSION

// Start of the latest window of width `slide_us` (offset `offset_us` from the
// epoch) containing `ts`, keeping ts's type: ts - (epoch_us(ts) - off) mod slide.
std::string WindowStartExpr(std::string_view ts, int64_t slide_us, int64_t offset_us);

// `ts` moved by `micros` (an SQL BIGINT expression) microseconds, keeping its
// type: thund_add_micros (duckdb_functions.h), never ICU's calendar.
std::string AddMicros(std::string_view ts, std::string_view micros);
std::string AddMicros(std::string_view ts, int64_t micros);

// SQL for session ids over `relation` (text of a FROM item, with `alias` to
// keep qualified references valid), partitioned by `keys`: a derived table
// with every source column plus window_start / window_end, or, when
// `struct_name` is set, one struct column of that name with fields start /
// end. `where` (may be empty) filters first.
std::string SessionRelation(std::string_view relation, std::string_view alias,
                            std::string_view where, std::string_view ts,
                            const std::vector<std::string>& keys, int64_t gap_us,
                            std::string_view struct_name);

}  // namespace thund::sql
