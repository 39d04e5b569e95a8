// Execution backends. A backend says what it can run (capabilities), refuses
// up front what it cannot (Check), and runs a pipeline, streaming RunEvents to
// the caller and ending with a RunSummary.
//
// Threading: a backend object is immutable after Make() and may be shared.
// Run() calls `RunOptions::on_event` on the calling thread, in order; the
// callback must not call back into the backend.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/filesystem/type_fwd.h>
#include <arrow/result.h>
#include <arrow/type_fwd.h>

#include "thund/diagnostic.h"
#include "thund/ir.h"

namespace thund {

// The names RequiredCapabilities() (validate.h) produces. A backend supports a
// flow when it supports every capability the flow needs.
struct Capabilities {
  std::set<std::string> supported;
  bool Supports(const std::string& cap) const { return supported.count(cap) > 0; }
};

enum class RunPhase { kStarting, kPlanning, kRunning, kCompleted, kFailed, kCanceled };
const char* Name(RunPhase p);

// One thing that happened during a run. Which fields are meaningful depends on
// `kind`; unused fields keep their defaults.
struct RunEvent {
  enum class Kind {
    kPhase,          // phase
    kFlowStarted,    // flow, dataset
    kFlowProgress,   // flow, rows_in, rows_out
    kFlowFinished,   // flow, dataset, rows_in, rows_out, elapsed_ms
    kFlowSkipped,    // flow, dataset, message = why (up to date / upstream failed)
    kFlowFailed,     // flow, dataset, message = the error
    kExpectation,    // flow, dataset, name, action, count (violations), rows_in
    kFallback,       // flow, message = what is run instead and why
    kTrigger,        // flow, trigger index, rows_in, rows_out, elapsed_ms, positions
    kLateRows,       // flow, count
    kCheckpoint,     // epoch, elapsed_ms, count (bytes written), message (what it holds)
    kRecovery,       // epoch resumed from, message = what recovery found and did
    kMessage,        // message
  };
  Kind kind = Kind::kMessage;
  int64_t time_ms = 0;  // wall clock, ms since the Unix epoch
  RunPhase phase = RunPhase::kRunning;
  std::string flow;
  std::string dataset;
  std::string name;     // expectation name
  std::string action;   // expectation action
  int64_t rows_in = 0;
  int64_t rows_out = 0;
  int64_t count = 0;
  int64_t elapsed_ms = 0;
  int64_t trigger = 0;
  int64_t epoch = 0;
  StringMap positions;  // source -> position (files taken, offset, batch index)
  std::string message;

  static const char* KindName(Kind k);
  std::string ToString() const;  // one readable line
  std::string ToJson() const;    // one JSON object, no newline
};

// What happened to one dataset in a run.
enum class DatasetStatus { kComputed, kUpToDate, kFailed, kSkipped };
// "computed" | "up_to_date" | "failed" | "skipped", and the inverse.
const char* Name(DatasetStatus s);
std::optional<DatasetStatus> ParseDatasetStatus(std::string_view s);

// ------------------------------------------------ native engine extension ----
// What only the native engine (NativeBackend: Arrow + DuckDB on this machine)
// reads or fills. Other backends ignore RunOptions::native and leave
// DatasetOutcome::native unset.

// Counts of a key-checkpointed write (Dataset::keyed_write; docs/keyed-writes.md).
struct NativeKeyedCounts {
  int64_t rows_read = 0;              // rows that reached the keyed filter
  int64_t rows_skipped_existing = 0;  // key already at the target
  int64_t rows_skipped_duplicate = 0;  // duplicates=first: key written earlier in the run
  int64_t rows_null_key = 0;          // null_keys=drop: a key column was NULL
  std::string placement;              // per flow, where the filter ran
};

struct NativeDatasetOutcome {
  int64_t rows_in = 0;   // rows the flows produced before expectations dropped any
  int64_t bad_rows = 0;  // malformed input rows skipped (bad_rows: drop | dead_letter)
  std::string version;   // the committed version, e.g. "v-000003" ("" if none)
  // Set when the dataset has a keyed write; DatasetOutcome::rows_written is
  // then the rows this run wrote (new keys only).
  std::optional<NativeKeyedCounts> keyed;
};

struct NativeRunOptions {
  // Every write (datasets, sinks, run history) goes through this filesystem;
  // null = the local filesystem. Tests pass a FaultInjectingFileSystem.
  std::shared_ptr<arrow::fs::FileSystem> filesystem;
  int threads = 0;  // DuckDB worker threads; 0 = one per core
  // Re-registering in-memory rows of an unchanged schema swaps only the data
  // (DuckDbSessionOptions::reuse_arrow_views); false re-creates the views.
  bool reuse_arrow_views = true;
  // Fast paths of the incremental aggregate (backend/native/partial_merge.h),
  // each with a plain twin: partials merge in C++ hash tables (false: a
  // DuckDB GROUP BY over the state and the new partials), and hopping rows
  // are pre-aggregated per pane (false: each row joins each of its windows).
  bool hash_merge = true;
  bool hop_panes = true;
  // The partials of a window right on a stream's scan are computed in C++
  // from the new rows (false: by the partial query in DuckDB, its plain twin);
  // so are window panes' partials, and tumbling panes' closing windows.
  bool direct_partial = true;
  // Streaming: rows of a dataset without expectations go from the flow that
  // made them to the dataset as Arrow when DuckDB would hand them back in the
  // same types (false: through a DuckDB query, as rows with expectations go).
  bool direct_check = true;
  // Streaming: a stream view's source keeps only the columns its readers'
  // queries name (plan::ColumnNamesRead), and a Parquet file drop reads only
  // those (false: every column, the plain twin).
  bool prune_columns = true;
  // Streaming: a window-local query whose stream rows all go through windowed
  // aggregations in derived tables keeps per-pane partials of those instead
  // of the raw rows (engine/stream/window_panes.h; false: the raw rows, and
  // the whole query over each closing window's rows, the plain twin).
  bool window_panes = true;
  // Streaming: a join of two streams without a time bound, on an equi-key of
  // their own columns, keeps each side's rows hashed by that key, and a
  // trigger binds to the join only the kept rows whose key the other side's
  // new rows hold (false: every kept row, the plain twin; the join's
  // condition decides the result either way).
  bool join_index = true;
  // Streaming: a join of two streams keeps of each side's new rows only those
  // that pass the WHERE / ON conjuncts reading that side alone (false: every
  // row, the plain twin; the query applies the conjuncts either way).
  bool join_prefilter = true;
};

// ---------------------------------------------------------------------------

// Per-dataset outcome in the summary.
struct DatasetOutcome {
  std::string dataset;
  DatasetStatus status = DatasetStatus::kComputed;
  std::string reason;  // why it was (not) computed
  int64_t rows_written = 0;
  std::map<std::string, int64_t> expectation_violations;  // name -> count
  std::optional<NativeDatasetOutcome> native;  // set by the native engine only
};

struct RunSummary {
  std::string run_id;
  std::string pipeline;
  RunPhase status = RunPhase::kCompleted;
  int64_t started_ms = 0;
  int64_t duration_ms = 0;
  std::string mode;  // "batch", "streaming (recompute)", ...
  std::vector<DatasetOutcome> datasets;
  std::vector<std::string> notes;  // honesty: fallbacks, advisory knobs
  std::string error;               // first error when status == kFailed
  std::string ToString() const;
};

struct RunOptions {
  std::string storage_root;  // "" = pipeline.storage, else the documented default
  std::set<std::string> full_refresh;  // datasets to truncate and recompute
  bool full_refresh_all = false;
  std::set<std::string> refresh;       // only these (and what they need) run
  int64_t max_triggers = 0;            // streaming: 0 = no cap
  // The run-wide default for streaming flows that set no mode (nullopt =
  // kRecompute); a flow's own streaming.mode wins. See EffectiveStreamingMode.
  std::optional<StreamingMode> streaming_mode;
  // In-memory stream inputs (MemorySource::name -> one batch per trigger).
  std::map<std::string, std::vector<std::shared_ptr<arrow::RecordBatch>>> memory_streams;
  std::function<void(const RunEvent&)> on_event;  // may be empty
  const std::atomic<bool>* stop = nullptr;        // set to request a clean stop
  NativeRunOptions native;                        // read by the native engine only
};

class ExecBackend {
 public:
  virtual ~ExecBackend() = default;
  virtual std::string name() const = 0;
  virtual Capabilities capabilities() const = 0;
  // Every reason this backend cannot run `p` (empty = it can), per flow.
  virtual Diagnostics Check(const Pipeline& p) const = 0;
  // Runs `p` to completion (or until options.stop). A flow failure is not an
  // error Status: it is reported in events and the summary (status kFailed).
  // An error Status means the run could not start (bad storage root, ...).
  virtual arrow::Result<RunSummary> Run(const Pipeline& p, const RunOptions& options) = 0;
};

}  // namespace thund
