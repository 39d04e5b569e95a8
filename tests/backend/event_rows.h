// Test rows of the shape the streaming tests feed: an event time (timestamp,
// microseconds, UTC), a string key and an int64 value, each possibly NULL.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <gtest/gtest.h>

namespace thund::native::testing {

struct EventRow {
  std::optional<int64_t> ts;  // epoch microseconds
  std::optional<std::string> k;
  std::optional<int64_t> v;
};

// The rows as one batch with columns ts, k, v; `not_null` declares the fields
// NOT NULL, as some sources do (REQUIRES: no value is NULL then).
inline std::shared_ptr<arrow::RecordBatch> EventBatch(const std::vector<EventRow>& rows,
                                                      bool not_null = false) {
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  arrow::StringBuilder k;
  arrow::Int64Builder v;
  for (const auto& r : rows) {
    EXPECT_TRUE((r.ts ? ts.Append(*r.ts) : ts.AppendNull()).ok());
    EXPECT_TRUE((r.k ? k.Append(*r.k) : k.AppendNull()).ok());
    EXPECT_TRUE((r.v ? v.Append(*r.v) : v.AppendNull()).ok());
  }
  const bool nullable = !not_null;
  auto schema = arrow::schema({arrow::field("ts", ts.type(), nullable),
                               arrow::field("k", arrow::utf8(), nullable),
                               arrow::field("v", arrow::int64(), nullable)});
  std::shared_ptr<arrow::Array> a, b, c;
  EXPECT_TRUE(ts.Finish(&a).ok());
  EXPECT_TRUE(k.Finish(&b).ok());
  EXPECT_TRUE(v.Finish(&c).ok());
  return arrow::RecordBatch::Make(schema, static_cast<int64_t>(rows.size()), {a, b, c});
}

}  // namespace thund::native::testing
