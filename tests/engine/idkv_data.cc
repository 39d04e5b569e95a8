#include "engine/idkv_data.h"

#include <arrow/builder.h>
#include <gtest/gtest.h>

#include <cstdio>

namespace thund::engine::testing {

IdKvRow MakeIdKvRow(int64_t id) {
  IdKvRow row{id, std::nullopt, std::nullopt};
  if (id % 29 != 5) row.k = "k" + std::to_string(id * 7 % 13);
  if (id % 17 != 3) row.v = static_cast<double>(id * 31 % 1000) / 4.0;
  return row;
}

std::shared_ptr<arrow::Schema> IdKvSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("k", arrow::utf8()),
                        arrow::field("v", arrow::float64())});
}

std::vector<std::shared_ptr<arrow::RecordBatch>> MakeIdKvBatches(
    const std::vector<int64_t>& batch_sizes, int64_t id_offset) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  int64_t id = id_offset;
  for (int64_t size : batch_sizes) {
    arrow::Int64Builder ids;
    arrow::StringBuilder ks;
    arrow::DoubleBuilder vs;
    for (int64_t i = 0; i < size; ++i, ++id) {
      const IdKvRow row = MakeIdKvRow(id);
      EXPECT_TRUE(ids.Append(row.id).ok());
      EXPECT_TRUE((row.k ? ks.Append(*row.k) : ks.AppendNull()).ok());
      EXPECT_TRUE((row.v ? vs.Append(*row.v) : vs.AppendNull()).ok());
    }
    std::shared_ptr<arrow::Array> a, b, c;
    EXPECT_TRUE(ids.Finish(&a).ok());
    EXPECT_TRUE(ks.Finish(&b).ok());
    EXPECT_TRUE(vs.Finish(&c).ok());
    batches.push_back(arrow::RecordBatch::Make(IdKvSchema(), size, {a, b, c}));
  }
  return batches;
}

std::string IdKvCreateSql(const std::string& name, int64_t num_rows, int64_t id_offset) {
  std::string sql = "CREATE TABLE " + name + " (id BIGINT, k VARCHAR, v DOUBLE);";
  if (num_rows == 0) return sql;
  sql += "INSERT INTO " + name + " VALUES ";
  char buf[64];
  for (int64_t i = 0; i < num_rows; ++i) {
    const IdKvRow row = MakeIdKvRow(id_offset + i);
    if (i > 0) sql += ",";
    sql += "(" + std::to_string(row.id) + ",";
    sql += row.k ? "'" + *row.k + "'" : std::string("NULL");
    if (row.v) {
      std::snprintf(buf, sizeof(buf), ",%.17g)", *row.v);
      sql += buf;
    } else {
      sql += ",NULL)";
    }
  }
  return sql + ";";
}

}  // namespace thund::engine::testing
