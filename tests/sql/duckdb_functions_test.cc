// thund_add_micros (duckdb_functions.h) against DuckDB's own `ts +
// to_microseconds(us)`: the same values and result types for every timestamp
// type and DATE, before and after 1970, with NULLs and infinities; an
// overflow is an error.
#include <gtest/gtest.h>

#include "sql/duckdb_runner.h"

namespace thund::testing {
namespace {

TEST(ThundAddMicros, EqualsAddingAnIntervalForEveryTimestampType) {
  DuckDbRunner db;
  ASSERT_TRUE(db.Exec(
      "CREATE TABLE t AS SELECT * FROM (VALUES "
      "(TIMESTAMP '2026-01-01 00:00:05.25', -5250000), (TIMESTAMP '1969-12-31 23:59:59.999999', 1),"
      "(TIMESTAMP '1900-03-01 12:00:00', -86400000000), (NULL, 3), (TIMESTAMP '2026-06-01', NULL),"
      "(TIMESTAMP '2026-06-01 10:11:12.5', 123456789)) AS v(ts, us)"));
  for (const std::string type : {"TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMP_NS", "TIMESTAMP_MS",
                                 "TIMESTAMP_S", "DATE"}) {
    SCOPED_TRACE(type);
    const std::string ts = "CAST(ts AS " + type + ")";
    auto expected = db.Rows("SELECT " + ts + " + to_microseconds(us) AS r, typeof(" + ts +
                            " + to_microseconds(us)) AS t FROM t");
    auto actual = db.Rows("SELECT thund_add_micros(" + ts + ", us) AS r, typeof(thund_add_micros(" +
                          ts + ", us)) AS t FROM t");
    EXPECT_EQ(actual, expected);
  }
  // Infinities stay; a result beyond the range is an error, not a wrong value.
  EXPECT_EQ(db.Rows("SELECT thund_add_micros('infinity'::TIMESTAMP, 5), "
                    "thund_add_micros('-infinity'::TIMESTAMPTZ, -5)"),
            db.Rows("SELECT 'infinity'::TIMESTAMP, '-infinity'::TIMESTAMPTZ"));
  std::string error;
  EXPECT_FALSE(db.Exec("SELECT thund_add_micros(TIMESTAMP '2026-01-01', 9223372036854775000)",
                       &error));
  EXPECT_NE(error.find("out of range"), std::string::npos) << error;
}

}  // namespace
}  // namespace thund::testing
