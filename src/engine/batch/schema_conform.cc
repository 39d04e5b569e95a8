#include "engine/batch/schema_conform.h"

#include <algorithm>
#include <cctype>

#include <arrow/compute/api.h>

#include "engine/batch/compute_init.h"
#include "thund/type_names.h"

namespace thund::engine::batch {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

int FindColumn(const arrow::Schema& s, const std::string& name) {
  int exact = s.GetFieldIndex(name);
  if (exact >= 0) return exact;
  int found = -1;
  for (int i = 0; i < s.num_fields(); ++i) {
    if (Lower(s.field(i)->name()) == Lower(name)) {
      if (found >= 0) return -1;  // ambiguous
      found = i;
    }
  }
  return found;
}

std::string Col(const arrow::Field& f) {
  return "'" + f.name() + "' (" + FormatTypeName(*f.type()) + ")";
}

}  // namespace

std::string DescribeSchema(const arrow::Schema& schema) {
  std::string out = "(";
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (i) out += ", ";
    out += schema.field(i)->name() + " " + FormatTypeName(*schema.field(i)->type());
    if (!schema.field(i)->nullable()) out += " not null";
  }
  return out + ")";
}

arrow::Result<SchemaConformer> SchemaConformer::Make(const arrow::Schema& produced,
                                                     std::shared_ptr<arrow::Schema> target,
                                                     bool declared, std::string dataset,
                                                     std::string flow) {
  SchemaConformer c;
  c.target_ = std::move(target);
  c.declared_ = declared;
  c.dataset_ = std::move(dataset);
  c.flow_ = std::move(flow);
  const char* what = declared ? "the declared schema" : "the schema of the dataset's first flow";
  std::vector<std::string> problems;
  std::vector<bool> used(static_cast<size_t>(produced.num_fields()), false);
  for (const auto& field : c.target_->fields()) {
    int idx = FindColumn(produced, field->name());
    c.source_index_.push_back(idx);
    c.needs_cast_.push_back(false);
    if (idx < 0) {
      problems.push_back("missing column " + Col(*field));
      continue;
    }
    used[static_cast<size_t>(idx)] = true;
    const auto& from = produced.field(idx)->type();
    if (!from->Equals(*field->type())) {
      ARROW_RETURN_NOT_OK(EnsureComputeInitialized());
      if (!arrow::compute::CanCast(*from, *field->type())) {
        problems.push_back("column '" + field->name() + "' is " +
                           FormatTypeName(*field->type()) + " in " + what + " but the flow produces " +
                           FormatTypeName(*from) + ", which cannot be converted");
      }
      c.needs_cast_.back() = true;
    }
  }
  for (int i = 0; i < produced.num_fields(); ++i) {
    if (!used[static_cast<size_t>(i)]) {
      problems.push_back("unexpected column " + Col(*produced.field(i)));
    }
  }
  if (!problems.empty()) {
    std::string msg;
    for (const auto& p : problems) msg += (msg.empty() ? "" : "; ") + p;
    return arrow::Status::Invalid(
        "dataset '", c.dataset_, "': flow '", c.flow_, "' does not match ", what, ": ", msg,
        ". Expected ", DescribeSchema(*c.target_), ", the flow produces ",
        DescribeSchema(produced), declared ? ". Change the query (alias or CAST columns) or the "
                                             "declared schema"
                                           : ". Make every flow into the dataset produce the "
                                             "same columns");
  }
  c.identity_ = produced.num_fields() == c.target_->num_fields();
  for (int i = 0; i < c.target_->num_fields() && c.identity_; ++i) {
    c.identity_ = c.source_index_[static_cast<size_t>(i)] == i &&
                  !c.needs_cast_[static_cast<size_t>(i)] &&
                  produced.field(i)->name() == c.target_->field(i)->name() &&
                  c.target_->field(i)->nullable();
  }
  return c;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> SchemaConformer::Conform(
    const std::shared_ptr<arrow::RecordBatch>& batch) const {
  if (identity_) {
    if (batch->schema()->Equals(*target_, /*check_metadata=*/false)) return batch;
    return arrow::RecordBatch::Make(target_, batch->num_rows(), batch->columns());
  }
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (int i = 0; i < target_->num_fields(); ++i) {
    const auto& field = target_->field(i);
    auto column = batch->column(source_index_[static_cast<size_t>(i)]);
    if (needs_cast_[static_cast<size_t>(i)]) {
      auto cast = arrow::compute::Cast(*column, field->type(),
                                       arrow::compute::CastOptions::Safe());
      if (!cast.ok()) {
        return arrow::Status::Invalid(
            "dataset '", dataset_, "': column '", field->name(), "' is ",
            FormatTypeName(*field->type()), declared_ ? " (declared)" : "", " but flow '", flow_,
            "' produces ", FormatTypeName(*column->type()),
            " values that do not convert: ", cast.status().message(),
            ". CAST the column in the query, or fix the input");
      }
      column = *cast;
    }
    if (!field->nullable() && column->null_count() > 0) {
      return arrow::Status::Invalid("dataset '", dataset_, "': column '", field->name(),
                                    "' is declared not null but flow '", flow_, "' produced ",
                                    column->null_count(),
                                    " NULL value(s) in one batch. Filter them out (or add an "
                                    "expectation with on_violation: drop)");
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(target_, batch->num_rows(), std::move(columns));
}

}  // namespace thund::engine::batch
