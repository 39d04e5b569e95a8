// Files that appear whole or not at all.
//
// A file is written under a hidden temporary name in the same directory and then
// renamed into place (rename(2) is atomic on a local filesystem; an S3 object
// becomes visible only when its upload completes). Temporary names start with
// "_tmp-" and end with ".inprogress", so readers that glob "*.parquet" (DuckDB,
// pyarrow, thund itself) never see a partial file, and CleanupTemporaries() can
// remove what a killed writer left behind.
//
// Guarantee: on local disk the temporary is fsynced before the rename and the
// directory after it (durable.h), so a written file survives a power cut; on
// object storage the upload completing is the durability point.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <arrow/result.h>

namespace thund::engine {

// A fresh random name component (hex, 16 chars). Thread-safe.
std::string UniqueToken();

// The temporary path used while writing `path`.
std::string TemporaryPathFor(const std::string& path);
// True for a path inside an object store's filesystem (no leading '/': Arrow's
// S3 filesystem names objects "bucket/key"), where nothing is renamed.
bool IsObjectStorePath(const std::string& path);
// True when `basename` looks like one of our temporaries.
bool IsTemporaryName(std::string_view basename);

// Writes `path` by calling `write` on a stream to a temporary file, closing it,
// and renaming it to `path` (replacing an existing file). On object storage
// (a path without a leading '/') the object is written in place: it appears
// whole when the upload completes. On any failure the
// temporary is removed (best effort) and `path` is left as it was.
// REQUIRES: the parent directory of `path` exists.
// `sync` false skips the fsyncs: for a file whose loss a power cut may
// cause because something durable written after it restores it (a
// dataset's pointer after its checkpoint epoch named the version), or
// whose durability a later SyncFilesystem provides.
arrow::Status WriteFileAtomically(
    arrow::fs::FileSystem& fs, const std::string& path,
    const std::function<arrow::Status(arrow::io::OutputStream*)>& write, bool sync = true);

// Same, for content held in memory.
arrow::Status WriteFileAtomically(arrow::fs::FileSystem& fs, const std::string& path,
                                  std::string_view content, bool sync = true);

// Reads a whole (small) file.
arrow::Result<std::string> ReadWholeFile(arrow::fs::FileSystem& fs, const std::string& path);

// Deletes temporaries left in `dir` (not recursive) by killed writers. Returns
// how many were removed. A missing `dir` is not an error.
arrow::Result<int> CleanupTemporaries(arrow::fs::FileSystem& fs, const std::string& dir);

}  // namespace thund::engine
