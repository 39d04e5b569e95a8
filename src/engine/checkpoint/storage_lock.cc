#include "engine/checkpoint/storage_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/fs/atomic_write.h"
#include "thund/json_text.h"

namespace thund::engine::checkpoint {
namespace {

using Json = nlohmann::json;

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "?";
  return buf;
}

Json Holder(const std::string& run_id) {
  return Json{{"run_id", run_id}, {"pid", static_cast<int64_t>(getpid())},
              {"host", HostName()}, {"started_ms", WallMs()}};
}

// "run R (pid P on host H, since T ms ago)".
std::string Describe(const Json& j) {
  std::string out = "run " + j.value("run_id", std::string("?")) + " (pid " +
                    std::to_string(j.value("pid", int64_t{0})) + " on host " +
                    j.value("host", std::string("?"));
  const int64_t started = j.value("started_ms", int64_t{0});
  if (started > 0) out += ", started " + std::to_string((WallMs() - started) / 1000) + " s ago";
  return out + ")";
}

bool HolderGone(const Json& j) {
  if (j.value("host", std::string()) != HostName()) return false;
  const int64_t pid = j.value("pid", int64_t{0});
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

Json ParseOrEmpty(const std::string& text) {
  try {
    Json j = Json::parse(text);
    return j.is_object() ? j : Json::object();
  } catch (const std::exception&) {
    return Json::object();
  }
}

std::string ReadFd(int fd) {
  std::string out;
  char buf[4096];
  if (::lseek(fd, 0, SEEK_SET) < 0) return out;
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

}  // namespace

arrow::Result<std::unique_ptr<StorageLock>> StorageLock::Acquire(
    std::shared_ptr<arrow::fs::FileSystem> fs, const std::string& path, const std::string& run_id,
    std::string* took_over, int64_t stale_after_ms) {
  if (took_over) took_over->clear();
  std::unique_ptr<StorageLock> lock(new StorageLock());
  lock->path_ = path;
  lock->run_id_ = run_id;
  Json me = Holder(run_id);
  if (!path.empty() && path[0] == '/') {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      return arrow::Status::IOError("cannot open the lock file ", path, ": ",
                                    std::strerror(errno));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      Json holder = ParseOrEmpty(ReadFd(fd));
      ::close(fd);
      return arrow::Status::IOError(
          "the storage root is in use by ", Describe(holder), " (lock ", path,
          "); wait for that run to finish or stop it, then run again");
    }
    Json previous = ParseOrEmpty(ReadFd(fd));
    if (took_over && previous.contains("pid")) *took_over = Describe(previous);
    const std::string text = JsonText(me) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
      ::close(fd);
      return arrow::Status::IOError("cannot write the lock file ", path, ": ",
                                    std::strerror(errno));
    }
    lock->fd_ = fd;
    lock->fs_ = fs;
    return lock;
  }
  auto existing = ReadWholeFile(*fs, path);
  if (existing.ok()) {
    Json holder = ParseOrEmpty(*existing);
    const int64_t beat = holder.value("heartbeat_ms", int64_t{0});
    const bool fresh = WallMs() - beat < stale_after_ms;
    if (holder.contains("pid") && fresh && !HolderGone(holder)) {
      return arrow::Status::IOError(
          "the checkpoint root is in use by ", Describe(holder), " (lock ", path,
          ", heartbeat ", (WallMs() - beat) / 1000, " s ago); wait for that run to finish or "
          "stop it; a lock whose heartbeat is older than ", stale_after_ms / 1000,
          " s is taken over");
    }
    if (took_over && holder.contains("pid")) *took_over = Describe(holder);
  }
  lock->holder_ = JsonText(me);
  lock->fs_ = fs;  // from here on the lock object is ours to delete
  arrow::Status written = lock->Refresh();
  if (!written.ok()) {
    lock->fs_.reset();
    return written;
  }
  return lock;
}

arrow::Status StorageLock::Refresh() {
  if (fd_ >= 0) return arrow::Status::OK();
  Json j = Json::parse(holder_);
  j["heartbeat_ms"] = WallMs();
  return WriteFileAtomically(*fs_, path_, JsonText(j) + "\n");
}

StorageLock::~StorageLock() {
  if (fd_ >= 0) {
    (void)!::ftruncate(fd_, 0);  // a clean release leaves no holder to report
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
    return;
  }
  if (fs_) (void)fs_->DeleteFile(path_);  // only set once the lock was taken
}

}  // namespace thund::engine::checkpoint
