#include "engine/fs/durable.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace thund::engine {
namespace {

bool IsLocal(const std::string& path) { return !path.empty() && path[0] == '/'; }

arrow::Status SyncFd(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return arrow::Status::OK();
    return arrow::Status::IOError("open ", path, " for fsync: ", std::strerror(errno));
  }
  int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL) {  // EINVAL: a file type that cannot be synced
    return arrow::Status::IOError("fsync ", path, ": ", std::strerror(err));
  }
  return arrow::Status::OK();
}

}  // namespace

bool SyncEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("THUND_FSYNC");
    return !(v && std::string(v) == "0");
  }();
  return enabled;
}

arrow::Status SyncFile(const std::string& path) {
  if (!SyncEnabled() || !IsLocal(path)) return arrow::Status::OK();
  return SyncFd(path, O_RDONLY);
}

arrow::Status SyncDir(const std::string& dir) {
  if (!SyncEnabled() || !IsLocal(dir)) return arrow::Status::OK();
  return SyncFd(dir, O_RDONLY | O_DIRECTORY);
}

arrow::Status SyncDirFiles(const std::string& dir) {
  if (!SyncEnabled() || !IsLocal(dir)) return arrow::Status::OK();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) ARROW_RETURN_NOT_OK(SyncFile(e.path().string()));
  }
  return SyncDir(dir);
}

arrow::Status SyncParent(const std::string& path) {
  if (!SyncEnabled() || !IsLocal(path)) return arrow::Status::OK();
  return SyncDir(std::filesystem::path(path).parent_path().string());
}

arrow::Status SyncFilesystem(const std::string& path) {
  if (!SyncEnabled() || !IsLocal(path)) return arrow::Status::OK();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return arrow::Status::IOError("open ", path, " for syncfs: ", std::strerror(errno));
  int rc = ::syncfs(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return arrow::Status::IOError("syncfs ", path, ": ", std::strerror(err));
  return arrow::Status::OK();
}

}  // namespace thund::engine
