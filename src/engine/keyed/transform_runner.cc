#include "engine/keyed/transform_runner.h"

#include <arrow/table.h>

namespace thund::engine::keyed {
namespace {

std::string StripTrailing(std::string sql) {
  while (!sql.empty() &&
         (std::isspace(static_cast<unsigned char>(sql.back())) || sql.back() == ';')) {
    sql.pop_back();
  }
  return sql;
}

}  // namespace

arrow::Result<std::unique_ptr<TransformRunner>> TransformRunner::Make(std::string sql,
                                                                      int64_t threads) {
  DuckDbSessionOptions o;
  o.threads = static_cast<int>(threads);
  o.parallel_arrow_scan = false;  // keep input order (duplicates=first is order-sensitive)
  ARROW_ASSIGN_OR_RAISE(auto session, DuckDbSession::Open(o));
  return std::unique_ptr<TransformRunner>(
      new TransformRunner(StripTrailing(std::move(sql)), std::move(session)));
}

arrow::Status TransformRunner::Annotate(const arrow::Status& st) const {
  return st.WithMessage("transform: ", st.message(), "\n  in: ", sql_);
}

arrow::Result<std::shared_ptr<arrow::Schema>> TransformRunner::OutputSchema(
    const std::vector<std::pair<std::string, std::shared_ptr<arrow::Schema>>>& inputs) {
  for (const auto& [name, schema] : inputs) {
    ARROW_RETURN_NOT_OK(main_->RegisterArrow(name, schema, {}));
  }
  auto table = main_->Query("SELECT * FROM (" + sql_ + ") AS thund_transform LIMIT 0");
  if (!table.ok()) return Annotate(table.status());
  return (*table)->schema();
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> TransformRunner::ApplyToBatch(
    const std::string& name, const std::shared_ptr<arrow::RecordBatch>& batch) {
  std::unique_ptr<DuckDbSession> session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pool_.empty()) {
      session = std::move(pool_.back());
      pool_.pop_back();
    }
  }
  if (!session) {
    DuckDbSessionOptions o;
    o.threads = 1;
    o.parallel_arrow_scan = false;
    ARROW_ASSIGN_OR_RAISE(session, DuckDbSession::Open(o));
  }
  auto result = [&]() -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
    ARROW_RETURN_NOT_OK(session->RegisterArrow(name, batch->schema(), {batch}));
    auto table = session->Query(sql_);
    if (!table.ok()) return Annotate(table.status());
    return (*table)->CombineChunksToBatch();
  }();
  std::lock_guard<std::mutex> lock(mu_);
  pool_.push_back(std::move(session));
  return result;
}

arrow::Status TransformRunner::Register(const std::string& name,
                                        std::shared_ptr<arrow::Schema> schema,
                                        std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  return main_->RegisterArrow(name, std::move(schema), std::move(batches));
}

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> TransformRunner::Stream() {
  auto reader = main_->QueryStream(sql_);
  if (!reader.ok()) return Annotate(reader.status());
  return reader;
}

}  // namespace thund::engine::keyed
