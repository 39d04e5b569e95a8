#include "backend/native/stored_catalog.h"

#include <algorithm>
#include <filesystem>

#include <arrow/filesystem/localfs.h>

namespace thund::native {

arrow::Result<StoredCatalog> OpenStoredCatalog(const Pipeline* pipeline, const std::string& root) {
  ARROW_ASSIGN_OR_RAISE(auto layout, engine::batch::StorageLayout::Make(root));
  std::error_code ec;
  if (!std::filesystem::is_directory(layout.root(), ec)) {
    return arrow::Status::IOError("storage root ", layout.root(),
                                  " does not exist; run the pipeline first (thund run PATH)");
  }
  StoredCatalog out{layout, nullptr, nullptr, nullptr, {}, {}};
  out.store = std::make_unique<engine::batch::DatasetStore>(
      std::make_shared<arrow::fs::LocalFileSystem>(), layout);
  ARROW_ASSIGN_OR_RAISE(out.session, engine::DuckDbSession::Open());
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
  for (const auto& entry : std::filesystem::directory_iterator(layout.root(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.empty() || name[0] == '_' || name[0] == '.') continue;
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
