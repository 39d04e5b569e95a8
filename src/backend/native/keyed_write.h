// Internal: a key-checkpointed write (Dataset::keyed_write) of one dataset in
// a `thund run` -- the native batch backend's use of KeyedWriteFilter
// (engine/keyed/keyed_write_filter.h). Semantics: docs/keyed-writes.md.
//
// Life of one write (one per dataset per run, on the run's thread):
//   auto w = KeyedDatasetWrite::Make(ctx, dataset, key_dirs, out_dir, format, rows_per_file);
//   w->PrePass(flows);              // duplicates=all only
//   for each flow: w->RunOneFlow(flow, options);
//   w->Finish();                    // the deferred final file, waits for every file
//   w->counts(), w->files()
//
// Where the filter runs, per flow (a kMessage run event says which and why):
//  * a file source (`source: {kind: files}`): on every batch read, before
//    expectations (FlowRunOptions::pre_filter);
//  * SQL: PlanFilterPlacement over the stored datasets and plain views the
//    flow reads. Each source the filter can be pushed to is read once through
//    the filter, and its kept rows are bound under its own name for the
//    flow's query (held in memory), then the name is bound back;
//  * otherwise right before the write (FilterForWrite).
// Output rows go to atomically committed files in `out_dir`
// (OutputFileWriter: "_tmp-*" while written, renamed when complete), so a
// process killed at any moment leaves whole files only, and their keys count
// as written on the rerun.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/native/flow_runner.h"
#include "backend/native/reconcile.h"
#include "engine/batch/sink_writer.h"
#include "backend/native/run_context.h"
#include "engine/keyed/keyed_write_filter.h"
#include "engine/keyed/output_file_writer.h"

namespace thund::native {

struct KeyedFile {
  std::string path;  // absolute
  int64_t rows = 0;
};

class KeyedDatasetWrite {
 public:
  // `key_dirs`: directories whose data files hold the keys already written
  // (missing ones are empty). `out_dir`: where new files go (created).
  // Removes temporaries a killed writer left in `out_dir`.
  static arrow::Result<std::unique_ptr<KeyedDatasetWrite>> Make(
      RunContext& ctx, const Dataset& d, std::vector<std::string> key_dirs, std::string out_dir,
      engine::keyed::FileFormat format, int64_t rows_per_file);

  // duplicates=all: reads the rows of every flow once (filtered like the real
  // pass) to find keys that repeat. No-op otherwise. Call before RunOneFlow.
  arrow::Status PrePass(const std::vector<const Flow*>& flows);

  // Runs `flow` (RunFlow) with the filter placed, writing its new rows.
  // `options.target_schema` is the schema rows are conformed to (may be null
  // for the first flow of an undeclared dataset).
  arrow::Result<FlowResult> RunOneFlow(const Flow& flow, FlowRunOptions options);

  // Writes the deferred rows (duplicates=all) as one file and waits for all.
  arrow::Status Finish();

  engine::keyed::KeyedCounts counts() const;
  // Files committed by this write, sorted by path.
  std::vector<KeyedFile> files() const;
  const std::string& placement() const { return placement_; }
  // The schema of the written rows (set once the first flow opened).
  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
  // Fails the first flow whose rows' schema (DescribeSchema) differs from
  // `described` (the kept version's): kept and new files must agree.
  void RequireSchema(std::string described) { required_schema_ = std::move(described); }
  // Outcome fields: keyed counts, rows_written, placement.
  void FillOutcome(DatasetOutcome* o) const;

 private:
  friend class KeyedConsumer;
  KeyedDatasetWrite(RunContext& ctx, const Dataset& d) : ctx_(ctx), d_(d) {}
  // Creates the filter (keys resolved in the declared schema, else `schema`)
  // and loads the target's keys. Once.
  arrow::Status EnsureFilter(const std::shared_ptr<arrow::Schema>& schema);
  // EnsureFilter, then the output writer for rows of `schema`. Once.
  arrow::Status OpenWriter(const std::shared_ptr<arrow::Schema>& schema);
  void Emit(const Flow* flow, const std::string& message) const;

  struct Placed;  // keyed_write.cc
  arrow::Result<Placed> Place(const Flow& flow);
  arrow::Status Restore(const Placed& placed);

  RunContext& ctx_;
  const Dataset& d_;
  engine::keyed::KeyedWriteOptions options_;
  std::vector<std::string> key_dirs_;
  std::string out_dir_;
  engine::keyed::OutputOptions output_;
  std::shared_ptr<arrow::Schema> schema_;
  std::unique_ptr<engine::keyed::KeyedWriteFilter> filter_;
  std::unique_ptr<engine::keyed::OutputFileWriter> writer_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> deferred_;
  int64_t rows_read_ = 0;
  std::string placement_;
  std::string required_schema_;
  mutable std::mutex files_mu_;
  std::vector<KeyedFile> files_;
};

// The two runners (keyed_sink.cc, keyed_stored.cc), called by WriteSink and
// MaterializeStored when the dataset has keyed_write keys, after the shared
// reconciliation decided the dataset must be computed (`previous`: its last
// committed version or sink record; `fp`: its fingerprint now).
struct DatasetTask;
// What RunKeyedFlows did: the flows run (with their results) and the
// once-flows the new state records.
struct KeyedFlowRuns {
  std::vector<std::pair<const Flow*, FlowResult>> done;
  std::vector<std::string> once_flows;
  const Flow* failed = nullptr;  // the flow whose error RunKeyedFlows returned
};
// Runs every flow of `task` through `w` (options from `expectations` and the
// dataset's schema), adding counts to `outcome`. Once-flows named in
// `ran_before` are skipped with a kFlowSkipped event saying `skip_why`. On a
// flow's error, finishes `w` (files already committed stay; their keys count
// on the rerun) and returns the error with runs->failed set.
arrow::Status RunKeyedFlows(RunContext& ctx, const DatasetTask& task, KeyedDatasetWrite& w,
                            const std::vector<engine::batch::CompiledExpectation>& expectations,
                            const std::vector<std::string>& ran_before,
                            const std::string& skip_why, DatasetOutcome* outcome,
                            KeyedFlowRuns* runs);
// Rows per output file: the storage option rows_per_file, default 1,048,576.
arrow::Result<int64_t> KeyedRowsPerFile(const Dataset& d);
DatasetOutcome WriteKeyedSink(RunContext& ctx, const DatasetTask& task,
                              const std::optional<engine::batch::VersionManifest>& previous,
                              const engine::batch::Fingerprint& fp, const Decision& decision,
                              const engine::batch::SinkTarget& target,
                              const std::string& state_path);
DatasetOutcome MaterializeKeyedStored(RunContext& ctx, const DatasetTask& task,
                                      const std::optional<engine::batch::VersionManifest>& previous,
                                      const engine::batch::Fingerprint& fp,
                                      const Decision& decision);

}  // namespace thund::native
