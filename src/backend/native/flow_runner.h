// Internal: runs one flow's query and streams its rows, checked against the
// target's expectations and schema, into a RowConsumer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <arrow/record_batch.h>
#include <arrow/result.h>

#include "backend/native/run_context.h"
#include "engine/batch/bad_rows.h"
#include "engine/batch/expectations.h"

namespace thund::native {

// Where a flow's rows go.
class RowConsumer {
 public:
  virtual ~RowConsumer() = default;
  // Called once, before any batch, with the schema of the rows.
  virtual arrow::Status Open(const std::shared_ptr<arrow::Schema>& schema) = 0;
  virtual arrow::Status Consume(const std::shared_ptr<arrow::RecordBatch>& batch) = 0;
};

struct FlowRunOptions {
  std::vector<engine::batch::CompiledExpectation> expectations;
  std::string select_list = "*";  // JsonSelectList() for JSON sinks
  // The schema rows must have (declared, or the dataset's first flow's);
  // null = whatever the flow produces. Ignored when conform is false.
  std::shared_ptr<arrow::Schema> target_schema;
  bool declared = false;
  bool conform = true;
  // Applied to every batch the flow's query produces, before expectations
  // (keyed writes: drops rows whose key is already at the target, right after
  // a file source). Empty = none.
  std::function<arrow::Result<std::shared_ptr<arrow::RecordBatch>>(
      const std::shared_ptr<arrow::RecordBatch>&)>
      pre_filter;
};

struct FlowResult {
  int64_t rows_in = 0;   // rows the query produced
  int64_t rows_out = 0;  // rows handed to the consumer
  int64_t elapsed_ms = 0;
  std::vector<int64_t> violations;  // per expectation, in FlowRunOptions order
  std::shared_ptr<arrow::Schema> schema;  // the consumer's schema
  engine::batch::BadRowsMode bad_rows_mode = engine::batch::BadRowsMode::kFail;
  std::vector<engine::batch::BadRow> bad_rows;  // skipped (drop / dead_letter)
};

// Emits kFlowStarted, kFlowProgress and one kExpectation per expectation.
// Errors (Invalid) name the flow and its source location: SQL errors from
// DuckDB, missing input files, schema mismatches, failed expectations,
// malformed input rows in bad_rows: fail mode.
arrow::Result<FlowResult> RunFlow(RunContext& ctx, const Flow& flow, const Dataset& target,
                                  const FlowRunOptions& options, RowConsumer& consumer);

// The flow's SQL translated for DuckDB (sql flows only), errors against the flow.
arrow::Result<std::string> TranslateFlowSql(const Flow& flow);

// Input files of a flow (table-function paths in its SQL, or its file
// source), expanded; a pattern matching nothing is an error naming the flow,
// the function and the path. Remote paths are returned unexpanded.
// Expanded once per run and flow (cached in ctx.input_files).
arrow::Result<std::vector<std::string>> FlowInputFiles(RunContext& ctx, const Flow& flow);
// The uncached expansion behind FlowInputFiles.
arrow::Result<std::vector<std::string>> ExpandFlowInputFiles(RunContext& ctx, const Flow& flow);

// True when DuckDB must reach object storage in this run: the storage root
// is on S3, or a flow reads an s3:// path (in its query's file reads, from
// the query's plan, or as its file source). Sinks are written through Arrow's
// filesystem and do not count.
arrow::Result<bool> UsesObjectStorage(const Pipeline& p,
                                      const engine::batch::StorageLayout& layout);

// "flow 'x' (file:line:col): <message>" as Invalid, keeping the status detail.
arrow::Status FlowError(const Flow& flow, const arrow::Status& st);

}  // namespace thund::native
