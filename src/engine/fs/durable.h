// Durability against a power cut on local disk: fsync of files and of the
// directories that name them.
//
// A rename is durable only once the directory holding it is fsynced, and a
// file's bytes only once the file is. The commit sequences of thund
// (dataset_store.h, checkpoint/epoch_store.h) call these before and after
// their commit renames. Paths that are not on the local disk (object storage:
// "bucket/key", no leading '/') are skipped: an S3 object is durable once its
// upload completes.
//
// THUND_FSYNC=0 in the environment turns every sync into a no-op (for
// throwaway data on slow disks); the default is to sync.
#pragma once

#include <string>

#include <arrow/status.h>

namespace thund::engine {

// True unless THUND_FSYNC=0 (read once per process).
bool SyncEnabled();

// fsyncs the local file `path`; OK for non-local paths and missing files.
arrow::Status SyncFile(const std::string& path);
// fsyncs the local directory `dir` (its entries: creations, renames, deletions).
arrow::Status SyncDir(const std::string& dir);
// Every regular file directly in `dir`, then `dir` itself.
arrow::Status SyncDirFiles(const std::string& dir);
// The parent directory of `path`.
arrow::Status SyncParent(const std::string& path);
// Everything written to the local filesystem holding `path` (syncfs(2): one
// flush for many files, where an fsync each would force a journal commit
// each). It also waits for other writers' data on that filesystem.
arrow::Status SyncFilesystem(const std::string& path);

}  // namespace thund::engine
