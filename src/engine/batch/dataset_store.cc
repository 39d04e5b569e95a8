#include "engine/batch/dataset_store.h"

#include <chrono>
#include <filesystem>

#include "engine/fs/atomic_write.h"
#include "engine/fs/durable.h"

namespace thund::engine::batch {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

bool Exists(arrow::fs::FileSystem& fs, const std::string& path) {
  auto info = fs.GetFileInfo(path);
  return info.ok() && info->type() != arrow::fs::FileType::NotFound;
}

}  // namespace

arrow::Result<std::optional<VersionManifest>> DatasetStore::Current(
    const std::string& dataset) const {
  const std::string pointer = layout_.PointerPath(dataset);
  if (!Exists(*fs_, pointer)) return std::optional<VersionManifest>();
  ARROW_ASSIGN_OR_RAISE(std::string text, ReadWholeFile(*fs_, pointer));
  auto version = ParseVersionName(Trim(text));
  if (!version) {
    return arrow::Status::IOError("dataset '", dataset, "': ", pointer,
                                  " does not name a version (found '", Trim(text),
                                  "'); restore it or delete the dataset directory");
  }
  const std::string manifest_path = layout_.ManifestPath(dataset, *version);
  auto manifest_text = ReadWholeFile(*fs_, manifest_path);
  if (!manifest_text.ok()) {
    return arrow::Status::IOError("dataset '", dataset, "': the committed version ",
                                  VersionName(*version), " has no readable manifest (",
                                  manifest_text.status().message(), ")");
  }
  ARROW_ASSIGN_OR_RAISE(auto manifest, VersionManifest::Parse(*manifest_text, manifest_path));
  manifest.dataset = dataset;
  manifest.version = *version;
  return std::optional<VersionManifest>(std::move(manifest));
}

arrow::Result<PendingVersion> DatasetStore::Begin(const std::string& dataset) {
  ARROW_RETURN_NOT_OK(CheckStorableName(dataset));
  const std::string dir = layout_.DatasetDir(dataset);
  ARROW_RETURN_NOT_OK(fs_->CreateDir(dir, /*recursive=*/true));
  int64_t max_version = 0;
  arrow::fs::FileSelector sel;
  sel.base_dir = dir;
  ARROW_ASSIGN_OR_RAISE(auto entries, fs_->GetFileInfo(sel));
  for (const auto& e : entries) {
    if (auto v = ParseVersionName(e.base_name())) max_version = std::max(max_version, *v);
  }
  PendingVersion p{dataset, max_version + 1, layout_.VersionDir(dataset, max_version + 1)};
  ARROW_RETURN_NOT_OK(fs_->CreateDir(p.dir, /*recursive=*/false));
  return p;
}

arrow::Status DatasetStore::Commit(const PendingVersion& p, VersionManifest manifest,
                                   std::vector<std::string>* notes) {
  ARROW_RETURN_NOT_OK(Prepare(p, &manifest));
  return Publish(p, {}, notes);
}

arrow::Status DatasetStore::Prepare(const PendingVersion& p, VersionManifest* manifest,
                                    bool sync) {
  manifest->dataset = p.dataset;
  manifest->version = p.version;
  if (manifest->committed_ms == 0) {
    manifest->committed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  }
  // The parts' bytes before the manifest that names them (power-cut safety).
  if (sync) ARROW_RETURN_NOT_OK(SyncDirFiles(p.dir));
  return WriteFileAtomically(*fs_, layout_.ManifestPath(p.dataset, p.version),
                             manifest->ToJson(), sync);
}

arrow::Status DatasetStore::Publish(const PendingVersion& p, const std::set<int64_t>& keep,
                                    std::vector<std::string>* notes, bool sync) {
  ARROW_ASSIGN_OR_RAISE(auto previous, Current(p.dataset));
  // The commit point (the pointer is fsynced, then its directory).
  ARROW_RETURN_NOT_OK(WriteFileAtomically(*fs_, layout_.PointerPath(p.dataset),
                                          VersionName(p.version) + "\n", sync));
  if (layout_.local()) {
    arrow::Status link = ReplaceSymlink(layout_.CurrentLink(p.dataset), VersionName(p.version));
    if (!link.ok() && notes) notes->push_back("dataset '" + p.dataset + "': " + link.message());
  }
  std::set<int64_t> kept = keep;
  if (previous) kept.insert(previous->version);
  CollectGarbage(p.dataset, p.version, std::move(kept), notes);
  return arrow::Status::OK();
}

arrow::Status DatasetStore::SetCurrent(const std::string& dataset, int64_t version) {
  const std::string manifest = layout_.ManifestPath(dataset, version);
  if (!Exists(*fs_, manifest)) {
    return arrow::Status::IOError("dataset '", dataset, "': version ", VersionName(version),
                                  " has no manifest (", manifest, ")");
  }
  ARROW_RETURN_NOT_OK(
      WriteFileAtomically(*fs_, layout_.PointerPath(dataset), VersionName(version) + "\n"));
  if (layout_.local()) (void)ReplaceSymlink(layout_.CurrentLink(dataset), VersionName(version));
  return arrow::Status::OK();
}

void DatasetStore::RepairLink(const std::string& dataset, int64_t version) const {
  if (!layout_.local()) return;
  std::error_code ec;
  const auto target = std::filesystem::read_symlink(layout_.CurrentLink(dataset), ec);
  if (!ec && target.string() == VersionName(version)) return;
  (void)ReplaceSymlink(layout_.CurrentLink(dataset), VersionName(version));
}

arrow::Status DatasetStore::ClearCurrent(const std::string& dataset) {
  const std::string pointer = layout_.PointerPath(dataset);
  if (Exists(*fs_, pointer)) ARROW_RETURN_NOT_OK(fs_->DeleteFile(pointer));
  if (layout_.local()) {
    std::error_code ec;
    std::filesystem::remove(layout_.CurrentLink(dataset), ec);
  }
  return SyncDir(layout_.DatasetDir(dataset));
}

void DatasetStore::Abandon(const PendingVersion& p) { (void)fs_->DeleteDir(p.dir); }

void DatasetStore::CollectGarbage(const std::string& dataset, int64_t keep_new,
                                  std::set<int64_t> keep, std::vector<std::string>* notes) {
  arrow::fs::FileSelector sel;
  sel.base_dir = layout_.DatasetDir(dataset);
  auto entries = fs_->GetFileInfo(sel);
  if (!entries.ok()) return;
  for (const auto& e : *entries) {
    auto v = ParseVersionName(e.base_name());
    if (!v || *v == keep_new || keep.count(*v) > 0) continue;
    // Only versions older than the new one: a newer dir belongs to nobody we know.
    if (*v > keep_new) continue;
    arrow::Status st = fs_->DeleteDir(e.path());
    if (!st.ok() && notes) {
      notes->push_back("dataset '" + dataset + "': could not delete old version " +
                       e.base_name() + ": " + st.message());
      return;
    }
  }
  (void)CleanupTemporaries(*fs_, layout_.DatasetDir(dataset));
}

arrow::Status ReplaceSymlink(const std::string& link, const std::string& target) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path link_path(link);
  auto status = fs::symlink_status(link_path, ec);
  if (!ec && fs::exists(status) && !fs::is_symlink(status)) {
    return arrow::Status::IOError(link, " exists and is not a symlink; left as is");
  }
  fs::path tmp = link_path.parent_path() / ("_tmp-" + UniqueToken() + "-current.inprogress");
  fs::create_symlink(target, tmp, ec);
  if (ec) return arrow::Status::IOError("could not create symlink ", tmp.string(), ": ", ec.message());
  fs::rename(tmp, link_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return arrow::Status::IOError("could not update symlink ", link, ": ", ec.message());
  }
  return arrow::Status::OK();
}

}  // namespace thund::engine::batch
