// The checkpoint store of a streaming pipeline: one epoch per trigger, for
// the whole pipeline (backend/native/stream_checkpoint.h decides what goes in).
//
// Layout under `dir` ({state_root}/{pipeline}):
//   epoch=000007/<name>.parquet   files written by epoch 7 (immutable once named)
//   epoch=000007/_manifest.json   the commit point of epoch 7
//   _latest                       "epoch=000007": the newest committed epoch
//
// Commit sequence of epoch E: Begin(E) creates epoch=E/ (a leftover of an
// uncommitted E is removed first); WriteFile() writes each state file (its
// bytes are hashed on the way, XXH3-64); Commit() flushes the filesystem
// (syncfs: the files, their directory, and what the caller wrote before),
// writes the manifest (aside, fsynced, renamed, directory fsynced: the
// commit point) and then `_latest` (not synced: a hint; recovery lists the
// epochs). On object storage every object is
// written once under its final name and `_latest` last.
//
// A manifest lists every file the epoch needs with its size and hash; files
// may live in older epochs' directories (incremental checkpoints). Its JSON
// carries a checksum of itself, so a truncated or altered manifest is
// recognised. ReadFile() checks size and hash. What a damaged epoch means is
// the caller's decision (recovery falls back to an older one).
//
// Retention (Retain): the newest `keep` committed epochs stay, with every
// epoch directory their manifests reference; older epochs and uncommitted
// directories below the newest committed one are deleted.
//
// Thread-safety: none; one run owns the store (storage_lock.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/buffer.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <arrow/result.h>
#include <nlohmann/json.hpp>

namespace thund::engine::checkpoint {

struct EpochFile {
  std::string path;  // relative to the store dir: "epoch=000005/flow-0-kept-0.parquet"
  int64_t bytes = 0;
  uint64_t hash = 0;  // XXH3-64 of the bytes
};

struct EpochManifest {
  int64_t epoch = 0;
  std::string run_id;
  int64_t committed_ms = 0;
  std::vector<EpochFile> files;
  nlohmann::json body = nlohmann::json::object();  // the caller's content

  const EpochFile* Find(const std::string& path) const;
};

// "epoch=000007" for 7; nullopt for other names.
std::string EpochDirName(int64_t epoch);
std::optional<int64_t> ParseEpochDirName(const std::string& name);

class EpochStore {
 public:
  EpochStore(std::shared_ptr<arrow::fs::FileSystem> fs, std::string dir)
      : fs_(std::move(fs)), dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  arrow::fs::FileSystem& fs() const { return *fs_; }

  // Epoch numbers of every epoch=* directory, newest first (committed or not).
  arrow::Result<std::vector<int64_t>> ListEpochs() const;
  // The manifest of `epoch`: NotFound-like IOError when it has none (never
  // committed), IOError naming the file when it does not parse or check.
  arrow::Result<EpochManifest> ReadManifest(int64_t epoch) const;
  // The bytes of `file`, checked against its size and hash (taken from the
  // prefetched ones when there).
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadFile(const EpochFile& file) const;
  // Reads and checks `file` now and keeps its bytes for the one ReadFile of
  // it that follows (recovery checks an epoch whole before using it, and
  // reads each file once).
  arrow::Status Prefetch(const EpochFile& file);
  void DropPrefetched() { prefetched_.clear(); }

  arrow::Status Begin(int64_t epoch);
  // Writes epoch=<epoch>/<name> through `write`; returns its reference.
  arrow::Result<EpochFile> WriteFile(
      int64_t epoch, const std::string& name,
      const std::function<arrow::Status(const std::shared_ptr<arrow::io::OutputStream>&)>& write);
  // Commits `m` (m.epoch must have been begun; m.committed_ms is filled in).
  arrow::Status Commit(EpochManifest* m);

  // Deletes epoch directories other than those of the newest `keep`
  // committed epochs (`committed`, newest first, with their manifests) and
  // the directories they reference. Directories above committed[0] are left
  // (the caller removes uncommitted leftovers with Discard). Problems are
  // notes, never errors: the checkpoint is already committed.
  void Retain(const std::vector<EpochManifest>& committed, size_t keep,
              std::vector<std::string>* notes);
  // Deletes the directory of `epoch` (an uncommitted or damaged leftover).
  arrow::Status Discard(int64_t epoch);
  // Moves a damaged epoch aside to _damaged/epoch=N-<token> (kept for a
  // post-mortem); deletes it where a move is not possible.
  arrow::Status SetAside(int64_t epoch);

 private:
  std::string EpochPath(int64_t epoch) const;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::string dir_;
  mutable std::map<std::string, std::shared_ptr<arrow::Buffer>> prefetched_;  // by path
};

}  // namespace thund::engine::checkpoint
