// Internal: the checkpoints of a streaming run — one epoch per trigger for
// the whole loop (every flow and dataset), so state and outputs advance
// together (engine/checkpoint/epoch_store.h holds the files).
//
// Per committed trigger (StreamLoop, step 3):
//   1. StageStream (stream_state.h) writes a prepared, unpublished version of
//      each dataset the trigger changed, and publishes a file sink's
//      epoch-named file (a merge sink applies its rows, tagged with the epoch);
//   2. Commit() writes every flow's operator state (state_image.h: only what
//      changed since the last epoch) and the manifest — the flows' source
//      positions, W and clocks, counters, definitions and the datasets'
//      versions. The manifest is the commit point;
//   3. the prepared versions are published (dataset_store.h); old epochs and
//      the dataset versions only they named are deleted (retention).
// A crash before 2 leaves the previous epoch in force (the prepared versions
// and sink files of the lost trigger are leftovers); a crash after 2 leaves
// the epoch committed and recovery finishes step 3.
//
// Recover(), before the loop: the newest epoch whose manifest, state files
// and dataset versions check is resumed from; each newer directory is an
// uncommitted leftover (deleted) or damaged (set aside, with a kRecovery
// event) and the one before is tried. Datasets are re-pointed at the
// versions the epoch names; a file sink's files of later epochs are deleted
// (the replay writes them again). With epochs present but none good the run
// stops, saying to run with --full-refresh.
//
// Where: `{state_root}/{pipeline}`; state_root is the pipeline
// configuration's `thund.state_root` (a local path or s3://bucket/prefix),
// else `{storage root}/_thund/checkpoints`. Also read from the configuration:
// `thund.checkpoint.retain` (epochs kept, default 3), `thund.checkpoint.interval`
// (triggers per epoch, default 1; the last trigger always commits) and
// `thund.checkpoint.incremental` (false: a full state image every epoch) and
// `thund.checkpoint.back_off_by_time` (false: the images' time back-off is off,
// so what an epoch writes does not depend on timing) and
// `thund.checkpoint.positional` (false: an image's change is always found by
// matching sorted row hashes, never place by place; state_image.h).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/native/run_context.h"
#include "backend/native/stream_state.h"
#include "engine/checkpoint/epoch_store.h"
#include "engine/checkpoint/state_image.h"
#include "engine/checkpoint/storage_lock.h"

namespace thund::native {

struct CheckpointSettings {
  std::string state_root;  // resolved location of {state_root}/{pipeline}
  size_t retain = 3;
  int64_t interval = 1;
  engine::checkpoint::ImageOptions image;
};

// Reads the settings from the pipeline configuration (errors name the key).
arrow::Result<CheckpointSettings> ReadCheckpointSettings(
    const Pipeline& p, const engine::batch::StorageLayout& layout);

// The newest epoch whose manifest reads (its files are not checked), for
// `thund explain`; nullopt when there is none.
arrow::Result<std::optional<engine::checkpoint::EpochManifest>> NewestEpoch(
    const Pipeline& p, const engine::batch::StorageLayout& layout);

// What a flow's committed state was built for; a change refuses the state.
nlohmann::json FlowDefinition(const Flow& f);

class StreamCheckpoint {
 public:
  static arrow::Result<std::unique_ptr<StreamCheckpoint>> Open(RunContext& ctx);

  // Finds the epoch to resume from (see above). `fresh`: datasets that start
  // over (full refresh): their state and versions are not used or checked.
  arrow::Status Recover(RunContext& ctx, std::vector<DatasetStream>& streams,
                        const std::set<std::string>& fresh);

  // The committed state of a flow (null: none) and a dataset's entry.
  const nlohmann::json* SavedFlow(const std::string& flow) const;
  const nlohmann::json* SavedDataset(const std::string& dataset) const;
  int64_t committed_epoch() const { return committed_; }

  // Restores f->incremental's state tables from the resumed epoch.
  arrow::Status RestoreTables(FlowStream* f);
  // A kRecovery event: how long reading, checking and decoding the resumed
  // state took in all (after every RestoreTables).
  void ReportRestored(RunContext& ctx) const;

  // Whether trigger `index` ends an epoch (the last one always does: the
  // loop calls Commit after it regardless).
  bool Due(int64_t index) const { return index % settings_.interval == 0; }

  // Steps 2 and 3 above for the next epoch (committed_epoch() + 1), given
  // the versions StageStream prepared.
  arrow::Status Commit(RunContext& ctx, std::vector<DatasetStream>& streams,
                       std::vector<StagedVersion>* staged);

 private:
  StreamCheckpoint(std::shared_ptr<arrow::fs::FileSystem> fs, CheckpointSettings s)
      : store_(std::move(fs), s.state_root), settings_(std::move(s)) {}
  arrow::Status Check(RunContext& ctx, const engine::checkpoint::EpochManifest& m,
                      const std::set<std::string>& fresh);
  arrow::Status DeleteLaterSinkFiles(RunContext& ctx, const DatasetStream& ds);
  std::set<int64_t> KeptVersions(const std::string& dataset) const;

  engine::checkpoint::EpochStore store_;
  CheckpointSettings settings_;
  std::unique_ptr<engine::checkpoint::StorageLock> lock_;  // object storage roots
  std::deque<engine::checkpoint::EpochManifest> retained_;  // newest first
  // flow -> state table -> its image.
  std::map<std::string, std::map<std::string, engine::checkpoint::TableImage>> images_;
  int64_t committed_ = 0;
  int64_t recover_ms_ = 0, restore_ms_ = 0, restored_rows_ = 0, state_bytes_ = 0;
  int64_t restored_bytes_ = 0;  // the restored tables' Arrow buffers
};

}  // namespace thund::native
