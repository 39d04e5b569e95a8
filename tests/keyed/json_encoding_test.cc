// One JSON encoding of values: the NDJSON writer of keyed writes
// (ndjson_writer.h) and the batch sinks' JSON (DuckDB's to_json of the row,
// sink_writer.h JsonSelectList) must give the same JSON value for every row,
// over every type a flow produces: integers of each width, doubles with NaN
// and infinities, strings with quotes, backslashes, control characters and
// non-ASCII text, dates, times, timestamps, decimals, lists, structs, maps,
// booleans and NULLs at every level. (DuckDB's to_json writes NaN and
// infinities as bare words, which are not JSON: the sink turns them into null,
// as the NDJSON writer does.)
#include <arrow/table.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/batch/sink_writer.h"
#include "engine/keyed/ndjson_writer.h"
#include "keyed/keyed_test_util.h"

namespace thund::engine::keyed {
namespace {

using testing::Oracle;

// Each column of the query below, as (name, SQL expression over i).
const char* kColumns[][2] = {
    {"i8", "CAST(i % 100 - 50 AS TINYINT)"},
    {"i16", "CAST(i * 300 - 20000 AS SMALLINT)"},
    {"i32", "CAST(i * 100000 AS INTEGER)"},
    {"i64", "CAST(i AS BIGINT) * 1000000000000 - 9000000000000000000"},
    {"u8", "CAST(i % 250 AS UTINYINT)"},
    {"u64", "CAST(i AS UBIGINT) * 1000000000000000"},
    {"f64",
     "CASE i % 7 WHEN 0 THEN 'nan'::DOUBLE WHEN 1 THEN 'inf'::DOUBLE WHEN 2 THEN '-inf'::DOUBLE "
     "WHEN 3 THEN -0.0 WHEN 4 THEN 1e300 * i ELSE i / 3.0 END"},
    {"f32", "CAST(i / 7.0 AS FLOAT)"},
    {"b", "i % 3 = 0"},
    {"s",
     "CASE i % 5 WHEN 0 THEN 'plain' WHEN 1 THEN 'quote \" and back\\\\slash' "
     "WHEN 2 THEN 'tab' || chr(9) || 'nl' || chr(10) || 'cr' || chr(13) || 'bell' || chr(7) "
     "WHEN 3 THEN 'naïve ☃ 日本' ELSE '' END"},
    {"d", "DATE '2024-02-29' + CAST(i AS INTEGER)"},
    {"t", "TIME '13:45:07.123456'"},
    {"ts", "TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i) SECOND * 3601"},
    {"ts_ms", "CAST(TIMESTAMP '1999-12-31 23:59:59.5' AS TIMESTAMP_MS)"},
    {"dec", "CAST(i * 1.25 - 3 AS DECIMAL(12, 3))"},
    {"dec38", "CAST('12345678901234567890.123456' AS DECIMAL(38, 6)) * (i % 3 - 1)"},
    {"l", "CASE WHEN i % 4 = 0 THEN NULL ELSE [i, NULL, i * 2] END"},
    {"ls", "['a\"b', NULL, '']"},
    {"st", "{'x': i, 'y': CASE WHEN i % 2 = 0 THEN NULL ELSE 'w' || i END, 'z': [1.5, NULL]}"},
    {"nested", "[{'k': i, 'v': [true, NULL]}]"},
    {"m", "MAP {'a': i, 'b': NULL}"},
};

std::string Query(bool nulls_everywhere) {
  std::string select;
  for (const auto& c : kColumns) {
    const std::string expr = nulls_everywhere
                                 ? std::string("CASE WHEN i % 6 = 5 THEN NULL ELSE ") + c[1] + " END"
                                 : std::string(c[1]);
    select += (select.empty() ? "" : ", ") + expr + " AS " + c[0];
  }
  return "SELECT " + select + " FROM range(0, 60) t(i)";
}

TEST(JsonEncodingTest, NdjsonWriterAndBatchSinkJsonGiveTheSameValues) {
  Oracle oracle;
  for (bool nulls : {false, true}) {
    SCOPED_TRACE(nulls ? "with NULLs" : "without NULLs");
    const std::string query = Query(nulls);
    // The rows as Arrow (what the keyed writer gets) and as the sink's JSON.
    auto table = oracle.session().Query(query + " ORDER BY i");
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    auto sink = oracle.session().Query("SELECT " + engine::batch::JsonSelectList() + " FROM (" +
                                       query + " ORDER BY i) AS \"__thund_q\"");
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    std::string ndjson;
    auto combined = (*table)->CombineChunksToBatch();
    ASSERT_TRUE(combined.ok()) << combined.status().ToString();
    ASSERT_TRUE(AppendNdjson(**combined, &ndjson).ok());
    std::istringstream lines(ndjson);
    auto sink_column = (*sink)->column(0);
    ASSERT_EQ((*sink)->num_rows(), (*table)->num_rows());
    int64_t row = 0;
    for (std::string line; std::getline(lines, line); ++row) {
      ASSERT_LT(row, (*sink)->num_rows());
      auto scalar = sink_column->GetScalar(row);
      ASSERT_TRUE(scalar.ok());
      // What the sink writes for that row (to_json made valid JSON).
      std::string expected;
      engine::batch::AppendFiniteJson((*scalar)->ToString(), &expected);
      nlohmann::json ours = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      nlohmann::json duck = nlohmann::json::parse(expected, nullptr, false);
      ASSERT_FALSE(ours.is_discarded()) << "not JSON: " << line;
      ASSERT_FALSE(duck.is_discarded()) << "not JSON: " << expected;
      for (const auto& c : kColumns) {
        EXPECT_EQ(ours[c[0]], duck[c[0]])
            << "row " << row << " column " << c[0] << "\n  ndjson_writer: " << ours[c[0]].dump()
            << "\n  batch sink:    " << duck[c[0]].dump();
      }
    }
    EXPECT_EQ(row, (*sink)->num_rows());
  }
}

}  // namespace
}  // namespace thund::engine::keyed
