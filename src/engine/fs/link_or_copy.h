// Carrying a committed file into a new version dir without rewriting it.
#pragma once

#include <string>

#include <arrow/filesystem/filesystem.h>

namespace thund::engine {

// Makes `to` hold the bytes of `from`. On the local filesystem a hard link
// (no bytes copied; readers of either path see the same immutable file),
// falling back to a copy where linking fails (another device, no support);
// on any other filesystem (object storage, the fault-injection seam) a
// CopyFile through `fs`, so the seam sees the write.
// REQUIRES: `from` is never modified in place afterwards (committed data).
arrow::Status LinkOrCopy(arrow::fs::FileSystem& fs, const std::string& from,
                         const std::string& to);

}  // namespace thund::engine
