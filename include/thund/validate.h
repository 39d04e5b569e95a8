// Checking and ordering a pipeline. Implemented by the SQL frontend (src/sql/),
// which supplies what each flow's SQL reads and does; the rules themselves are
// the IR's (src/ir/) and hold for every backend.
#pragma once

#include <string>
#include <vector>

#include <arrow/result.h>

#include "thund/diagnostic.h"
#include "thund/ir.h"

namespace thund {

// The datasets a SQL query reads, in first-seen order, from the query's logical
// plan (plan.h; built from DuckDB's own parser). CTE names, subquery aliases and table
// functions (read_parquet, range, ...) are not dataset references. A
// `STREAM(x)` / `stream(x)` call counts as reading dataset `x`. Qualified names
// keep their qualifier ("db.t").
// The text goes through SparkToDuckDb() first. A CTE hides a dataset of the
// same name only inside the query that defines it (recursive CTEs see
// themselves; a CTE in a subquery does not hide a dataset read outside it).
// Subqueries everywhere (FROM, WHERE, SELECT list, lateral joins, set
// operations, table-function arguments) are searched. "First-seen" is the
// order of first occurrence in the text; duplicates (compared
// case-insensitively, as SQL identifiers are) are dropped.
// Returns Status::Invalid (with DuckDB's message and the offset / line:column
// if known) when the SQL does not parse or is not exactly one query.
// Thread-safe.
arrow::Result<std::vector<std::string>> InferSqlInputs(const std::string& sql);

// Inputs of one flow: InferSqlInputs(flow.sql) resolved against the pipeline
// (qualified names whose qualifier is the pipeline's database or "live" are
// reduced to the bare name). Empty for source flows.
// A bare name that matches no dataset exactly but exactly one dataset
// case-insensitively is returned with that dataset's spelling.
arrow::Result<std::vector<std::string>> FlowInputs(const Pipeline& p, const Flow& flow);

// The streaming mode a run gives `flow`: its own mode, else the run's
// (`run_default`), else incremental when it reads a stream view (IsStreamView:
// the view keeps no rows for Recompute to reread), else Recompute. Every
// consumer (the run, `thund plan`, `thund explain`) asks this.
StreamingMode FlowStreamingMode(const Pipeline& p, const Flow& flow,
                                std::optional<StreamingMode> run_default);

// Every problem in `p`, not just the first. Each diagnostic names the dataset
// and/or flow at fault, carries their source location when known, and says what
// to do. Errors make the pipeline unrunnable; warnings do not.
// Errors come first (in rule order), then warnings. Stable codes:
//   names     empty-name, duplicate-dataset, duplicate-flow
//   bodies    flow-body (not exactly one of sql/source), sql-parse-error,
//             source-spec, source-target-kind (a source may feed only a table,
//             streaming_table or sink)
//   graph     unknown-target, unknown-input (bare name that is no dataset;
//             qualified names are external tables), reads-sink, self-read,
//             cycle ("a -> b -> a"), multiple-writers (materialized_view,
//             view, temporary_view take exactly one flow)
//   streaming streaming-on-batch-target (streaming knobs, CDC or a streaming
//             source into anything but a streaming_table or sink),
//             watermark-column / window-column (empty, or missing from the
//             TARGET's declared schema), watermark-column-type /
//             window-column-type (not timestamp/date), window-size,
//             window-slide, window-gap, window-field (a field of another
//             window kind), trigger-interval, watermark-lateness,
//             watermark-idle-timeout, append-aggregation (Spark's rule: an
//             aggregating streaming query in append mode needs a window and a
//             watermark)
//   late rows late-rows-unknown (streaming.late_rows names no dataset),
//             late-rows-self (the flow's own target), late-rows-kind (not a
//             streaming_table), late-rows-written (a flow writes it),
//             late-rows-watermark (the flow has no watermark, its own or on
//             a flow writing one of its inputs)
//   cdc       cdc-keys, cdc-sequence, cdc-scd-type, cdc-except-key,
//             cdc-column (key missing from the target's declared schema)
//   datasets  expectation-name, expectation-predicate (empty or does not
//             parse), duplicate-expectation, keyed-write-value,
//             keyed-write-key, keyed-write-on-view, keyed-write-sink,
//             storage-format, storage-mode, merge-sink (mode merge on a
//             non-sink, with a format other than parquet, or a one-file
//             location), merge-keys (mode merge without merge_keys, a key
//             listed twice, empty or missing from the declared schema;
//             merge_keys without mode merge), no-writer (error for views, warning otherwise;
//             a late_rows table counts as written by the flows naming it)
// Thread-safe.
Diagnostics Validate(const Pipeline& p);

// Flows in an order where every flow runs after all flows writing the datasets
// it reads (a flow writes its target and its streaming.late_rows table).
// Deterministic: among ready flows, the smallest name goes first.
// Fails (naming the members) if the flow graph has a cycle, and with the
// flow's name if its SQL does not parse. A flow reading its own target is a
// cycle. Pointers point into `p.flows`.
arrow::Result<std::vector<const Flow*>> TopoOrder(const Pipeline& p);

// True when `flow` runs as a stream: it has a streaming source, reads a
// dataset as a stream (FROM STREAM(x), see ReadsStream in sql_dialect.h),
// has streaming knobs or CDC, or its target is a streaming table.
bool IsStreamingFlow(const Pipeline& p, const Flow& flow);

// The capabilities a backend needs to run `flow`. Sorted, no duplicates.
// The vocabulary:
//   "batch-sql"              a SQL flow that is not streaming
//   "streaming"              IsStreamingFlow(p, flow)
//   "streaming-sql"          a SQL flow that is streaming
//   "source:<kind>"          files | file_drop | generator | memory | kafka
//   "once"                   flow.once (backfill)
//   "mode:incremental"       streaming.mode set to kIncremental by the flow
//                            (not the run-wide default, RunOptions::streaming_mode)
//   "trigger:processing_time"
//   "output:update", "output:complete"   (append is the baseline)
//   "watermark", "window:<tumbling|hopping|session>"
//   "cdc:scd1", "cdc:scd2"
//   "expectations:<warn|drop|fail>"     one per action used on the target
//   "keyed-write"            the target has keyed_write keys
//   "materialization:incremental"       the target is an incremental MV
//   "sink:<format>"          the target is a sink (format "" -> parquet)
std::vector<std::string> RequiredCapabilities(const Pipeline& p, const Flow& flow);

}  // namespace thund
