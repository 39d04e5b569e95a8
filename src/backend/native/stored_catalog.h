// Reading what runs stored (thund show / query / runs): a DuckDB session in
// which every committed dataset under a storage root is a readable name —
// the pipeline's datasets and views (when the pipeline is known) and any
// other committed dataset directory (dead-letter side datasets, datasets of
// an older pipeline version).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/result.h>

#include "engine/batch/catalog.h"
#include "engine/batch/dataset_store.h"
#include "engine/duckdb/duckdb_session.h"
#include "thund/ir.h"

namespace thund::native {

struct StoredCatalog {
  engine::batch::StorageLayout layout;
  std::unique_ptr<engine::batch::DatasetStore> store;
  std::unique_ptr<engine::DuckDbSession> session;
  std::unique_ptr<engine::batch::Catalog> catalog;
  std::vector<std::string> bound;    // names readable in `session`, sorted
  std::vector<std::string> missing;  // "name: why" for pipeline datasets not readable
};

// `pipeline` may be null (only --storage given). `root` is the resolved
// storage root (ResolveStorageRoot). Fails when the root does not exist.
arrow::Result<StoredCatalog> OpenStoredCatalog(const Pipeline* pipeline, const std::string& root);

}  // namespace thund::native
