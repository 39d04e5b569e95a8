// Expectations (data-quality rules) evaluated on a flow's output as it streams.
//
// The flow query is wrapped so that DuckDB computes one boolean "violates"
// column per expectation next to the data, `(<predicate>) IS NOT TRUE` (a NULL
// predicate result is a violation, as in SDP). The evaluator then works per
// Arrow batch: it counts violations per expectation, removes rows violating a
// Drop expectation, and stops at the first batch violating a Fail expectation
// with the expectation's name, the count so far and a sample of failing rows.
// Warn only counts. A row violating several expectations counts for each.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/record_batch.h>
#include <arrow/result.h>

#include "thund/ir.h"

namespace thund::engine::batch {

struct CompiledExpectation {
  Expectation rule;
  std::string duckdb_predicate;  // after SparkToDuckDb
};

// Translates every predicate of `dataset` for DuckDB. Errors name the
// dataset and the expectation (and its source location when known).
arrow::Result<std::vector<CompiledExpectation>> CompileExpectations(const Dataset& dataset);

// `SELECT <select_list>, (<p0>) IS NOT TRUE AS "__thund_violates_0", ...
//  FROM (<query>) AS "__thund_q"`. `select_list` is "*" for plain outputs;
// the predicates see the columns of `query`. With no expectations and
// select_list "*", returns `query` unchanged.
std::string WrapWithExpectations(const std::string& query,
                                 const std::vector<CompiledExpectation>& expectations,
                                 const std::string& select_list = "*");

class ExpectationEvaluator {
 public:
  ExpectationEvaluator(std::vector<CompiledExpectation> expectations, std::string dataset,
                       std::string flow)
      : expectations_(std::move(expectations)),
        dataset_(std::move(dataset)),
        flow_(std::move(flow)),
        violations_(expectations_.size(), 0) {}

  // `batch` ends with one violates-column per expectation (WrapWithExpectations).
  // Returns the batch without those columns and without dropped rows, or
  // Invalid when a Fail expectation is violated.
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Apply(
      const std::shared_ptr<arrow::RecordBatch>& batch);

  // The data schema: `with_flags` minus the trailing flag columns.
  std::shared_ptr<arrow::Schema> DataSchema(const arrow::Schema& with_flags) const;

  const std::vector<CompiledExpectation>& expectations() const { return expectations_; }
  // Violations per expectation (same order), counted over the rows seen so far.
  const std::vector<int64_t>& violations() const { return violations_; }
  int64_t rows_in() const { return rows_in_; }
  int64_t rows_dropped() const { return rows_dropped_; }

 private:
  std::vector<CompiledExpectation> expectations_;
  std::string dataset_, flow_;
  std::vector<int64_t> violations_;
  int64_t rows_in_ = 0;
  int64_t rows_dropped_ = 0;
};

// Up to `limit` rows of `batch` where `mask` is true, each as
// "{col: value, ...}" (for error messages).
std::string SampleRows(const arrow::RecordBatch& batch, const arrow::BooleanArray& mask,
                       int limit);

}  // namespace thund::engine::batch
