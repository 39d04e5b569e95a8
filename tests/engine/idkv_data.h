// Deterministic (id, k, v) test data, produced twice from one generator: as Arrow
// record batches (fed to DuckDB through the thund_arrow_scan bridge) and as a SQL
// INSERT statement (loaded natively by DuckDB, the oracle). The two paths share no
// conversion code, so a bridge that mixes up columns or rows disagrees with the oracle.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/table.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace thund::engine::testing {

// Row i: id = i + id_offset; k = "k" + (id*7 % 13), NULL when id % 29 == 5;
// v = (id*31 % 1000) / 4.0, NULL when id % 17 == 3.
struct IdKvRow {
  int64_t id;
  std::optional<std::string> k;
  std::optional<double> v;
};
IdKvRow MakeIdKvRow(int64_t id);

std::shared_ptr<arrow::Schema> IdKvSchema();

// Rows [id_offset, id_offset + sum(batch_sizes)) cut into batches of the given sizes.
std::vector<std::shared_ptr<arrow::RecordBatch>> MakeIdKvBatches(
    const std::vector<int64_t>& batch_sizes, int64_t id_offset = 0);

// "CREATE TABLE <name> (id BIGINT, k VARCHAR, v DOUBLE); INSERT INTO <name> VALUES ..."
// with the same rows.
std::string IdKvCreateSql(const std::string& name, int64_t num_rows, int64_t id_offset = 0);

}  // namespace thund::engine::testing
