// A deterministic table with one column per Arrow type the bridge supports, nulls in
// every column (at different rows), built batch by batch from generated JSON.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/table.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace thund::engine::testing {

// Column names: i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 flag s ls vs bin lbin fsb d32
// ts_s ts_ms ts_us ts_ns ts_us_utc ts_ns_ny t64 dec18 dec38 dec7 lst llst fsl st mp
// ival dict ree.
std::shared_ptr<arrow::Schema> TypedSchema();

// Rows [first_row, first_row + num_rows) as one batch.
std::shared_ptr<arrow::RecordBatch> MakeTypedBatch(int64_t first_row, int64_t num_rows);

// Consecutive batches of the given sizes (built independently, each starting at
// offset 0 in its buffers).
std::vector<std::shared_ptr<arrow::RecordBatch>> MakeTypedBatches(
    const std::vector<int64_t>& sizes);

// The same rows as MakeTypedBatches(sizes), but as zero-copy slices of one large batch
// (so every column array carries a non-zero offset).
std::vector<std::shared_ptr<arrow::RecordBatch>> MakeTypedSlices(const std::vector<int64_t>& sizes);

// The table DuckDB should hand back for these batches, in the registered types:
// dictionary and run-end encoded columns decoded to plain utf8 (DuckDB has no such
// encodings in its Arrow output); every other column unchanged.
std::shared_ptr<arrow::Table> DecodedTable(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches);

}  // namespace thund::engine::testing
