// Versioned, atomically committed datasets under a storage root
// (layout: storage_layout.h, docs/storage.md).
//
// Commit protocol for one dataset:
//   1. Begin(): create {dataset}/v-N/ (N = one above every v-* dir present,
//      committed or abandoned) and write part files into it.
//   2. Commit() = Prepare() + Publish(): fsync the part files and v-N, write
//      v-N/_manifest.json (fsynced), then replace {dataset}/_current (write
//      aside, fsync, rename, fsync the dir: the commit point), then point the
//      `current` symlink at v-N, then garbage-collect.
//      A streaming run prepares the versions of every dataset a trigger
//      changed, commits its pipeline epoch (checkpoint/epoch_store.h), and
//      only then publishes them; recovery re-points _current at the versions
//      the committed epoch names (SetCurrent), forward or back.
// A failure or crash before the rename of _current leaves the previous
// version current, readable and unchanged. Garbage collection keeps the new
// and the previous committed version (readers that started before the commit
// keep working), and deletes other version dirs and leftover temporaries.
//
// Every write goes through the arrow::fs::FileSystem given to the store (the
// fault-injection seam), except the `current` symlink, which arrow::fs cannot
// create: it is a convenience for DuckDB/pyarrow users, derived from _current.
//
// Thread-safety: not thread-safe; one run writes a storage root at a time.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include "engine/batch/storage_layout.h"
#include "engine/batch/version_manifest.h"

namespace thund::engine::batch {

struct PendingVersion {
  std::string dataset;
  int64_t version = 0;
  std::string dir;  // absolute path of v-N
};

class DatasetStore {
 public:
  DatasetStore(std::shared_ptr<arrow::fs::FileSystem> fs, StorageLayout layout)
      : fs_(std::move(fs)), layout_(std::move(layout)) {}

  const StorageLayout& layout() const { return layout_; }
  arrow::fs::FileSystem& fs() const { return *fs_; }
  const std::shared_ptr<arrow::fs::FileSystem>& shared_fs() const { return fs_; }

  // The committed version of `dataset`; nullopt when it was never committed.
  // A pointer naming a version without a readable manifest is an IOError.
  arrow::Result<std::optional<VersionManifest>> Current(const std::string& dataset) const;

  // Step 1 above.
  arrow::Result<PendingVersion> Begin(const std::string& dataset);

  // Step 2 above. `manifest.dataset/version` are filled in from `p`. Problems
  // after the commit point (symlink, garbage collection) do not fail the
  // commit; they are appended to `notes` when it is not null.
  arrow::Status Commit(const PendingVersion& p, VersionManifest manifest,
                       std::vector<std::string>* notes = nullptr);

  // The two halves of Commit. Prepare makes v-N complete and durable (its
  // manifest is written; `manifest` gets dataset/version/time filled in) but
  // not current. Publish makes it current, then deletes versions other than
  // the new one, the previous current one and `keep`.
  // `sync` false leaves durability to the caller (a streaming run's
  // checkpoint syncs the filesystem once before its epoch's commit point, and
  // its epoch re-points datasets after a power cut).
  arrow::Status Prepare(const PendingVersion& p, VersionManifest* manifest, bool sync = true);
  arrow::Status Publish(const PendingVersion& p, const std::set<int64_t>& keep,
                        std::vector<std::string>* notes = nullptr, bool sync = true);

  // Points `dataset`'s _current (and symlink) at an existing, prepared
  // `version` without collecting garbage: recovery to a checkpoint epoch.
  // REQUIRES: v-<version>/_manifest.json exists (else an IOError).
  arrow::Status SetCurrent(const std::string& dataset, int64_t version);
  // Points the `current` symlink at `version` when it names another (a crash
  // between the pointer's rename and the link's). Local roots only; best effort.
  void RepairLink(const std::string& dataset, int64_t version) const;
  // Makes `dataset` have no committed version (its version dirs stay until
  // the next commit collects them).
  arrow::Status ClearCurrent(const std::string& dataset);

  // Best-effort removal of an uncommitted version dir.
  void Abandon(const PendingVersion& p);

 private:
  void CollectGarbage(const std::string& dataset, int64_t keep_new, std::set<int64_t> keep,
                      std::vector<std::string>* notes);

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  StorageLayout layout_;
};

// Points `link` at `target` (a sibling name) by creating a temporary symlink
// and renaming it over `link`. Local filesystem only; not counted by the
// fault-injection seam.
arrow::Status ReplaceSymlink(const std::string& link, const std::string& target);

}  // namespace thund::engine::batch
