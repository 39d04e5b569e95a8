// Refuses Arrow values that DuckDB would silently truncate.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/status.h>

#include <memory>
#include <vector>

namespace thund::engine::duckdb_internal {

// DuckDB stores TIMESTAMP WITH TIME ZONE, TIME and INTERVAL with microsecond
// precision, so converting Arrow timestamp[ns, tz=...], time64[ns], duration[ns] and
// month_day_nano_interval drops any sub-microsecond part without an error. This check
// returns Invalid (naming the column and the first offending row) when such a value
// is present, so no data is lost silently. timestamp[ns] without a time zone maps to
// DuckDB's TIMESTAMP_NS and is exact. Only top-level columns are inspected; values
// nested in lists/structs/maps, or behind dictionary / run-end encoding, are not.
arrow::Status CheckMicrosecondPrecision(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches);

}  // namespace thund::engine::duckdb_internal
