// The one filesystem seam for fault injection (DESIGN.md §4).
//
// Everything thund writes — dataset versions, sink files, checkpoints, run
// history — goes through an arrow::fs::FileSystem. Production code gets the real
// one (local or S3); tests wrap it in a FaultInjectingFileSystem that fails the
// N-th mutating operation, the way a crash or a full disk would.
//
// Counted operations ("writes"): every OutputStream::Write and Close, and every
// CreateDir, DeleteDir, DeleteDirContents, DeleteFile, Move and CopyFile. Reads are
// never counted and never fail.
//
// When the budget runs out on a Write, half of that write's bytes reach the file
// before the error, so a partial file is left behind exactly as a killed process
// would leave it. Every later counted operation fails too (the process is "dead").
//
// Thread-safety: all methods may be called concurrently.
// Lifetime: REQUIRES being owned by a std::shared_ptr (streams keep it alive).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <arrow/filesystem/filesystem.h>

namespace thund::engine {

class FaultInjectingFileSystem : public arrow::fs::FileSystem {
 public:
  explicit FaultInjectingFileSystem(std::shared_ptr<arrow::fs::FileSystem> base)
      : base_(std::move(base)) {}

  // The `n`-th counted operation from now (1-based) and all after it fail with
  // IOError("injected fault ..."). n <= 0 disables injection.
  void FailAfter(int64_t n);
  // Counted operations performed so far (successful or not).
  int64_t operations() const { return ops_.load(); }
  bool tripped() const { return tripped_.load(); }

  // Called by the streams this filesystem hands out; Status::OK when the
  // operation may proceed. `what` names the operation in the error.
  arrow::Status Charge(const std::string& what);

  std::string type_name() const override { return "fault-injecting"; }
  bool Equals(const arrow::fs::FileSystem& other) const override { return this == &other; }
  arrow::Result<std::string> NormalizePath(std::string path) override {
    return base_->NormalizePath(std::move(path));
  }
  arrow::Result<arrow::fs::FileInfo> GetFileInfo(const std::string& path) override {
    return base_->GetFileInfo(path);
  }
  arrow::Result<arrow::fs::FileInfoVector> GetFileInfo(const arrow::fs::FileSelector& s) override {
    return base_->GetFileInfo(s);
  }
  arrow::Status CreateDir(const std::string& path, bool recursive) override;
  arrow::Status DeleteDir(const std::string& path) override;
  arrow::Status DeleteDirContents(const std::string& path, bool missing_dir_ok) override;
  arrow::Status DeleteRootDirContents() override;
  arrow::Status DeleteFile(const std::string& path) override;
  arrow::Status Move(const std::string& src, const std::string& dest) override;
  arrow::Status CopyFile(const std::string& src, const std::string& dest) override;
  arrow::Result<std::shared_ptr<arrow::io::InputStream>> OpenInputStream(
      const std::string& path) override {
    return base_->OpenInputStream(path);
  }
  arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(
      const std::string& path) override {
    return base_->OpenInputFile(path);
  }
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutputStream(
      const std::string& path,
      const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) override;
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenAppendStream(
      const std::string& path,
      const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) override;

 private:
  std::shared_ptr<arrow::fs::FileSystem> base_;
  std::atomic<int64_t> ops_{0};
  std::atomic<int64_t> fail_at_{0};  // absolute op number that fails; 0 = never
  std::atomic<bool> tripped_{false};
};

}  // namespace thund::engine
