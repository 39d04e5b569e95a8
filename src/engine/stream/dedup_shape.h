// Deduplication shapes of a streaming flow's plan (IncrementalOperator::
// kDedup), for the incremental mode:
//  * Distinct: [Sort] Distinct <- Project <- a stateless plan over one
//    stream. The operator keeps the distinct rows it emitted; a trigger
//    emits its new rows' distinct rows that are not among them. When an
//    output column passes the stream's watermark column through unchanged,
//    kept rows older than W leave (no later row that is not late equals them).
//  * First row per key: Project? <- Filter(rn = 1) <- Project(row_number()
//    OVER (PARTITION BY keys ORDER BY t) AS rn, ...) <- filters over the scan
//    of one stream (SQL's usual deduplication). With t the watermark column
//    in ascending order, a key's first row is final once W passes it: the
//    operator keeps one candidate row per open key and the keys it decided.
//
// Pure: reads the plan only; pointers refer into the plan passed in.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "thund/plan.h"

namespace thund::engine::stream {

struct DedupShape {
  bool ok = false;
  std::string why;
  bool first_row = false;  // else: DISTINCT
  std::string input;       // the stream
  // DISTINCT: output columns that are input columns passed through
  // unchanged (output name, input column).
  std::vector<std::pair<std::string, std::string>> passed_columns;
  // First row: the row_number()'s input (its rows are the stream's rows),
  // its PARTITION BY columns, and its one ORDER BY column and direction.
  const plan::PlanNode* ranked_input = nullptr;
  std::vector<std::string> partition_columns;
  std::string order_column;
  bool order_descending = false;
};

DedupShape AnalyzeDedup(const plan::PlanNode& root,
                        const std::function<bool(const std::string&)>& is_stream);

}  // namespace thund::engine::stream
