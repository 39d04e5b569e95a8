// Makes a flow's output match the schema its dataset stores: the declared
// schema when there is one, else the schema of the dataset's first flow.
//
// Columns are matched by name (case-insensitively, as SQL does), reordered to
// the target order, and cast when the types differ (safe casts only: a value
// that does not convert is an error, never a silent NULL). Errors name the
// dataset, the flow, the columns and both types, and say what to do.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/record_batch.h>
#include <arrow/result.h>

namespace thund::engine::batch {

class SchemaConformer {
 public:
  // `declared`: true when `target` is the user's declared schema (errors then
  // say "declared"). Fails when a target column is missing from `produced`,
  // `produced` has extra columns, or a type cannot be cast at all.
  static arrow::Result<SchemaConformer> Make(const arrow::Schema& produced,
                                             std::shared_ptr<arrow::Schema> target,
                                             bool declared, std::string dataset,
                                             std::string flow);

  // REQUIRES: batch->schema() equals `produced`.
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Conform(
      const std::shared_ptr<arrow::RecordBatch>& batch) const;

  const std::shared_ptr<arrow::Schema>& target() const { return target_; }
  // True when Conform returns its input unchanged.
  bool identity() const { return identity_; }

 private:
  SchemaConformer() = default;

  std::shared_ptr<arrow::Schema> target_;
  std::vector<int> source_index_;  // target column -> produced column
  std::vector<bool> needs_cast_;
  bool identity_ = false;
  bool declared_ = false;
  std::string dataset_, flow_;
};

// "(a bigint, b string)" using the pipeline-file type names.
std::string DescribeSchema(const arrow::Schema& schema);

}  // namespace thund::engine::batch
