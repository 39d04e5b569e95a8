// Round trips through the SQL surface over generated pipelines:
//   IR -> SQL -> IR is equal, formatting is idempotent, and
//   SQL -> IR -> pipeline file -> IR is equal.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "testing/random_pipeline.h"
#include "thund/pipeline_file.h"
#include "thund/sql_pipeline.h"

namespace thund {
namespace {

std::string Diags(const Diagnostics& ds, const std::string& text) {
  std::string out;
  for (const auto& d : ds) out += RenderDiagnostic(d, text);
  return out;
}

void ExpectSqlRoundTrip(const Pipeline& p, uint64_t seed) {
  const std::string sql = FormatSql(p);
  ParseResult r = ParseSql(sql, "generated.sql");
  ASSERT_TRUE(r.ok()) << "seed " << seed << "\n" << Diags(r.diagnostics, sql) << "\n" << sql;
  if (!(r.pipeline == p)) {
    ADD_FAILURE() << "seed " << seed << ": IR -> SQL -> IR differs\n--- SQL\n"
                  << sql << "\n--- want\n"
                  << p.ToString() << "\n--- got\n"
                  << r.pipeline.ToString();
    return;
  }
  EXPECT_EQ(FormatSql(r.pipeline), sql) << "seed " << seed << ": formatting is not idempotent";
}

TEST(SqlRoundTrip, GeneratedPipelinesWithPlainNames) {
  testing::RandomPipelineOptions opt;
  opt.tricky_strings = false;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    testing::RandomPipelineGenerator gen(seed, opt);
    ExpectSqlRoundTrip(gen.Next(), seed);
    if (HasFailure()) return;
  }
}

TEST(SqlRoundTrip, GeneratedPipelinesWithAwkwardStrings) {
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    testing::RandomPipelineGenerator gen(seed * 7919 + 13);
    ExpectSqlRoundTrip(gen.Next(), seed);
    if (HasFailure()) return;
  }
}

TEST(SqlRoundTrip, StreamingFlowsWrittenInSparkSyntax) {
  // Bodies that imply a watermark and a window, with IR knobs that agree,
  // differ, or remove what the body implies.
  const std::string body =
      "SELECT window.start, count(*) AS n FROM STREAM events WATERMARK ts DELAY OF INTERVAL 10 "
      "SECONDS GROUP BY window(ts, '1 minute')";
  StreamingSpec implied;
  implied.watermark = Watermark{"ts", 10000, std::nullopt};
  implied.window = WindowSpec::Tumbling("ts", 60000);
  std::vector<std::optional<StreamingSpec>> variants;
  variants.push_back(implied);
  variants.push_back(std::nullopt);
  StreamingSpec v = implied;
  v.window.reset();
  variants.push_back(v);
  v = implied;
  v.watermark->idle_timeout_ms = 60000;
  v.trigger = Trigger::ProcessingTime(5000);
  v.output_mode = OutputMode::kUpdate;
  v.mode = StreamingMode::kIncremental;
  variants.push_back(v);
  v = implied;
  v.window = WindowSpec::Hopping("event_time", 60000, 10000);
  variants.push_back(v);
  v = implied;
  v.watermark.reset();
  v.window = WindowSpec::Session("ts", 300000);
  variants.push_back(v);
  for (size_t i = 0; i < variants.size(); ++i) {
    Pipeline p("p");
    p.Add(Dataset::StreamingTable("events"));
    p.Add(Dataset::StreamingTable("agg"));
    Flow f("agg", "agg", body);
    f.streaming = variants[i];
    p.Add(f);
    Flow g("extra", "agg", body);
    g.streaming = variants[i];
    p.Add(g);
    ExpectSqlRoundTrip(p, i);
  }
}

TEST(SqlRoundTrip, SqlToIrToPipelineFileToIr) {
  const std::string sql = R"sql(
CREATE PIPELINE shop WITH (storage = '/tmp/shop');
SET spark.sql.shuffle.partitions = 4;
CREATE STREAMING TABLE raw_orders (
  id BIGINT NOT NULL COMMENT 'order id',
  customer STRING,
  amount DECIMAL(12, 2),
  ts TIMESTAMP,
  CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW
)
WITH (keyed_write.keys = (id), keyed_write.buckets = 8)
AS SELECT * FROM STREAM read_files('landing/orders/*.json', format => 'json');
CREATE MATERIALIZED VIEW per_customer
COMMENT 'revenue per customer'
PARTITIONED BY (customer)
AS SELECT customer, sum(amount) AS revenue FROM raw_orders GROUP BY customer;
CREATE STREAMING TABLE per_minute
WITH (trigger = '10s', output_mode = 'update', mode = 'incremental', idle_timeout = '1m')
AS SELECT window.start, count(*) AS n FROM STREAM raw_orders WATERMARK ts DELAY OF INTERVAL 5 SECONDS
GROUP BY window(ts, '1 minute');
CREATE STREAMING TABLE customers;
CREATE FLOW customers_cdc AS AUTO CDC INTO customers FROM STREAM customer_changes
KEYS (id) APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS * EXCEPT (op, seq)
STORED AS SCD TYPE 2;
CREATE STREAMING TABLE customer_changes AS SELECT * FROM STREAM read_kafka(
  bootstrap_servers => 'localhost:9092', topic => 'customers');
CREATE SINK exported USING parquet LOCATION 's3://bucket/out/' WITH (write_mode = 'overwrite');
CREATE FLOW export AS INSERT INTO exported BY NAME SELECT * FROM per_customer;
)sql";
  ParseResult r = ParseSql(sql, "shop.sql");
  ASSERT_TRUE(r.ok()) << Diags(r.diagnostics, sql);
  ASSERT_EQ(r.pipeline.datasets.size(), 6u);
  ASSERT_EQ(r.pipeline.flows.size(), 6u);
  const std::string file = FormatPipelineFile(r.pipeline);
  ParseResult back = ParsePipelineFile(file, "shop.yaml");
  ASSERT_TRUE(back.ok()) << Diags(back.diagnostics, file) << file;
  EXPECT_EQ(back.pipeline, r.pipeline) << file;
  // ... and the SQL written back from the file's IR reads as the same IR.
  ParseResult again = ParseSql(FormatSql(back.pipeline), "again.sql");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.pipeline, r.pipeline);
}

TEST(SqlRoundTrip, GeneratedPipelinesThroughThePipelineFile) {
  testing::RandomPipelineOptions opt;
  opt.tricky_strings = false;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    testing::RandomPipelineGenerator gen(seed + 5000, opt);
    Pipeline p = gen.Next();
    ParseResult from_sql = ParseSql(FormatSql(p), "g.sql");
    ASSERT_TRUE(from_sql.ok()) << "seed " << seed;
    ParseResult from_file = ParsePipelineFile(FormatPipelineFile(from_sql.pipeline), "g.yaml");
    ASSERT_TRUE(from_file.ok()) << "seed " << seed;
    EXPECT_EQ(from_file.pipeline, p) << "seed " << seed;
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace thund

namespace thund {
namespace {

// Random statement soup: the parser never crashes, and whatever it accepts
// formats back to SQL that reads as the same IR.
TEST(SqlRoundTrip, ParserSurvivesStatementSoup) {
  const std::vector<std::string> kFragments = {"CREATE",
                                               "MATERIALIZED VIEW",
                                               "STREAMING TABLE",
                                               "FLOW",
                                               "TEMPORARY VIEW",
                                               "SINK",
                                               "t",
                                               "f",
                                               "AS",
                                               "SELECT 1 AS a",
                                               "SELECT * FROM STREAM s",
                                               "INSERT INTO",
                                               "BY NAME",
                                               "ONCE",
                                               "(",
                                               ")",
                                               "a BIGINT",
                                               "b STRING NOT NULL COMMENT 'x'",
                                               "CONSTRAINT c EXPECT (a > 0)",
                                               "ON VIOLATION DROP ROW",
                                               ",",
                                               ";",
                                               "WITH",
                                               "(trigger = '1s')",
                                               "(output_mode = 'update')",
                                               "COMMENT 'c'",
                                               "USING parquet",
                                               "LOCATION '/x'",
                                               "PARTITIONED BY (a)",
                                               "TBLPROPERTIES ('k' = 'v')",
                                               "SET k = v",
                                               "USE SCHEMA s",
                                               "AUTO CDC INTO",
                                               "FROM",
                                               "KEYS (a)",
                                               "SEQUENCE BY b",
                                               "STORED AS SCD TYPE 2",
                                               "SELECT * FROM STREAM read_memory('m')",
                                               "WATERMARK ts DELAY OF INTERVAL 1 SECOND",
                                               "GROUP BY window(ts, '1 minute')",
                                               "SQL 'x'",
                                               "SOURCE read_files('p')",
                                               "'",
                                               "`q`",
                                               "--c\n"};
  std::mt19937_64 rng(11);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string sql;
    const int n = 1 + static_cast<int>(rng() % 16);
    for (int k = 0; k < n; ++k) sql += kFragments[rng() % kFragments.size()] + " ";
    ParseResult r = ParseSql(sql, "soup.sql");
    if (!r.ok()) {
      for (const auto& d : r.diagnostics) {
        EXPECT_TRUE(d.location.known()) << d.ToString() << "\n" << sql;
      }
      continue;
    }
    ++accepted;
    ParseResult again = ParseSql(FormatSql(r.pipeline), "again.sql");
    ASSERT_TRUE(again.ok()) << sql << "\n" << FormatSql(r.pipeline);
    ASSERT_EQ(again.pipeline, r.pipeline) << sql << "\n" << FormatSql(r.pipeline);
  }
  EXPECT_GT(accepted, 200);
}

}  // namespace
}  // namespace thund
