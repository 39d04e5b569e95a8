// TargetGuard: the target of a keyed write must not change under it.
//
// A keyed write loads the target's keys once, then writes the rows whose keys
// were not there. Another writer adding files meanwhile could add the same
// keys (they would then be written twice); one deleting or rewriting files
// could remove keys this run skipped (those rows would be lost). So:
//   * Make takes the lock `{parent}/.{name}.thund-keyed-write.lock` beside the
//     directory (engine/checkpoint
//     StorageLock: an flock on the local disk, released by the kernel however
//     the process dies; a heartbeat object on object storage). A second thund
//     keyed write into the same directory is refused, naming the holder.
//     (Beside the target, not in it, so the target holds only data files; the
//     name starts with '.', so readers of the parent ignore it.)
//   * Make also records every file under `dir` (path, size, modification
//     time; ignored names apart), and CheckUnchanged compares the directory
//     with that record, so a writer that does not take the lock (another
//     tool, a person) is caught too: any file added, removed or changed
//     other than this run's own output files fails the write with an error
//     naming the file. Call it once the last file is committed.
//
// Thread-safety: one thread.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <map>
#include <memory>
#include <string>

#include "engine/checkpoint/storage_lock.h"

namespace thund::engine::keyed {

class TargetGuard {
 public:
  // The lock file of target directory `dir`.
  static std::string LockPath(const std::string& dir);

  // Creates `dir` when missing, takes its lock for `run_id`, records its files.
  static arrow::Result<std::unique_ptr<TargetGuard>> Make(
      std::shared_ptr<arrow::fs::FileSystem> fs, const std::string& dir,
      const std::string& run_id);

  // OK when the files under the directory are the recorded ones plus files
  // whose names start with `own_prefix` (this run's output). Else Invalid:
  // "target '...' changed while the keyed write ran: file '...' was added
  // (...)", saying what to do.
  arrow::Status CheckUnchanged(const std::string& own_prefix) const;

  // Whether Make created the directory (the target did not exist).
  bool created() const { return created_; }

 private:
  struct Stamp {
    int64_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  using Listing = std::map<std::string, Stamp>;
  static arrow::Result<Listing> List(arrow::fs::FileSystem& fs, const std::string& dir);

  TargetGuard() = default;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::string dir_;
  std::unique_ptr<checkpoint::StorageLock> lock_;
  Listing before_;
  bool created_ = false;
};

}  // namespace thund::engine::keyed
