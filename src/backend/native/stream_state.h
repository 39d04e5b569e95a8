// Internal: what a streaming run keeps per streaming dataset and per flow,
// and how it is loaded from and staged into the dataset store.
//
// A streaming dataset's committed version holds, per flow, the rows that flow
// has put into it (parts tagged with the flow). Everything else a flow keeps
// (its source position, the watermark already emitted, the input prefixes
// its last result covered, whether a once-flow ran, the incremental
// operator's state) is in the pipeline's checkpoint epoch
// (stream_checkpoint.h), which also names the version of every dataset: the
// epoch commits them together, so a crash leaves a consistent (older) epoch
// and the next run resumes from it, re-reading what was not committed —
// nothing lost, nothing twice.
//
// Append-only flows (sources, Append mode) keep their committed part files:
// the next version links (or copies) them and adds one part of new rows.
// Complete, Update and CDC flows rewrite their rows each commit.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <arrow/table.h>
#include <nlohmann/json.hpp>

#include "backend/native/run_context.h"
#include "engine/stream/stream_source.h"

namespace thund::native {

struct IncrementalFlow;  // incremental_flow.h
class StreamCheckpoint;  // stream_checkpoint.h

enum class FlowShape {
  kSource,          // reads a StreamSource; appends what it takes
  kAppend,          // SQL, Append: new result rows (multiset difference)
  kAppendWindowed,  // SQL aggregation, Append: windows closed by the watermark
  kUpdate,          // SQL aggregation, Update: upsert delta by the grouping keys
  kComplete,        // SQL, Complete: the whole result
  kCdc,             // AUTO CDC over the change rows seen
  kOnce,            // a once-flow (backfill): its query runs on the first trigger only
};
const char* ShapeName(FlowShape s);
bool AppendOnly(FlowShape s);

struct FlowStream {
  const Flow* flow = nullptr;
  FlowShape shape = FlowShape::kAppend;
  std::unique_ptr<engine::stream::StreamSource> source;  // kSource
  std::string position;             // the source position after the last trigger
  std::string position_summary;     // for events
  std::shared_ptr<arrow::Table> rows;  // this flow's rows in the dataset (null = none yet)
  std::shared_ptr<arrow::Table> added;  // rows appended since the last commit (append-only)
  std::shared_ptr<arrow::Table> last_result;  // kAppend: query result at the last trigger
  bool last_result_known = false;
  std::map<std::string, int64_t> consumed;  // kAppend: input rows behind last_result
  std::optional<int64_t> watermark_us;      // kAppendWindowed: windows up to this are out
  std::vector<std::string> update_keys;     // kUpdate
  bool once_done = false;
  std::vector<engine::batch::PartFile> committed_parts;  // append-only: parts to carry over
  int64_t committed_version = 0;
  int64_t rows_written = 0;  // this run
  int64_t triggers_with_rows = 0;
  // Append-only flows, for readers that take only new rows (the incremental
  // mode): every row this flow ever put into the dataset (committed + this
  // run), and the rows it put in during the current trigger, which start at
  // row `recent_start` of that sequence.
  int64_t total_rows = 0;
  std::shared_ptr<arrow::Table> recent;
  int64_t recent_start = 0;
  // A late-rows table's receiving end for one incremental flow (flow is the
  // loop's stand-in named "<flow>.late_rows"): never stepped, it appends the
  // late rows that flow drops.
  const Flow* late_rows_of = nullptr;
  // The incremental mode's operator and state (null: Recompute mode), and
  // the JSON of the state the resumed epoch holds for it (restored once the
  // operator is made; its tables come from the checkpoint).
  std::shared_ptr<IncrementalFlow> incremental;
  std::string saved_incremental;
  // Totals over every run, kept in the checkpoint.
  struct Counters {
    int64_t rows_in = 0, rows_out = 0, late_rows = 0, triggers = 0;
  } counters;
};

struct DatasetStream {
  const Dataset* dataset = nullptr;
  std::vector<FlowStream> flows;      // pipeline order
  std::shared_ptr<arrow::Schema> schema;  // declared, or the first flow's rows
  bool dirty = false;                 // something to commit
  // Whether the dataset's rows stay in memory between triggers: true when a
  // reader in the trigger loop needs all of them (a Recompute flow, a view).
  // When only incremental flows read it, each trigger keeps just the rows it
  // adds (FlowStream::recent) and memory stays bounded; the rows are in the
  // committed version.
  bool retain = true;
  // A stream view (IsStreamView, thund/ir.h): its source's rows reach its
  // readers through FlowStream::recent and are never stored. The source's
  // position and row count go into the checkpoint epoch with the flows'
  // state, so after a restart it reads on where the last epoch stopped.
  bool transient = false;
  // A stream view whose readers use only some of its source's columns
  // (NativeRunOptions::prune_columns): their lower-case names. The source
  // leaves the others out (a Parquet drop does not read them), and so does
  // `schema`. Empty: every column.
  std::set<std::string> read_columns;
  // A view defined by a query over streams (a DuckDB view in the loop): not
  // stepped, stored or checkpointed. A stream view is not one.
  bool IsQueryView() const {
    return (dataset->kind == DatasetKind::kView || dataset->kind == DatasetKind::kTemporaryView) &&
           !transient;
  }
  std::string stamp;                  // of the committed version
  std::string version;                // "v-000007"
  int64_t version_number = 0;         // 7 (0 = none)
  int64_t rows = 0;                   // committed rows
  // A file sink: each epoch's output is published as one file named by the
  // epoch (append) or replaces the sink's files (complete), before the epoch
  // commits. A crash in between makes recovery delete the file of the lost
  // epoch, and the replay writes it again: nothing twice. A merge sink
  // (storage mode merge) upserts the epoch's rows, tagged with the epoch, so
  // a replayed epoch changes nothing. Sink rows are not kept in memory.
  bool sink = false;
  int64_t epoch = 0;  // the last epoch that published rows to the sink
  // A merge sink tags epoch E's write with E + merge_offset (chosen when the
  // stream starts, so tags continue above what the table applied before);
  // merge_replace: the first write replaces the table (a full refresh).
  int64_t merge_offset = 0;
  bool merge_replace = false;

  // All flows' rows, concatenated in flow order (empty table if none yet).
  arrow::Result<std::shared_ptr<arrow::Table>> Content() const;
  int64_t NumRows() const;
};

// Restores `ds` from its committed version and the flows' state in the
// resumed epoch (unless `fresh`). Sources are restored by the caller.
arrow::Status LoadStream(RunContext& ctx, DatasetStream* ds, bool fresh,
                         const StreamCheckpoint& checkpoint);

// Restores f->incremental's state from what LoadStream read and the
// checkpoint's tables (no-op when nothing was saved). Errors say the state is
// damaged or does not fit, and how to rebuild.
arrow::Status RestoreIncremental(FlowStream* f, StreamCheckpoint& checkpoint);

// A flow's state for the checkpoint manifest (without its tables).
nlohmann::json FlowStateJson(const FlowStream& f);

// A version StageStream prepared, published once the epoch commits.
struct StagedVersion {
  engine::batch::PendingVersion pending;
};

// Writes `ds`'s rows for epoch `epoch` (only when ds->dirty): a prepared,
// unpublished new version (appended to `staged`), or for a sink its epoch
// file / merge. Updates ds's bookkeeping as if the epoch commits.
arrow::Status StageStream(RunContext& ctx, DatasetStream* ds, int64_t epoch,
                          std::vector<StagedVersion>* staged);

}  // namespace thund::native
