#include "engine/batch/catalog.h"

#include <algorithm>
#include <set>

#include "engine/duckdb/sql_quote.h"
#include "thund/sql_dialect.h"
#include "thund/validate.h"

namespace thund::engine::batch {

arrow::Result<std::unique_ptr<Catalog>> Catalog::Make(DuckDbSession& session,
                                                      const Pipeline& pipeline) {
  std::vector<std::string> schemas = {"live"};
  if (!pipeline.database.empty() && pipeline.database != "live" && pipeline.database != "main" &&
      pipeline.database != "temp") {
    schemas.push_back(pipeline.database);
  }
  for (const auto& s : schemas) {
    ARROW_RETURN_NOT_OK(session.Execute("CREATE SCHEMA IF NOT EXISTS " + QuoteIdentifier(s)));
  }
  return std::unique_ptr<Catalog>(new Catalog(session, std::move(schemas)));
}

void Catalog::Unbind(const std::string& name) {
  if (session_.IsRegistered(name)) (void)session_.Unregister(name);
  (void)session_.Execute("DROP VIEW IF EXISTS temp.main." + QuoteIdentifier(name));
}

arrow::Status Catalog::Aliases(const std::string& name) {
  for (const auto& s : schemas_) {
    ARROW_RETURN_NOT_OK(session_.Execute("CREATE OR REPLACE VIEW " + QuoteIdentifier(s) + "." +
                                         QuoteIdentifier(name) + " AS SELECT * FROM temp.main." +
                                         QuoteIdentifier(name)));
  }
  return arrow::Status::OK();
}

arrow::Status Catalog::BindStored(const std::string& name, const std::string& parquet_glob) {
  Unbind(name);
  ARROW_RETURN_NOT_OK(session_.Execute("CREATE OR REPLACE TEMP VIEW " + QuoteIdentifier(name) +
                                       " AS SELECT * FROM read_parquet(" +
                                       QuoteString(parquet_glob) + ")"));
  return Aliases(name);
}

arrow::Status Catalog::BindView(const std::string& name, const std::string& duckdb_sql) {
  Unbind(name);
  ARROW_RETURN_NOT_OK(session_.Execute("CREATE OR REPLACE TEMP VIEW " + QuoteIdentifier(name) +
                                       " AS " + duckdb_sql));
  return Aliases(name);
}

arrow::Status Catalog::BindArrow(const std::string& name, std::shared_ptr<arrow::Schema> schema,
                                 std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  // Bound to Arrow data of this schema already: only the data changes (the
  // views and aliases stay).
  if (schema && session_.ReusesView(name, *schema)) {
    return session_.RegisterArrow(name, std::move(schema), std::move(batches));
  }
  Unbind(name);
  ARROW_RETURN_NOT_OK(session_.RegisterArrow(name, std::move(schema), std::move(batches)));
  return Aliases(name);
}

arrow::Status BindCommitted(Catalog& catalog, const Pipeline& pipeline,
                            const DatasetStore& store, std::vector<std::string>* missing) {
  std::set<std::string> bound;
  for (const auto& d : pipeline.datasets) {
    if (!IsStored(d.kind)) continue;
    ARROW_ASSIGN_OR_RAISE(auto current, store.Current(d.name));
    if (!current) {
      if (missing) missing->push_back(d.name + ": never materialized (run the pipeline first)");
      continue;
    }
    ARROW_RETURN_NOT_OK(
        catalog.BindStored(d.name, store.layout().VersionGlob(d.name, current->version)));
    bound.insert(d.name);
  }
  auto order = TopoOrder(pipeline);
  if (!order.ok()) return arrow::Status::OK();  // views stay unbound; Validate reports why
  for (const Flow* f : *order) {
    const Dataset* d = pipeline.FindDataset(f->target);
    if (!d || (d->kind != DatasetKind::kView && d->kind != DatasetKind::kTemporaryView)) continue;
    auto inputs = FlowInputs(pipeline, *f);
    bool ready = inputs.ok() && !f->sql.empty();
    for (const auto& in : inputs.ok() ? *inputs : std::vector<std::string>()) {
      if (pipeline.FindDataset(in) && !bound.count(in)) ready = false;
    }
    auto sql = ready ? SparkToDuckDb(f->sql) : arrow::Result<std::string>(std::string());
    if (!ready || !sql.ok() || !catalog.BindView(d->name, *sql).ok()) {
      if (missing) missing->push_back(d->name + ": a view whose inputs are not available");
      continue;
    }
    bound.insert(d->name);
  }
  return arrow::Status::OK();
}

}  // namespace thund::engine::batch
