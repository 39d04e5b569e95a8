// Names a pipeline's datasets in a DuckDB session so that flow SQL (and ad-hoc
// queries) can read them by name:
//  * stored datasets: a temp view over their current version's Parquet files;
//  * views: a temp view of their (translated) query;
//  * views with expectations and other run-time results: Arrow data
//    registered with DuckDbSession::RegisterArrow.
// Every name is also reachable as live.<name> and <database>.<name> (SDP's
// qualifiers), through alias views in those schemas.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/result.h>
#include <arrow/table.h>

#include "engine/batch/dataset_store.h"
#include "engine/duckdb/duckdb_session.h"
#include "thund/ir.h"

namespace thund::engine::batch {

class Catalog {
 public:
  // Creates the qualifier schemas. REQUIRES: `session` outlives the catalog.
  static arrow::Result<std::unique_ptr<Catalog>> Make(DuckDbSession& session,
                                                      const Pipeline& pipeline);

  arrow::Status BindStored(const std::string& name, const std::string& parquet_glob);
  arrow::Status BindView(const std::string& name, const std::string& duckdb_sql);
  arrow::Status BindArrow(const std::string& name, std::shared_ptr<arrow::Schema> schema,
                          std::vector<std::shared_ptr<arrow::RecordBatch>> batches);
  void Unbind(const std::string& name);

  DuckDbSession& session() { return session_; }

 private:
  Catalog(DuckDbSession& session, std::vector<std::string> schemas)
      : session_(session), schemas_(std::move(schemas)) {}
  arrow::Status Aliases(const std::string& name);

  DuckDbSession& session_;
  std::vector<std::string> schemas_;  // qualifier schemas: live, the database
};

// Binds every dataset of `pipeline` that can be read now: stored datasets with
// a committed version, and views (in dependency order) whose inputs are bound.
// Datasets that cannot be bound are listed in `missing` with the reason.
arrow::Status BindCommitted(Catalog& catalog, const Pipeline& pipeline,
                            const DatasetStore& store,
                            std::vector<std::string>* missing = nullptr);

}  // namespace thund::engine::batch
