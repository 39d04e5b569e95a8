// The Spark backend against a real Spark Connect server (pyspark 4.3.0 from
// PyPI; tests/testing/spark_server.h): the corpus in tests/data/spark runs on
// both backends and every dataset is equal, read back through Spark Connect
// (Arrow); `thund lower` writes projects the stock spark-pipelines CLI runs;
// failures on Spark fail the run; an unreachable server is a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "spark/spark_fixture.h"

namespace thund {
namespace {

namespace fs = std::filesystem;
using engine::testing::TablesEqualUnordered;
using ::testing::HasSubstr;
using ::testing::Not;
using thund::testing::CommandResult;
using thund::testing::RunCommand;
using thund::testing::ReadParquet;
using thund::testing::ReadParquetDir;
using thund::testing::ShellQuote;
using thund::testing::Readings;
using thund::testing::WriteParquet;
using thund::testing::WriteText;

const std::string kCorpus = std::string(THUND_SOURCE_DIR) + "/tests/data/spark";


std::shared_ptr<arrow::Table> Events(int64_t first, int64_t n) {
  arrow::Int64Builder id, user;
  arrow::StringBuilder kind, page;
  const char* kinds[] = {"click", "view", "buy", "click"};
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(user.Append(i % 7).ok());
    EXPECT_TRUE(kind.Append(kinds[i % 4]).ok());
    EXPECT_TRUE(i % 5 == 0 ? page.AppendNull().ok() : page.Append("/p" + std::to_string(i % 3)).ok());
  }
  std::shared_ptr<arrow::Array> a, b, c, d;
  EXPECT_TRUE(id.Finish(&a).ok() && user.Finish(&b).ok() && kind.Finish(&c).ok() &&
              page.Finish(&d).ok());
  return arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64()),
                                           arrow::field("user_id", arrow::int64()),
                                           arrow::field("kind", arrow::utf8()),
                                           arrow::field("page", arrow::utf8())}),
                            {a, b, c, d});
}

class SparkBackendTest : public thund::testing::SparkFixture {
 protected:

  // A copy of corpus project `name` for one backend: its spec names a schema
  // of its own and the input / output directories.
  std::string Project(const std::string& name, const std::string& backend,
                      const std::string& database, const std::string& configuration = "") {
    const fs::path dir = tmp_.path() / (name + "-" + backend);
    fs::create_directories(dir);
    fs::copy(fs::path(kCorpus) / name / "transformations", dir / "transformations",
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    WriteText(dir / "spark-pipeline.yml",
              "name: " + name + "\nstorage: " + (dir / "storage").string() + "\ndatabase: " +
                  database + "\nconfiguration:\n  input: " + Input().string() +
                  "\n  output: " + (dir / "out").string() + "\n" + configuration +
                  "\nlibraries:\n  - glob:\n      include: transformations/**\n");
    return dir.string();
  }

  fs::path Input() const { return tmp_.path() / "input"; }

  CommandResult RunNative(const std::string& project) {
    return Thund("run " + ShellQuote(project) + " --events none");
  }
  // By default a full refresh: the server's catalog outlives a test.
  CommandResult RunSpark(const std::string& project,
                         const std::string& extra = "--full-refresh-all") {
    return Thund("run " + ShellQuote(project) + " --backend spark --remote " + remote_ +
                 " --spark-storage " + ShellQuote(project + "/spark-checkpoints") + " " + extra);
  }

};

TEST_F(SparkBackendTest, BatchProjectGivesTheSameDatasetsOnBothBackends) {
  WriteText(Input() / "orders.csv",
            "id,customer,cents\n1,ann,500\n2,bob,300\n3,ann,900\n4,cid,50\n5,bob,1200\n"
            "6,ann,20\n7,dee,0\n");
  arrow::StringBuilder customer, region;
  for (const char* c : {"ann", "bob", "cid", "dee"}) THUND_ASSERT_OK(customer.Append(c));
  for (const char* r : {"north", "south", "north", "east"}) THUND_ASSERT_OK(region.Append(r));
  std::shared_ptr<arrow::Array> ca, ra;
  THUND_ASSERT_OK(customer.Finish(&ca));
  THUND_ASSERT_OK(region.Finish(&ra));
  auto customers = arrow::Table::Make(
      arrow::schema({arrow::field("customer", arrow::utf8()), arrow::field("region", arrow::utf8())}),
      {ca, ra});
  WriteParquet(Input() / "customers" / "part-0.parquet", customers);
  const std::string native = Project("orders", "native", "corpus_orders");
  const std::string spark = Project("orders", "spark", "corpus_orders");
  CommandResult n = RunNative(native);
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  CommandResult s = RunSpark(spark);
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_THAT(s.out, HasSubstr("of pipeline 'orders': completed"));
  EXPECT_THAT(s.out, HasSubstr("flow 'customer_totals': done"));
  ExpectSameDatasets(native, spark,
                     {"customer_totals", "big_customers", "enriched", "region_share", "regions"});
}

TEST_F(SparkBackendTest, StreamingProjectGivesTheSameDatasetsRunAfterRun) {
  WriteParquet(Input() / "events" / "a.parquet", Events(0, 40));
  const std::string native = Project("events", "native", "corpus_events");
  const std::string spark = Project("events", "spark", "corpus_events");
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    if (run == 1) WriteParquet(Input() / "events" / "b.parquet", Events(40, 25));
    CommandResult n = RunNative(native);
    ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
    // The server's catalog outlives a test: the first run starts from nothing.
    CommandResult s = RunSpark(spark, run == 0 ? "--full-refresh-all" : "");
    ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
    // Flows into one table run as one Spark flow, and the report says so.
    EXPECT_THAT(s.out, HasSubstr("flows activity_clicks, activity_other: run as one Spark flow"));
    ExpectSameDatasets(native, spark, {"events", "clicks", "activity", "per_kind"});
    // Each file's rows land once, however many runs.
    auto events = Rows(spark, "events", true);
    ASSERT_TRUE(events);
    EXPECT_EQ(events->num_rows(), run == 0 ? 40 : 65);
    // The sinks wrote the same rows.
    auto a = ReadParquetDir(native + "/out/exported");
    auto b = ReadParquetDir(spark + "/out/exported");
    ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
    EXPECT_TRUE(TablesEqualUnordered(**a, **b, /*check_types=*/false));
  }
}

TEST_F(SparkBackendTest, WindowsInTheQueryCloseTheSameOnBothBackends) {
  WriteParquet(Input() / "readings" / "a.parquet", Readings({1, 5, 30, 61, 62, 95, 125, 150}));
  const std::string native = Project("windows", "native", "corpus_windows");
  const std::string spark = Project("windows", "spark", "corpus_windows");
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    // The second file moves the watermark past the windows the first left open.
    if (run == 1) WriteParquet(Input() / "readings" / "b.parquet", Readings({190, 250, 400}));
    CommandResult n = RunNative(native);
    ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
    CommandResult s = RunSpark(spark, run == 0 ? "--full-refresh-all" : "");
    ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
    ExpectSameDatasets(native, spark, {"readings", "per_minute", "sliding"});
  }
}

TEST_F(SparkBackendTest, ExpectationsDropTheSameRowsOnSpark) {
  WriteText(Input() / "readings.csv",
            "id,sensor,value\n1,a,20\n2,a,200\n3,,15\n4,b,-10\n5,b,-70\n6,c,99\n7,a,21\n");
  const std::string native = Project("quality", "native", "corpus_quality");
  const std::string spark = Project("quality", "spark", "corpus_quality");
  CommandResult n = RunNative(native);
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  CommandResult s = RunSpark(spark);
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_THAT(s.out, HasSubstr("expectation in_range (drop)"));
  ExpectSameDatasets(native, spark, {"valid_readings", "sensor_stats"});
  EXPECT_EQ(Rows(spark, "valid_readings", true)->num_rows(), 4);
}

TEST_F(SparkBackendTest, AFlowThatFailsOnSparkFailsTheRun) {
  // A violated FAIL expectation, and a division by zero (Spark's ANSI mode).
  WriteText(Input() / "readings.csv", "id,sensor,value\n1,a,20\n,b,30\n");
  // Spark retries a failed flow (twice, with back-off): once is enough here.
  const std::string spark = Project("quality", "spark", "corpus_failing",
                                    "  spark.sql.pipelines.maxFlowRetryAttempts: \"0\"\n");
  WriteText(fs::path(spark) / "transformations" / "broken.sql",
            "CREATE MATERIALIZED VIEW ratio AS SELECT id, value / (id - id) AS r FROM readings;\n");
  CommandResult s = RunSpark(spark);
  EXPECT_EQ(s.exit_code, 1) << s.out << s.err;
  EXPECT_THAT(s.out, HasSubstr("of pipeline 'quality': failed"));
  EXPECT_THAT(s.out, HasSubstr("expectation 'has_id' failed"));
  EXPECT_THAT(s.out, HasSubstr("DIVIDE_BY_ZERO"));
  // The flows that failed, and the one that did not run because of them.
  EXPECT_THAT(s.out, HasSubstr("valid_readings  failed"));
  EXPECT_THAT(s.out, HasSubstr("ratio           failed"));
  EXPECT_THAT(s.out, HasSubstr("sensor_stats    skipped"));
  EXPECT_THAT(s.out, HasSubstr("an upstream flow failed"));
}

TEST_F(SparkBackendTest, LoweredProjectRunsOnTheStockSparkPipelinesCli) {
  // A pipeline file (not SQL): rendered as Spark SQL plus Python for the file read.
  WriteParquet(Input() / "events" / "a.parquet", Events(0, 30));
  const fs::path dir = tmp_.path() / "yaml";
  WriteText(dir / "p.yaml",
            "name: stock\nstorage: " + (dir / "storage").string() +
                "\ndatasets:\n"
                "  - name: stock_events\n    kind: streaming_table\n"
                "  - name: stock_users\n    kind: materialized_view\n"
                "  - name: stock_sink\n    kind: sink\n    storage: {format: parquet, location: " +
                (dir / "sink").string() + "}\n"
                "flows:\n"
                "  - name: stock_events\n    target: stock_events\n"
                "    source: {kind: file_drop, path: " + (Input() / "events").string() +
                ", format: parquet}\n"
                "  - name: stock_users\n    target: stock_users\n"
                "    sql: SELECT user_id, count(*) AS n FROM stock_events GROUP BY user_id\n"
                "  - name: to_sink\n    target: stock_sink\n"
                "    sql: SELECT id, kind FROM STREAM(stock_events) WHERE user_id > 2\n");
  const std::string lowered = (dir / "lowered").string();
  CommandResult l = Thund("lower --to spark " + ShellQuote((dir / "p.yaml").string()) + " " +
                          ShellQuote(lowered) + " --spark-storage " +
                          ShellQuote((dir / "spark-storage").string()));
  ASSERT_EQ(l.exit_code, 0) << l.out << l.err;
  EXPECT_TRUE(fs::exists(fs::path(lowered) / "transformations" / "thund_definitions.py"));
  CommandResult stock =
      StockCli(lowered, "run --remote " + remote_ + " --full-refresh-all --spec spark-pipeline.yml");
  ASSERT_EQ(stock.exit_code, 0) << stock.out << stock.err;
  EXPECT_THAT(stock.out + stock.err, Not(HasSubstr("FAILED")));
  // Spark's sink files (written by the stock CLI), before the native run
  // writes its own to the same place.
  auto spark_sink = ReadParquetDir((dir / "sink").string());
  ASSERT_TRUE(spark_sink.ok()) << spark_sink.status().ToString();
  fs::remove_all(dir / "sink");
  CommandResult n = RunNative((dir / "p.yaml").string());
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  auto native_sink = ReadParquetDir((dir / "sink").string());
  ASSERT_TRUE(native_sink.ok()) << native_sink.status().ToString();
  EXPECT_GT((*native_sink)->num_rows(), 0);
  EXPECT_TRUE(TablesEqualUnordered(**native_sink, **spark_sink, /*check_types=*/false));
  for (const char* d : {"stock_events", "stock_users"}) {
    SCOPED_TRACE(d);
    auto a = Rows((dir / "p.yaml").string(), d, false);
    auto b = Rows((dir / "p.yaml").string(), d, true);
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(TablesEqualUnordered(*a, *b, /*check_types=*/false));
  }
}

TEST_F(SparkBackendTest, RefusalsComeBeforeAnyConnection) {
  // An unreachable server: the refusal when Spark cannot run the pipeline,
  // and the transport error only for a pipeline that lowers.
  const fs::path dir = tmp_.path() / "refused";
  WriteText(dir / "p.sql",
            "CREATE STREAMING TABLE g AS SELECT * FROM STREAM read_generator(kind => "
            "'keyed_events', total_rows => 10);\n"
            "CREATE STREAMING TABLE u WITH (output_mode = 'update') AS SELECT key, count(*) AS n "
            "FROM STREAM(g) GROUP BY key;\n");
  CommandResult r = Thund("run " + ShellQuote((dir / "p.sql").string()) +
                          " --backend spark --remote sc://127.0.0.1:1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("Spark 4.3 cannot run"));
  EXPECT_THAT(r.err, HasSubstr("source:generator"));
  EXPECT_THAT(r.err, Not(HasSubstr("no Spark Connect server")));
  CommandResult c = Thund("check " + ShellQuote((dir / "p.sql").string()) + " --backend spark");
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_THAT(c.err, HasSubstr("output:update"));

  WriteText(dir / "ok.sql", "CREATE MATERIALIZED VIEW one AS SELECT 1 AS x;\n");
  CommandResult t = Thund("run " + ShellQuote((dir / "ok.sql").string()) +
                          " --backend spark --remote sc://127.0.0.1:1");
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_THAT(t.err, HasSubstr("no Spark Connect server at sc://127.0.0.1:1"));
}

TEST_F(SparkBackendTest, QueryReadsWhatSparkWroteAsArrow) {
  const fs::path dir = tmp_.path() / "q";
  WriteText(dir / "spark-pipeline.yml",
            "name: q\nstorage: " + (dir / "storage").string() +
                "\ndatabase: corpus_query\nlibraries:\n  - glob:\n      include: t/**\n");
  WriteText(dir / "t" / "a.sql",
            "CREATE MATERIALIZED VIEW nums AS SELECT id, id * id AS sq, CAST(id AS STRING) AS s, "
            "id % 2 = 0 AS even FROM range(5);\n");
  CommandResult s = RunSpark(dir.string());
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  CommandResult q = Thund("query " + ShellQuote(dir.string()) +
                          " 'SELECT sum(sq) AS total, count_if(even) AS evens FROM "
                          "corpus_query.nums' --backend spark --format csv --remote " + remote_);
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_THAT(q.out, HasSubstr("total"));
  EXPECT_THAT(q.out, HasSubstr("\n30,3\n"));
  CommandResult n = RunNative(dir.string());
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  ExpectSameDatasets(dir.string(), dir.string(), {"nums"});
}

}  // namespace
}  // namespace thund
