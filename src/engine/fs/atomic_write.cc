#include "engine/fs/atomic_write.h"

#include <random>

#include <arrow/buffer.h>
#include <arrow/filesystem/path_util.h>

#include "engine/fs/durable.h"

namespace thund::engine {
namespace {

constexpr std::string_view kTmpPrefix = "_tmp-";
constexpr std::string_view kTmpSuffix = ".inprogress";

}  // namespace

std::string UniqueToken() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  static const char* kHex = "0123456789abcdef";
  uint64_t v = rng();
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<size_t>(i)] = kHex[v & 0xf];
  return out;
}

bool IsObjectStorePath(const std::string& path) { return path.empty() || path[0] != '/'; }

std::string TemporaryPathFor(const std::string& path) {
  auto [parent, base] = arrow::fs::internal::GetAbstractPathParent(path);
  std::string tmp = std::string(kTmpPrefix) + UniqueToken() + "-" + base + std::string(kTmpSuffix);
  return parent.empty() ? tmp : arrow::fs::internal::ConcatAbstractPath(parent, tmp);
}

bool IsTemporaryName(std::string_view basename) {
  return basename.substr(0, kTmpPrefix.size()) == kTmpPrefix &&
         basename.size() >= kTmpSuffix.size() &&
         basename.substr(basename.size() - kTmpSuffix.size()) == kTmpSuffix;
}

arrow::Status WriteFileAtomically(
    arrow::fs::FileSystem& fs, const std::string& path,
    const std::function<arrow::Status(arrow::io::OutputStream*)>& write, bool sync) {
  if (IsObjectStorePath(path)) {
    // Object storage: an object becomes visible whole when its upload
    // completes (and replaces the old one then), so it is written in place;
    // a rename there would be a copy and a delete.
    auto attempt = [&]() -> arrow::Status {
      ARROW_ASSIGN_OR_RAISE(auto out, fs.OpenOutputStream(path));
      arrow::Status st = write(out.get());
      if (!st.ok()) {
        (void)out->Abort();  // the object is not created
        return st;
      }
      return out->Close();
    };
    arrow::Status st = attempt();
    return st.ok() ? st : st.WithMessage("writing ", path, ": ", st.message());
  }
  const std::string tmp = TemporaryPathFor(path);
  auto attempt = [&]() -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(auto out, fs.OpenOutputStream(tmp));
    arrow::Status st = write(out.get());
    arrow::Status closed = out->Close();
    ARROW_RETURN_NOT_OK(st);
    ARROW_RETURN_NOT_OK(closed);
    if (sync) ARROW_RETURN_NOT_OK(SyncFile(tmp));  // the bytes before the name
    ARROW_RETURN_NOT_OK(fs.Move(tmp, path));
    return sync ? SyncParent(path) : arrow::Status::OK();
  };
  arrow::Status st = attempt();
  if (!st.ok()) {
    (void)fs.DeleteFile(tmp);  // best effort; CleanupTemporaries catches the rest
    return st.WithMessage("writing ", path, ": ", st.message());
  }
  return st;
}

arrow::Status WriteFileAtomically(arrow::fs::FileSystem& fs, const std::string& path,
                                  std::string_view content, bool sync) {
  return WriteFileAtomically(
      fs, path,
      [&](arrow::io::OutputStream* out) {
        return out->Write(content.data(), static_cast<int64_t>(content.size()));
      },
      sync);
}

arrow::Result<std::string> ReadWholeFile(arrow::fs::FileSystem& fs, const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(auto in, fs.OpenInputFile(path));
  ARROW_ASSIGN_OR_RAISE(int64_t size, in->GetSize());
  ARROW_ASSIGN_OR_RAISE(auto buf, in->ReadAt(0, size));
  return buf->ToString();
}

arrow::Result<int> CleanupTemporaries(arrow::fs::FileSystem& fs, const std::string& dir) {
  arrow::fs::FileSelector sel;
  sel.base_dir = dir;
  sel.allow_not_found = true;
  ARROW_ASSIGN_OR_RAISE(auto infos, fs.GetFileInfo(sel));
  int removed = 0;
  for (const auto& info : infos) {
    if (info.IsFile() && IsTemporaryName(info.base_name())) {
      ARROW_RETURN_NOT_OK(fs.DeleteFile(info.path()));
      ++removed;
    }
  }
  return removed;
}

}  // namespace thund::engine
