// Internal: what a streaming run (Recompute mode) keeps per streaming dataset
// and per flow, and how it is loaded from and committed to the dataset store.
//
// A streaming dataset's committed version holds, per flow, the rows that flow
// has put into it (parts tagged with the flow), plus `_stream.json` in the
// version dir: per flow the source position, the watermark already emitted
// (windowed Append), the input prefixes its last result covered (Append), and
// whether a once-flow ran. Version, parts and state switch together at the
// dataset's atomic commit (dataset_store.h), so a crash leaves a consistent
// (older) version: the next run resumes from it, re-reading what was not
// committed — nothing lost, nothing twice.
//
// Append-only flows (sources, Append mode) keep their committed part files:
// the next version links (or copies) them and adds one part of new rows.
// Complete, Update and CDC flows rewrite their rows each commit.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/table.h>

#include "backend/native/run_context.h"
#include "engine/stream/stream_source.h"

namespace thund::native {

struct IncrementalFlow;  // incremental_flow.h

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
  // the state the committed version holds for it (restored once the operator
  // is made): its JSON, and its tables' files (in saved_dir) by name.
  std::shared_ptr<IncrementalFlow> incremental;
  std::string saved_incremental;
  std::map<std::string, std::vector<std::string>> saved_tables;
  std::string saved_dir;
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
  std::string stamp;                  // of the committed version
  std::string version;                // "v-000007"
  int64_t rows = 0;                   // committed rows
  // A file sink: each trigger's output is published as one file named by the
  // trigger's epoch (append) or replaces the sink's files (complete); the flow
  // state goes to {root}/_thund/streams/{sink}.json after the file. A crash in
  // between makes the rerun write the same epoch again under the same name,
  // replacing the file: nothing twice. Sink rows are not kept in memory.
  bool sink = false;
  int64_t epoch = 0;  // last published epoch

  // All flows' rows, concatenated in flow order (empty table if none yet).
  arrow::Result<std::shared_ptr<arrow::Table>> Content() const;
  int64_t NumRows() const;
};

// Restores `ds` from its committed version (unless `fresh`): rows per flow
// and the state in _stream.json. Sources are restored by the caller.
arrow::Status LoadStream(RunContext& ctx, DatasetStream* ds, bool fresh);

// Restores f->incremental's state from what LoadStream read (no-op when
// nothing was saved). Errors say the state is damaged and how to rebuild.
arrow::Status RestoreIncremental(FlowStream* f);

// Writes and commits a new version of `ds` (only when ds->dirty); for a sink,
// publishes the trigger's file and then its state.
arrow::Status CommitStream(RunContext& ctx, DatasetStream* ds);

}  // namespace thund::native
