#include "engine/batch/expectations.h"

#include <arrow/array.h>
#include <arrow/compute/api.h>
#include <arrow/scalar.h>

#include "engine/batch/compute_init.h"
#include "engine/duckdb/sql_quote.h"
#include "thund/sql_dialect.h"

namespace thund::engine::batch {
namespace {

constexpr const char* kFlagPrefix = "__thund_violates_";

std::string Where(const Expectation& e) {
  return e.location.known() ? " (" + e.location.ToString() + ")" : std::string();
}

}  // namespace

arrow::Result<std::vector<CompiledExpectation>> CompileExpectations(const Dataset& dataset) {
  std::vector<CompiledExpectation> out;
  for (const auto& e : dataset.expectations) {
    auto translated = SparkToDuckDb("SELECT " + e.predicate);
    if (!translated.ok()) {
      return arrow::Status::Invalid("dataset '", dataset.name, "': expectation '", e.name, "'",
                                    Where(e), ": ", translated.status().message());
    }
    std::string sql = *translated;
    const std::string prefix = "SELECT ";
    if (sql.compare(0, prefix.size(), prefix) != 0) {
      return arrow::Status::Invalid("dataset '", dataset.name, "': expectation '", e.name,
                                    "'", Where(e), ": the predicate does not translate to DuckDB");
    }
    out.push_back({e, sql.substr(prefix.size())});
  }
  return out;
}

std::string WrapWithExpectations(const std::string& query,
                                 const std::vector<CompiledExpectation>& expectations,
                                 const std::string& select_list) {
  if (expectations.empty() && select_list == "*") return query;
  std::string sql = "SELECT " + select_list;
  for (size_t i = 0; i < expectations.size(); ++i) {
    sql += ", (" + expectations[i].duckdb_predicate + "\n) IS NOT TRUE AS " +
           QuoteIdentifier(kFlagPrefix + std::to_string(i));
  }
  sql += " FROM (\n" + query + "\n) AS \"__thund_q\"";
  return sql;
}

std::shared_ptr<arrow::Schema> ExpectationEvaluator::DataSchema(
    const arrow::Schema& with_flags) const {
  std::vector<std::shared_ptr<arrow::Field>> fields(
      with_flags.fields().begin(),
      with_flags.fields().end() - static_cast<std::ptrdiff_t>(expectations_.size()));
  return arrow::schema(std::move(fields), with_flags.metadata());
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> ExpectationEvaluator::Apply(
    const std::shared_ptr<arrow::RecordBatch>& batch) {
  const int n = static_cast<int>(expectations_.size());
  const int data_cols = batch->num_columns() - n;
  rows_in_ += batch->num_rows();
  std::shared_ptr<arrow::RecordBatch> data = batch;
  for (int i = 0; i < n; ++i) {
    ARROW_ASSIGN_OR_RAISE(data, data->RemoveColumn(data_cols));
  }
  if (n == 0) return data;
  std::shared_ptr<arrow::Array> drop_mask;
  for (int i = 0; i < n; ++i) {
    auto flags = std::static_pointer_cast<arrow::BooleanArray>(batch->column(data_cols + i));
    const int64_t count = flags->true_count();
    violations_[i] += count;
    if (count == 0) continue;
    const Expectation& rule = expectations_[i].rule;
    if (rule.action == ExpectationAction::kFail) {
      return arrow::Status::Invalid(
          "expectation '", rule.name, "' (", rule.predicate, ") failed on dataset '", dataset_,
          "' in flow '", flow_, "': ", violations_[i], " violating row",
          violations_[i] == 1 ? "" : "s", " so far (of ", rows_in_,
          " rows read); sample: ", SampleRows(*data, *flags, 3),
          ". Fix the input, or change on_violation to drop or warn");
    }
    if (rule.action == ExpectationAction::kDrop) {
      if (!drop_mask) {
        drop_mask = flags;
      } else {
        ARROW_RETURN_NOT_OK(EnsureComputeInitialized());
        ARROW_ASSIGN_OR_RAISE(auto merged, arrow::compute::Or(drop_mask, flags));
        drop_mask = merged.make_array();
      }
    }
  }
  if (!drop_mask) return data;
  ARROW_RETURN_NOT_OK(EnsureComputeInitialized());
  ARROW_ASSIGN_OR_RAISE(auto keep, arrow::compute::Invert(drop_mask));
  ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(data, keep));
  auto out = filtered.record_batch();
  rows_dropped_ += data->num_rows() - out->num_rows();
  return out;
}

std::string SampleRows(const arrow::RecordBatch& batch, const arrow::BooleanArray& mask,
                       int limit) {
  std::string out;
  int shown = 0;
  for (int64_t r = 0; r < batch.num_rows() && shown < limit; ++r) {
    if (mask.IsNull(r) || !mask.Value(r)) continue;
    if (shown++) out += ", ";
    out += "{";
    for (int c = 0; c < batch.num_columns(); ++c) {
      if (c) out += ", ";
      out += batch.schema()->field(c)->name() + ": ";
      auto scalar = batch.column(c)->GetScalar(r);
      out += scalar.ok() ? ((*scalar)->is_valid ? (*scalar)->ToString() : "NULL") : "?";
    }
    out += "}";
  }
  return out;
}

}  // namespace thund::engine::batch
