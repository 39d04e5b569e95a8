#include "engine/keyed/direct_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace thund::engine::keyed {
namespace {

constexpr size_t kAlign = 4096;
constexpr size_t kBuffer = size_t{4} << 20;

arrow::Status IoError(const char* what, const std::string& file) {
  return arrow::Status::IOError(what, " '", file, "': ", std::strerror(errno));
}

// The calling thread's buffer (allocated once, so its pages stay touched).
uint8_t* ThreadBuffer() {
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<uint8_t, Free> buffer;
  if (buffer == nullptr) {
    void* p = nullptr;
    if (::posix_memalign(&p, kAlign, kBuffer) != 0) return nullptr;
    buffer.reset(static_cast<uint8_t*>(p));
  }
  return buffer.get();
}

}  // namespace

arrow::Result<std::unique_ptr<DirectFile>> DirectFile::Create(const std::string& path) {
  uint8_t* buffer = ThreadBuffer();
  if (buffer == nullptr) return arrow::Status::OutOfMemory("no buffer to write '", path, "'");
  const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  bool direct = true;
  int fd = ::open(path.c_str(), flags | O_DIRECT, 0666);
  if (fd < 0 && errno == EINVAL) {  // the filesystem refuses O_DIRECT
    direct = false;
    fd = ::open(path.c_str(), flags, 0666);
  }
  if (fd < 0) return IoError("cannot create", path);
  return std::unique_ptr<DirectFile>(new DirectFile(path, fd, direct, buffer));
}

DirectFile::~DirectFile() {
  if (fd_ >= 0) ::close(fd_);
}

arrow::Status DirectFile::WriteBuffer() {
  const size_t padded = (filled_ + kAlign - 1) / kAlign * kAlign;
  std::memset(buffer_ + filled_, 0, padded - filled_);
  ssize_t w = ::pwrite(fd_, buffer_, padded, written_);
  if (w < 0 && errno == EINVAL && direct_) {
    // The device wants another alignment: the page cache it is.
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0 && ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) == 0) {
      direct_ = false;
      w = ::pwrite(fd_, buffer_, padded, written_);
    }
  }
  if (w != static_cast<ssize_t>(padded)) return IoError("cannot write", path_);
  return arrow::Status::OK();
}

arrow::Status DirectFile::Filled(size_t n) {
  filled_ += n;
  if (filled_ < kBuffer) return arrow::Status::OK();
  ARROW_RETURN_NOT_OK(WriteBuffer());
  written_ += static_cast<int64_t>(kBuffer);
  filled_ = 0;
  return arrow::Status::OK();
}

arrow::Status DirectFile::Append(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t n = std::min(bytes.size(), kBuffer - filled_);
    std::memcpy(buffer_ + filled_, bytes.data(), n);
    bytes.remove_prefix(n);
    ARROW_RETURN_NOT_OK(Filled(n));
  }
  return arrow::Status::OK();
}

arrow::Status DirectFile::AppendFrom(arrow::io::RandomAccessFile& file, int64_t offset,
                                     int64_t length) {
  while (length > 0) {
    const int64_t n = std::min<int64_t>(length, static_cast<int64_t>(kBuffer - filled_));
    ARROW_ASSIGN_OR_RAISE(int64_t got, file.ReadAt(offset, n, buffer_ + filled_));
    if (got != n) return arrow::Status::IOError("a file to copy ended early");
    offset += n;
    length -= n;
    ARROW_RETURN_NOT_OK(Filled(static_cast<size_t>(n)));
  }
  return arrow::Status::OK();
}

arrow::Status DirectFile::AppendFromFd(int fd, const std::string& name, int64_t offset,
                                       int64_t length) {
  while (length > 0) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(length, kBuffer - filled_));
    const ssize_t got = ::pread(fd, buffer_ + filled_, n, offset);
    if (got < 0) return IoError("cannot read", name);
    if (got == 0) return arrow::Status::IOError("'", name, "' shrank while copied");
    offset += got;
    length -= got;
    ARROW_RETURN_NOT_OK(Filled(static_cast<size_t>(got)));
  }
  return arrow::Status::OK();
}

arrow::Status DirectFile::Close() {
  arrow::Status st;
  if (filled_ > 0) st = WriteBuffer();
  const int64_t size = written_ + static_cast<int64_t>(filled_);
  if (st.ok() && ::ftruncate(fd_, size) != 0) st = IoError("cannot truncate", path_);
  if (::close(fd_) != 0 && st.ok()) st = IoError("cannot close", path_);
  fd_ = -1;
  return st;
}

}  // namespace thund::engine::keyed
