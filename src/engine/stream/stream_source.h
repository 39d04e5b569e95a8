// Streaming sources for micro-batch runs: a file drop, a deterministic
// generator (keyed events, Nexmark) and in-memory batches from the C++ API.
//
// Lifecycle (driven by the native backend's trigger loop):
//   1. MakeStreamSource(); then Restore(position) with the position committed
//      by an earlier run, if any ("" = start from the beginning).
//   2. Per trigger: Next(limit) returns the rows that trigger takes (possibly
//      none). The source's in-memory position advances at once; the caller
//      persists Position() only after the trigger's results are committed, so
//      a crash before the commit re-reads the same input on the next run.
//   3. Exhausted() tells a bounded source has nothing left, ever (generator
//      with total_rows, memory batches all taken). A file drop is unbounded:
//      more files may arrive; Exhausted() is always false.
//
// Determinism: for the same inputs, position and limits, Next() returns the
// same rows in the same order (files in lexicographic path order; generated
// rows as a pure function of seed and offset).
//
// Thread-safety: none; one trigger loop owns a source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <arrow/filesystem/type_fwd.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/table.h>

#include "thund/ir.h"

namespace thund::engine::stream {

// How much one trigger takes.
struct TriggerLimit {
  // true: everything available now in one trigger (Trigger::Once). false: at
  // most one source-sized step (a generator's rows_per_batch, one memory
  // batch, a file drop's max_files_per_trigger files; default: all new files).
  bool take_all = false;
};

struct SourceBatch {
  std::shared_ptr<arrow::Table> rows;  // never null; may have 0 rows
  // Short, human-readable position after this batch, for run events:
  // "files=3 (+1)", "offset=2000", "batch=2/5".
  std::string position_summary;
};

class StreamSource {
 public:
  virtual ~StreamSource() = default;

  // The schema of every batch Next() returns. For a file drop without a
  // declared schema it is known only after the first file was read: null
  // until then.
  virtual std::shared_ptr<arrow::Schema> schema() const = 0;

  // The rows for the next trigger; nullopt when nothing new is available now.
  // Errors name the flow and, for files, the file (bad file content, a file
  // whose columns do not match the stream's schema, ...). After an error the
  // position is unchanged.
  virtual arrow::Result<std::optional<SourceBatch>> Next(const TriggerLimit& limit) = 0;

  virtual bool Exhausted() const = 0;

  // True when the input is handed in per run (in-memory batches): a rerun is
  // not restored to an earlier run's position, and running out of it is not
  // the end of the stream (windows stay open).
  virtual bool PerRun() const { return false; }

  // A hint: the rows' readers use only the columns named in `lower_names`
  // (lower case). A source may then leave the others out of what Next()
  // returns (a Parquet file drop does not read them); schema() stays whole.
  // The caller selects the columns it needs either way. Empty: all.
  virtual void ReadOnly(const std::set<std::string>& lower_names) { (void)lower_names; }

  // The position as text (JSON) that Restore() accepts; "" at the start.
  virtual std::string Position() const = 0;
  // Continue after `position` (from Position() of an earlier run). Invalid,
  // naming the flow, when the text is not a position of this kind of source.
  virtual arrow::Status Restore(const std::string& position) = 0;
};

struct StreamSourceContext {
  const Flow* flow = nullptr;        // the source flow (names in errors)
  const Dataset* target = nullptr;   // declared schema, if any
  // Where file-drop files are listed and read; null = the local filesystem.
  std::shared_ptr<arrow::fs::FileSystem> filesystem;
  // MemorySource batches (RunOptions::memory_streams[name]); may be null for
  // other kinds.
  const std::vector<std::shared_ptr<arrow::RecordBatch>>* memory_batches = nullptr;
};

// REQUIRES: ctx.flow->source holds `spec`. Fails (Invalid, naming the flow and
// the option) on bad options, e.g. an unknown generator kind, rows_per_batch
// <= 0, a memory source whose batches were not given.
arrow::Result<std::unique_ptr<StreamSource>> MakeStreamSource(const SourceSpec& spec,
                                                              const StreamSourceContext& ctx);

}  // namespace thund::engine::stream
