#include "backend/native/stored_catalog.h"

#include <algorithm>

#include "engine/duckdb/object_storage.h"
#include "engine/fs/filesystem_uri.h"

namespace thund::native {

arrow::Result<StoredCatalog> OpenStoredCatalog(const Pipeline* pipeline, const std::string& root) {
  ARROW_ASSIGN_OR_RAISE(auto layout, engine::batch::StorageLayout::Make(root));
  ARROW_ASSIGN_OR_RAISE(auto loc, engine::ResolveLocation(layout.location()));
  auto info = loc.fs->GetFileInfo(layout.root());
  // On S3 a "directory" exists once an object is under it.
  if (!info.ok() || info->type() != arrow::fs::FileType::Directory) {
    return arrow::Status::IOError("storage root ", layout.location(),
                                  " does not exist; run the pipeline first (thund run PATH)");
  }
  StoredCatalog out{layout, nullptr, nullptr, nullptr, {}, {}};
  out.store = std::make_unique<engine::batch::DatasetStore>(loc.fs, layout);
  ARROW_ASSIGN_OR_RAISE(out.session, engine::DuckDbSession::Open());
  if (!layout.local()) {
    ARROW_RETURN_NOT_OK(engine::EnableObjectStorage(*out.session, layout.location()));
  }
  Pipeline empty;
  const Pipeline& p = pipeline ? *pipeline : empty;
  ARROW_ASSIGN_OR_RAISE(out.catalog, engine::batch::Catalog::Make(*out.session, p));
  ARROW_RETURN_NOT_OK(engine::batch::BindCommitted(*out.catalog, p, *out.store, &out.missing));
  for (const auto& d : p.datasets) {
    if (d.kind == DatasetKind::kSink) continue;
    bool missing = std::any_of(out.missing.begin(), out.missing.end(), [&](const std::string& m) {
      return m.rfind(d.name + ":", 0) == 0;
    });
    if (!missing) out.bound.push_back(d.name);
  }
  // Datasets the pipeline no longer declares (or all, without a pipeline).
  arrow::fs::FileSelector below;
  below.base_dir = layout.root();
  auto entries = loc.fs->GetFileInfo(below);
  for (const auto& entry : entries.ok() ? *entries : std::vector<arrow::fs::FileInfo>{}) {
    const std::string name = entry.base_name();
    if (entry.type() != arrow::fs::FileType::Directory || name.empty() || name[0] == '_' ||
        name[0] == '.') {
      continue;
    }
    if (std::find(out.bound.begin(), out.bound.end(), name) != out.bound.end()) continue;
    if (p.FindDataset(name)) continue;
    auto current = out.store->Current(name);
    if (!current.ok() || !*current) continue;
    ARROW_RETURN_NOT_OK(out.catalog->BindStored(name, layout.VersionGlob(name, (**current).version)));
    out.bound.push_back(name);
  }
  std::sort(out.bound.begin(), out.bound.end());
  return out;
}

}  // namespace thund::native
