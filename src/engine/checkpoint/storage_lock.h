// One run at a time per storage root (and per remote checkpoint root).
//
// On the local disk the lock is an flock(2) on `{path}` held for the run's
// lifetime: the kernel drops it when the process dies, however it dies, so a
// lock left by a dead process is taken over by construction. The file holds
// the holder (run id, pid, host, start time), which a refused run names.
//
// On object storage (no locks there) the lock is an object with the holder
// and a heartbeat the run refreshes at every checkpoint. Another run is
// refused while the heartbeat is younger than `stale_after_ms`, unless the
// holder ran on this host and its pid is gone (then it is taken over).
//
// Not re-entrant: a second Acquire on the same path in one process is refused
// like any other holder (tests run two "processes" this way).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

namespace thund::engine::checkpoint {

class StorageLock {
 public:
  ~StorageLock();
  StorageLock(const StorageLock&) = delete;
  StorageLock& operator=(const StorageLock&) = delete;

  // Takes the lock at `path` for `run_id`. `*took_over` (optional) is set to
  // a description of a dead holder whose lock was taken over ("" if none).
  // Fails with the holder's description when another live run holds it.
  static arrow::Result<std::unique_ptr<StorageLock>> Acquire(
      std::shared_ptr<arrow::fs::FileSystem> fs, const std::string& path,
      const std::string& run_id, std::string* took_over = nullptr,
      int64_t stale_after_ms = 120000);

  // Object storage: rewrites the heartbeat (no-op on the local disk).
  arrow::Status Refresh();

 private:
  StorageLock() = default;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::string path_;
  std::string holder_;  // our holder JSON minus the heartbeat
  std::string run_id_;
  int fd_ = -1;          // local: the flock'ed file
};

}  // namespace thund::engine::checkpoint
