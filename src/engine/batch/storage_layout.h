// Where a batch run keeps its data under the storage root (docs/storage.md).
//
//   {root}/{dataset}/v-000003/part-00000-00000.parquet   one immutable version
//   {root}/{dataset}/v-000003/_manifest.json             what the version holds
//   {root}/{dataset}/_current                            "v-000003": the commit point
//   {root}/{dataset}/current -> v-000003                 convenience symlink (local roots)
//   {root}/_thund/runs/run-<run id>.parquet              run history, one file per run
//   {root}/_thund/sinks/{sink}.json                      last successful write of a sink
//   {root}/_thund/sinks/{sink}/                          default location of a sink's files
//
// Names starting with "_" or "." are never data: readers glob "*.parquet".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <arrow/result.h>
#include <arrow/status.h>

namespace thund::engine::batch {

// "v-000003" for 3. Versions start at 1.
std::string VersionName(int64_t version);
// 3 for "v-000003"; nullopt for anything else.
std::optional<int64_t> ParseVersionName(std::string_view name);

// The side dataset where dead_letter mode keeps the malformed rows of `dataset`.
std::string DeadLetterName(const std::string& dataset);

// Paths are plain strings joined with '/', as the store's filesystem names
// them: on local disk `root` is absolute; on S3 it is "bucket/prefix". No
// trailing slash (see Make).
class StorageLayout {
 public:
  // Makes `location` an absolute path (relative to the working directory).
  // A `file:` URI (file:///abs, file:/abs: what `spark-pipelines init`
  // writes) is the local path it names. "s3://bucket/prefix" (also s3a://,
  // s3n://) is a root on S3 (the caller resolves its filesystem,
  // engine/fs/filesystem_uri.h). Fails on an empty root, a `file:` URI of
  // another host, or any other URI.
  static arrow::Result<StorageLayout> Make(const std::string& location);

  const std::string& root() const { return root_; }
  // On the local disk (an absolute path), as opposed to object storage.
  bool local() const { return !root_.empty() && root_[0] == '/'; }
  // The root as a location to resolve or print: the path, or "s3://bucket/prefix".
  std::string location() const { return scheme_ + root_; }
  // A path of this layout as a location: what DuckDB reads and ResolveLocation
  // takes (an s3:// URI on object storage, else the path itself).
  std::string Uri(const std::string& path) const { return scheme_ + path; }
  std::string DatasetDir(const std::string& dataset) const { return root_ + "/" + dataset; }
  std::string VersionDir(const std::string& dataset, int64_t version) const {
    return DatasetDir(dataset) + "/" + VersionName(version);
  }
  std::string ManifestPath(const std::string& dataset, int64_t version) const {
    return VersionDir(dataset, version) + "/_manifest.json";
  }
  std::string PointerPath(const std::string& dataset) const {
    return DatasetDir(dataset) + "/_current";
  }
  std::string CurrentLink(const std::string& dataset) const {
    return DatasetDir(dataset) + "/current";
  }
  // The glob DuckDB reads one version with.
  std::string VersionGlob(const std::string& dataset, int64_t version) const {
    return Uri(VersionDir(dataset, version) + "/*.parquet");
  }
  std::string MetaDir() const { return root_ + "/_thund"; }
  std::string RunsDir() const { return MetaDir() + "/runs"; }
  std::string SinkStatePath(const std::string& sink) const {
    return MetaDir() + "/sinks/" + sink + ".json";
  }
  std::string DefaultSinkDir(const std::string& sink) const {
    return MetaDir() + "/sinks/" + sink;
  }

 private:
  explicit StorageLayout(std::string root, std::string scheme = "")
      : root_(std::move(root)), scheme_(std::move(scheme)) {}
  std::string root_;
  std::string scheme_;  // "" (local) or "s3://"
};

// Checks that a dataset name can be a directory name under the root.
arrow::Status CheckStorableName(const std::string& dataset);

}  // namespace thund::engine::batch
