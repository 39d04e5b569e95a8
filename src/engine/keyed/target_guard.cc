#include "engine/keyed/target_guard.h"

#include "engine/keyed/file_format.h"

namespace thund::engine::keyed {

arrow::Result<TargetGuard::Listing> TargetGuard::List(arrow::fs::FileSystem& fs,
                                                      const std::string& dir) {
  arrow::fs::FileSelector sel;
  sel.base_dir = dir;
  sel.recursive = true;
  sel.allow_not_found = true;
  ARROW_ASSIGN_OR_RAISE(auto infos, fs.GetFileInfo(sel));
  Listing out;
  for (const auto& info : infos) {
    if (!info.IsFile()) continue;
    // Skip a file when any component below `dir` is an ignored name.
    std::string rel = info.path().substr(std::min(info.path().size(), dir.size()));
    bool ignored = false;
    size_t start = 0;
    while (start <= rel.size()) {
      const size_t slash = rel.find('/', start);
      const std::string part =
          rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      if (!part.empty() && IsIgnoredName(part)) ignored = true;
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    if (ignored) continue;
    out[info.path()] = Stamp{info.size(), info.mtime().time_since_epoch().count()};
  }
  return out;
}

std::string TargetGuard::LockPath(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const size_t slash = d.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : d.substr(0, slash);
  const std::string name = slash == std::string::npos ? d : d.substr(slash + 1);
  return (parent.empty() ? "" : parent) + "/." + name + ".thund-keyed-write.lock";
}

arrow::Result<std::unique_ptr<TargetGuard>> TargetGuard::Make(
    std::shared_ptr<arrow::fs::FileSystem> fs, const std::string& dir, const std::string& run_id) {
  std::unique_ptr<TargetGuard> g(new TargetGuard());
  g->fs_ = fs;
  g->dir_ = dir;
  ARROW_ASSIGN_OR_RAISE(auto info, fs->GetFileInfo(dir));
  g->created_ = info.type() == arrow::fs::FileType::NotFound;
  auto made = fs->CreateDir(dir, /*recursive=*/true);
  if (!made.ok()) {
    return made.WithMessage("creating target directory '", dir, "': ", made.message());
  }
  auto lock = checkpoint::StorageLock::Acquire(fs, LockPath(dir), run_id);
  if (!lock.ok()) {
    return lock.status().WithMessage(
        "target '", dir, "' is being written by another keyed write (", lock.status().message(),
        "); two keyed writes into one directory could write the same keys twice. Wait for it "
        "to finish, or write to another directory");
  }
  g->lock_ = std::move(lock).ValueUnsafe();
  ARROW_ASSIGN_OR_RAISE(g->before_, List(*fs, dir));
  return g;
}

arrow::Status TargetGuard::CheckUnchanged(const std::string& own_prefix) const {
  ARROW_ASSIGN_OR_RAISE(Listing after, List(*fs_, dir_));
  auto changed = [&](const std::string& path, const char* what) {
    return arrow::Status::Invalid(
        "target '", dir_, "' changed while the keyed write ran: file '", path, "' was ", what,
        " by another writer. The keys this run skipped or wrote were checked against the "
        "target as it was when the run started, so the target may now hold a key twice or "
        "miss rows; check that file, then run the same keyed write again (it skips every key "
        "the target holds). Only one writer may write a keyed target at a time");
  };
  auto own = [&](const std::string& path) {
    const size_t slash = path.rfind('/');
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    return !own_prefix.empty() && base.rfind(own_prefix, 0) == 0;
  };
  for (const auto& [path, stamp] : before_) {
    auto it = after.find(path);
    if (it == after.end()) return changed(path, "removed");
    if (!(it->second == stamp)) return changed(path, "changed");
  }
  for (const auto& [path, stamp] : after) {
    if (before_.count(path) == 0 && !own(path)) return changed(path, "added");
  }
  return arrow::Status::OK();
}

}  // namespace thund::engine::keyed
