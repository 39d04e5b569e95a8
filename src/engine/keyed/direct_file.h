// DirectFile: a new local file written in order through one page-aligned
// buffer per thread, with O_DIRECT when the filesystem allows it, so that no
// page cache is allocated for the bytes: they go from that reused buffer
// straight to the device. The last block is padded, then cut off by
// ftruncate. Where O_DIRECT is refused (tmpfs, some network filesystems) the
// same writes go through the page cache.
//
// Why: keyed writes copy whole source files (pass-through, parquet_join.h).
// On the benchmark VM a page first touched costs the host a fault (0.35 to
// 2 s of system time per GiB); a buffered copy of 3 GB allocates 3 GB of page
// cache and spent 2 to 7 s of CPU in the kernel, O_DIRECT 0.5 to 0.8 s.
//
// Thread-safety: one DirectFile per thread at a time (they share the
// thread's buffer).
#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/keyed/parquet_join.h"

namespace thund::engine::keyed {

class DirectFile final : public JoinSink {
 public:
  // Creates (truncates) `path`. IOError naming it when it cannot be.
  static arrow::Result<std::unique_ptr<DirectFile>> Create(const std::string& path);
  ~DirectFile() override;  // closes without flushing: call Close

  arrow::Status Append(std::string_view bytes) override;
  arrow::Status AppendFrom(arrow::io::RandomAccessFile& file, int64_t offset,
                           int64_t length) override;
  // Appends `length` bytes of the open file `fd` (named `name` in errors)
  // from `offset`; IOError when it has fewer.
  arrow::Status AppendFromFd(int fd, const std::string& name, int64_t offset, int64_t length);
  // Writes what is buffered, sets the file's size and closes it.
  arrow::Status Close();

  bool direct() const { return direct_; }

 private:
  DirectFile(std::string path, int fd, bool direct, uint8_t* buffer)
      : path_(std::move(path)), fd_(fd), direct_(direct), buffer_(buffer) {}
  // Writes the buffer, padded to a whole block, at written_.
  arrow::Status WriteBuffer();
  // `n` more bytes are in the buffer: written once it is full.
  arrow::Status Filled(size_t n);

  std::string path_;
  int fd_ = -1;
  bool direct_ = false;
  uint8_t* buffer_;      // the thread's
  size_t filled_ = 0;    // bytes in buffer_
  int64_t written_ = 0;  // bytes written before them (a whole number of buffers)
};

}  // namespace thund::engine::keyed
