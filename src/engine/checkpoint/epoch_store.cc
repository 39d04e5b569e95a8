#include "engine/checkpoint/epoch_store.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "engine/checkpoint/row_hash.h"
#include "engine/fs/atomic_write.h"
#include "engine/fs/durable.h"
#include "thund/json_text.h"

namespace thund::engine::checkpoint {
namespace {

using Json = nlohmann::json;

constexpr const char* kManifest = "_manifest.json";
constexpr const char* kLatest = "_latest";
constexpr int kFormat = 1;

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t ParseHex(const std::string& s) { return std::stoull(s, nullptr, 16); }

// Forwards writes to `out`, hashing and counting the bytes.
class HashingStream : public arrow::io::OutputStream {
 public:
  explicit HashingStream(std::shared_ptr<arrow::io::OutputStream> out) : out_(std::move(out)) {
    state_ = XXH3_createState();
    XXH3_64bits_reset(state_);
  }
  ~HashingStream() override { XXH3_freeState(state_); }
  arrow::Status Write(const void* data, int64_t n) override {
    XXH3_64bits_update(state_, data, static_cast<size_t>(n));
    bytes_ += n;
    return out_->Write(data, n);
  }
  arrow::Status Flush() override { return out_->Flush(); }
  arrow::Status Close() override { return out_->Close(); }
  bool closed() const override { return out_->closed(); }
  arrow::Result<int64_t> Tell() const override { return bytes_; }
  uint64_t hash() const { return XXH3_64bits_digest(state_); }
  int64_t bytes() const { return bytes_; }

 private:
  std::shared_ptr<arrow::io::OutputStream> out_;
  XXH3_state_t* state_;
  int64_t bytes_ = 0;
};

Json FilesJson(const std::vector<EpochFile>& files) {
  Json out = Json::array();
  for (const auto& f : files) out.push_back({{"path", f.path}, {"bytes", f.bytes},
                                             {"xxh3", Hex(f.hash)}});
  return out;
}

// The manifest's text without its checksum line, which is what the checksum covers.
std::string CanonicalText(const Json& j) {
  Json copy = j;
  copy.erase("checksum");
  return JsonText(copy);
}

}  // namespace

const EpochFile* EpochManifest::Find(const std::string& path) const {
  for (const auto& f : files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

std::string EpochDirName(int64_t epoch) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "epoch=%06lld", static_cast<long long>(epoch));
  return buf;
}

std::optional<int64_t> ParseEpochDirName(const std::string& name) {
  constexpr std::string_view kPrefix = "epoch=";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) {
    return std::nullopt;
  }
  int64_t v = 0;
  for (size_t i = kPrefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || v > (int64_t{1} << 58)) return std::nullopt;
    v = v * 10 + (name[i] - '0');
  }
  return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
}

std::string EpochStore::EpochPath(int64_t epoch) const {
  return dir_ + "/" + EpochDirName(epoch);
}

arrow::Result<std::vector<int64_t>> EpochStore::ListEpochs() const {
  arrow::fs::FileSelector sel;
  sel.base_dir = dir_;
  sel.allow_not_found = true;
  ARROW_ASSIGN_OR_RAISE(auto entries, fs_->GetFileInfo(sel));
  std::vector<int64_t> out;
  for (const auto& e : entries) {
    if (e.type() != arrow::fs::FileType::Directory) continue;
    if (auto v = ParseEpochDirName(e.base_name())) out.push_back(*v);
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

arrow::Result<EpochManifest> EpochStore::ReadManifest(int64_t epoch) const {
  const std::string path = EpochPath(epoch) + "/" + kManifest;
  auto info = fs_->GetFileInfo(path);
  if (!info.ok() || info->type() == arrow::fs::FileType::NotFound) {
    return arrow::Status::IOError(path, ": no manifest (the epoch was never committed)");
  }
  ARROW_ASSIGN_OR_RAISE(std::string text, ReadWholeFile(*fs_, path));
  EpochManifest m;
  try {
    Json j = Json::parse(text);
    const std::string want = j.at("checksum").get<std::string>();
    const std::string canonical = CanonicalText(j);
    if (Hex(HashBytes(canonical.data(), canonical.size())) != want) {
      return arrow::Status::IOError(path, ": its checksum does not match its content");
    }
    if (j.at("format").get<int>() != kFormat) {
      return arrow::Status::IOError(path, ": checkpoint format ", JsonText(j.at("format")),
                                    " is not the one this thund reads (", kFormat, ")");
    }
    m.epoch = j.at("epoch").get<int64_t>();
    if (m.epoch != epoch) {
      return arrow::Status::IOError(path, ": names epoch ", m.epoch, ", not ", epoch);
    }
    m.run_id = j.value("run_id", std::string());
    m.committed_ms = j.value("committed_ms", int64_t{0});
    for (const auto& f : j.at("files")) {
      m.files.push_back({f.at("path").get<std::string>(), f.at("bytes").get<int64_t>(),
                         ParseHex(f.at("xxh3").get<std::string>())});
    }
    m.body = j.at("body");
  } catch (const std::exception& e) {
    return arrow::Status::IOError(path, ": not a valid manifest (", e.what(), ")");
  }
  return m;
}

arrow::Status EpochStore::Prefetch(const EpochFile& file) {
  ARROW_ASSIGN_OR_RAISE(auto buf, ReadFile(file));
  prefetched_[file.path] = std::move(buf);
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Buffer>> EpochStore::ReadFile(const EpochFile& file) const {
  auto cached = prefetched_.find(file.path);
  if (cached != prefetched_.end()) {
    auto buf = std::move(cached->second);
    prefetched_.erase(cached);
    return buf;
  }
  const std::string path = dir_ + "/" + file.path;
  auto in = fs_->OpenInputFile(path);
  if (!in.ok()) return arrow::Status::IOError(path, ": missing (", in.status().message(), ")");
  ARROW_ASSIGN_OR_RAISE(int64_t size, (*in)->GetSize());
  if (size != file.bytes) {
    return arrow::Status::IOError(path, ": ", size, " bytes, the manifest says ", file.bytes,
                                  " (truncated or replaced)");
  }
  ARROW_ASSIGN_OR_RAISE(auto buf, (*in)->ReadAt(0, size));
  if (buf->size() != size) {
    return arrow::Status::IOError(path, ": short read (", buf->size(), " of ", size, " bytes)");
  }
  if (HashBytes(buf->data(), static_cast<size_t>(buf->size())) != file.hash) {
    return arrow::Status::IOError(path, ": its content does not match the manifest's checksum");
  }
  return buf;
}

arrow::Status EpochStore::Begin(int64_t epoch) {
  const std::string dir = EpochPath(epoch);
  auto info = fs_->GetFileInfo(dir);
  if (info.ok() && info->type() != arrow::fs::FileType::NotFound) {
    ARROW_RETURN_NOT_OK(fs_->DeleteDir(dir));  // an uncommitted leftover
  }
  ARROW_RETURN_NOT_OK(fs_->CreateDir(dir, /*recursive=*/true));
  return SyncParent(dir);
}

arrow::Result<EpochFile> EpochStore::WriteFile(
    int64_t epoch, const std::string& name,
    const std::function<arrow::Status(const std::shared_ptr<arrow::io::OutputStream>&)>& write) {
  EpochFile f;
  f.path = EpochDirName(epoch) + "/" + name;
  const std::string path = dir_ + "/" + f.path;
  ARROW_ASSIGN_OR_RAISE(auto raw, fs_->OpenOutputStream(path));
  auto out = std::make_shared<HashingStream>(raw);
  arrow::Status st = write(out);
  arrow::Status closed = out->closed() ? arrow::Status::OK() : out->Close();
  if (!st.ok()) return st.WithMessage("writing ", path, ": ", st.message());
  ARROW_RETURN_NOT_OK(closed);
  f.bytes = out->bytes();
  f.hash = out->hash();
  return f;
}

arrow::Status EpochStore::Commit(EpochManifest* m) {
  m->committed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  const std::string dir = EpochPath(m->epoch);
  // Every file of the epoch (and whatever else the caller wrote on this
  // filesystem before the commit point) in one flush.
  ARROW_RETURN_NOT_OK(SyncFilesystem(dir));
  Json j = Json::object();
  j["format"] = kFormat;
  j["epoch"] = m->epoch;
  j["run_id"] = m->run_id;
  j["committed_ms"] = m->committed_ms;
  j["files"] = FilesJson(m->files);
  j["body"] = m->body;
  const std::string canonical = CanonicalText(j);
  j["checksum"] = Hex(HashBytes(canonical.data(), canonical.size()));
  // The commit point.
  ARROW_RETURN_NOT_OK(WriteFileAtomically(*fs_, dir + "/" + kManifest, JsonText(j, 1)));
  // A hint for people and tools: recovery lists the epochs themselves.
  return WriteFileAtomically(*fs_, dir_ + "/" + kLatest, EpochDirName(m->epoch) + "\n",
                             /*sync=*/false);
}

void EpochStore::Retain(const std::vector<EpochManifest>& committed, size_t keep,
                        std::vector<std::string>* notes) {
  if (committed.empty()) return;
  std::set<std::string> needed;
  for (size_t i = 0; i < committed.size() && i < std::max<size_t>(keep, 1); ++i) {
    needed.insert(EpochDirName(committed[i].epoch));
    for (const auto& f : committed[i].files) needed.insert(f.path.substr(0, f.path.find('/')));
  }
  auto epochs = ListEpochs();
  if (!epochs.ok()) return;
  for (int64_t e : *epochs) {
    if (e > committed.front().epoch || needed.count(EpochDirName(e)) > 0) continue;
    arrow::Status st = fs_->DeleteDir(EpochPath(e));
    if (!st.ok() && notes) {
      notes->push_back("checkpoint: could not delete old " + EpochDirName(e) + ": " +
                       st.message());
    }
  }
  (void)CleanupTemporaries(*fs_, dir_);
}

arrow::Status EpochStore::Discard(int64_t epoch) { return fs_->DeleteDir(EpochPath(epoch)); }

arrow::Status EpochStore::SetAside(int64_t epoch) {
  const std::string aside = dir_ + "/_damaged";
  arrow::Status st = fs_->CreateDir(aside, true);
  if (st.ok()) {
    st = fs_->Move(EpochPath(epoch), aside + "/" + EpochDirName(epoch) + "-" + UniqueToken());
  }
  if (st.ok()) return st;
  return Discard(epoch);
}

}  // namespace thund::engine::checkpoint
