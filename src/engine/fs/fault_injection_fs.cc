#include "engine/fs/fault_injection_fs.h"

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

namespace thund::engine {
namespace {

// Forwards to the real stream, charging one operation per Write and Close.
class FaultInjectingOutputStream : public arrow::io::OutputStream {
 public:
  FaultInjectingOutputStream(std::shared_ptr<FaultInjectingFileSystem> fs, std::string path,
                             std::shared_ptr<arrow::io::OutputStream> base)
      : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}

  arrow::Status Write(const void* data, int64_t nbytes) override {
    arrow::Status st = fs_->Charge("write to " + path_);
    if (!st.ok()) {
      // A crash mid-write leaves a prefix of the data on disk.
      ARROW_RETURN_NOT_OK(base_->Write(data, nbytes / 2));
      ARROW_RETURN_NOT_OK(base_->Flush());
      return st;
    }
    return base_->Write(data, nbytes);
  }
  arrow::Status Write(const std::shared_ptr<arrow::Buffer>& data) override {
    return Write(data->data(), data->size());
  }
  arrow::Status Flush() override { return base_->Flush(); }
  arrow::Status Close() override {
    if (base_->closed()) return arrow::Status::OK();
    arrow::Status st = fs_->Charge("close of " + path_);
    // Release the descriptor either way; the data written so far stays.
    arrow::Status closed = base_->Close();
    return st.ok() ? closed : st;
  }
  bool closed() const override { return base_->closed(); }
  arrow::Result<int64_t> Tell() const override { return base_->Tell(); }

 private:
  std::shared_ptr<FaultInjectingFileSystem> fs_;  // streams keep their filesystem alive
  std::string path_;
  std::shared_ptr<arrow::io::OutputStream> base_;
};

}  // namespace

void FaultInjectingFileSystem::FailAfter(int64_t n) {
  tripped_ = false;
  fail_at_ = n <= 0 ? 0 : ops_.load() + n;
}

arrow::Status FaultInjectingFileSystem::Charge(const std::string& what) {
  int64_t op = ++ops_;
  int64_t fail_at = fail_at_.load();
  if (fail_at > 0 && op >= fail_at) {
    tripped_ = true;
    return arrow::Status::IOError("injected fault at operation ", op, " (", what, ")");
  }
  return arrow::Status::OK();
}

arrow::Status FaultInjectingFileSystem::CreateDir(const std::string& path, bool recursive) {
  ARROW_RETURN_NOT_OK(Charge("create dir " + path));
  return base_->CreateDir(path, recursive);
}
arrow::Status FaultInjectingFileSystem::DeleteDir(const std::string& path) {
  ARROW_RETURN_NOT_OK(Charge("delete dir " + path));
  return base_->DeleteDir(path);
}
arrow::Status FaultInjectingFileSystem::DeleteDirContents(const std::string& path, bool missing_ok) {
  ARROW_RETURN_NOT_OK(Charge("delete contents of " + path));
  return base_->DeleteDirContents(path, missing_ok);
}
arrow::Status FaultInjectingFileSystem::DeleteRootDirContents() {
  ARROW_RETURN_NOT_OK(Charge("delete root contents"));
  return base_->DeleteRootDirContents();
}
arrow::Status FaultInjectingFileSystem::DeleteFile(const std::string& path) {
  ARROW_RETURN_NOT_OK(Charge("delete " + path));
  return base_->DeleteFile(path);
}
arrow::Status FaultInjectingFileSystem::Move(const std::string& src, const std::string& dest) {
  ARROW_RETURN_NOT_OK(Charge("move " + src + " -> " + dest));
  return base_->Move(src, dest);
}
arrow::Status FaultInjectingFileSystem::CopyFile(const std::string& src, const std::string& dest) {
  ARROW_RETURN_NOT_OK(Charge("copy " + src + " -> " + dest));
  return base_->CopyFile(src, dest);
}

arrow::Result<std::shared_ptr<arrow::io::OutputStream>> FaultInjectingFileSystem::OpenOutputStream(
    const std::string& path, const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) {
  ARROW_ASSIGN_OR_RAISE(auto base, base_->OpenOutputStream(path, metadata));
  return std::make_shared<FaultInjectingOutputStream>(
      std::static_pointer_cast<FaultInjectingFileSystem>(shared_from_this()), path, std::move(base));
}

arrow::Result<std::shared_ptr<arrow::io::OutputStream>> FaultInjectingFileSystem::OpenAppendStream(
    const std::string& path, const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) {
  ARROW_ASSIGN_OR_RAISE(auto base, base_->OpenAppendStream(path, metadata));
  return std::make_shared<FaultInjectingOutputStream>(
      std::static_pointer_cast<FaultInjectingFileSystem>(shared_from_this()), path, std::move(base));
}

}  // namespace thund::engine
