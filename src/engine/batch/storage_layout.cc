#include "engine/batch/storage_layout.h"

#include "engine/fs/filesystem_uri.h"

#include <cstdio>
#include <filesystem>

#include "ir/file_uri.h"

namespace thund::engine::batch {

std::string VersionName(int64_t version) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "v-%06lld", static_cast<long long>(version));
  return buf;
}

std::optional<int64_t> ParseVersionName(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "v-") return std::nullopt;
  int64_t v = 0;
  for (char c : name.substr(2)) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
    if (v > (int64_t{1} << 50)) return std::nullopt;
  }
  return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
}

std::string DeadLetterName(const std::string& dataset) { return dataset + "__dead_letter"; }

arrow::Result<StorageLayout> StorageLayout::Make(const std::string& location) {
  if (location.empty()) return arrow::Status::Invalid("the storage root is empty");
  auto local = internal::LocalPathOf(location);
  if (!local.ok()) return arrow::Status::Invalid("storage root ", local.status().message());
  const std::string& root = *local;
  if (IsObjectStoreUri(root)) {
    // "s3://bucket/prefix": paths inside Arrow's S3 filesystem are
    // "bucket/prefix/..."; DuckDB reads them as s3:// URIs.
    std::string path = ObjectStoreUri(root).substr(5);
    while (!path.empty() && path.back() == '/') path.pop_back();
    if (path.empty() || path[0] == '/') {
      return arrow::Status::Invalid("storage root '", root, "': no bucket (s3://bucket/prefix)");
    }
    return StorageLayout(path, "s3://");
  }
  if (root.find("://") != std::string::npos) {
    return arrow::Status::NotImplemented(
        "storage root '", root,
        "': datasets are stored on local disk or S3 (s3://bucket/prefix); use one of those");
  }
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(root, ec);
  if (ec) return arrow::Status::IOError("storage root '", root, "': ", ec.message());
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return StorageLayout(s);
}

arrow::Status CheckStorableName(const std::string& dataset) {
  if (dataset.empty() || dataset == "." || dataset == ".." || dataset[0] == '_' ||
      dataset[0] == '.' || dataset.find('/') != std::string::npos ||
      dataset.find('\\') != std::string::npos || dataset.find('\0') != std::string::npos) {
    return arrow::Status::Invalid("dataset name '", dataset,
                                  "' cannot be stored as a directory: names must not be empty, "
                                  "start with '_' or '.', or contain '/'");
  }
  return arrow::Status::OK();
}

}  // namespace thund::engine::batch
