// Python SDP projects: thund reads the .py files itself (no Spark) and runs
// them natively; the same files run unchanged on real Spark with the stock
// `spark-pipelines run`; every dataset is equal. The oracle is Spark.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <tuple>
#include <fstream>

#include "backend/spark/spark_connect_client.h"
#include "spark/spark_fixture.h"

namespace thund {
namespace {

namespace fs = std::filesystem;
using engine::testing::TablesEqualUnordered;
using ::testing::HasSubstr;
using thund::testing::CommandResult;
using thund::testing::RunCommand;
using thund::testing::ReadParquetDir;
using thund::testing::ShellQuote;
using thund::testing::Readings;
using thund::testing::WriteParquet;
using thund::testing::WriteText;

const fs::path kCorpus = fs::path(THUND_SOURCE_DIR) / "tests/data/spark_python";

std::shared_ptr<arrow::Table> Strings(const std::vector<std::string>& names,
                                      const std::vector<std::vector<std::string>>& cols) {
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (size_t c = 0; c < names.size(); ++c) {
    arrow::StringBuilder b;
    for (const auto& v : cols[c]) EXPECT_TRUE(b.Append(v).ok());
    std::shared_ptr<arrow::Array> a;
    EXPECT_TRUE(b.Finish(&a).ok());
    fields.push_back(arrow::field(names[c], arrow::utf8()));
    arrays.push_back(a);
  }
  return arrow::Table::Make(arrow::schema(fields), arrays);
}

std::shared_ptr<arrow::Table> Events(int64_t n) {
  arrow::Int64Builder id, user;
  arrow::StringBuilder kind, page;
  const char* kinds[] = {"click", "view", "buy"};
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(id.Append(i).ok() && user.Append(i % 6).ok() && kind.Append(kinds[i % 3]).ok() &&
                page.Append("/p" + std::to_string(i % 4)).ok());
  }
  std::shared_ptr<arrow::Array> a, b, c, d;
  EXPECT_TRUE(id.Finish(&a).ok() && user.Finish(&b).ok() && kind.Finish(&c).ok() &&
              page.Finish(&d).ok());
  return arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("user_id", arrow::int64()),
                     arrow::field("kind", arrow::utf8()), arrow::field("page", arrow::utf8())}),
      {a, b, c, d});
}

// A schema no earlier run on the same server used: the server's catalog
// outlives a test, and the stock CLI leaves a table's old state behind.
std::string UniqueSchema(const std::string& stem) {
  return stem + "_" + std::to_string(::getpid()) + "_" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
}

// The spec of a CDC project in `dir`, storing under `dir` (a relative
// `storage` would be shared by every test run from the same directory).
std::string CdcSpec(const fs::path& dir) {
  return "name: cdc\nstorage: " + (dir / "storage").string() +
         "\nlibraries:\n  - glob:\n      include: t/**\n";
}

class PythonProjectsTest : public thund::testing::SparkFixture {
 protected:

  // A copy of corpus project `name` whose spec names `database` (created on
  // Spark: SDP does not create it) and the configuration the files read.
  std::string Project(const std::string& name, const std::string& side,
                      const std::string& database) {
    const fs::path dir = tmp_.path() / (name + "-" + side);
    fs::create_directories(dir);
    fs::copy(kCorpus / name / "transformations", dir / "transformations",
             fs::copy_options::recursive);
    WriteText(dir / "spark-pipeline.yml",
              "name: " + name + "\nstorage: file://" + (dir / "storage").string() +
                  "\ndatabase: " + database + "\nconfiguration:\n  input: " +
                  (tmp_.path() / "input").string() +
                  "\n  output: " + (dir / "out").string() + "\n  threshold: \"1000\"\n  spark.sql.streaming.schemaInference: \"true\"\n"
                  "libraries:\n  - glob:\n      include: transformations/**\n");
    return dir.string();
  }

  // The stock CLI of the pyspark package, on the test's Spark server.
  CommandResult RunOnSpark(const std::string& project, const std::string& database) {
    auto r = spark::ParseSparkRemote(remote_);
    EXPECT_TRUE(r.ok());
    auto client = spark::SparkConnectClient::Connect(*r);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (client.ok()) {
      EXPECT_TRUE((*client)->ExecuteSql("CREATE SCHEMA IF NOT EXISTS " + database).ok());
    }
    return StockCli(project,
                    "run --remote " + remote_ + " --full-refresh-all --spec spark-pipeline.yml");
  }

  // Runs the Python project `py` and its SQL twin `sql` with `args`; each of
  // `tables` must hold the same rows in both.
  void ExpectPythonEqualsSql(const fs::path& py, const fs::path& sql,
                             const std::vector<std::string>& tables, const std::string& args) {
    for (const fs::path& dir : {py, sql}) {
      CommandResult r = Thund("run " + ShellQuote(dir.string()) + " " + args);
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
    for (const std::string& t : tables) {
      SCOPED_TRACE(t + " (" + args + ")");
      auto from_python = Rows(py.string(), t, false);
      auto from_sql = Rows(sql.string(), t, false);
      ASSERT_TRUE(from_python && from_sql);
      EXPECT_TRUE(TablesEqualUnordered(*from_sql, *from_python));
    }
  }
};

TEST_F(PythonProjectsTest, TheSparkPipelinesInitProjectRunsNativelyAsOnSpark) {
  CommandResult init = StockCli(tmp_.path().string(), "init --name py_init");
  ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
  const fs::path project = tmp_.path() / "py_init";
  ASSERT_TRUE(fs::exists(project / "transformations" / "example_python_materialized_view.py"));
  CommandResult check = Thund("check " + ShellQuote(project.string()));
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  CommandResult run = Thund("run " + ShellQuote(project.string()) + " --events none");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // The same project on Spark, unchanged (the stock CLI, default schema).
  CommandResult spark = RunOnSpark(project.string(), "default");
  ASSERT_EQ(spark.exit_code, 0) << spark.out << spark.err;
  for (const char* d : {"example_python_materialized_view", "example_sql_materialized_view"}) {
    SCOPED_TRACE(d);
    auto a = Rows(project.string(), d, false);
    auto b = Rows(project.string(), d, true);
    ASSERT_TRUE(a && b);
    EXPECT_GT(a->num_rows(), 0);
    EXPECT_TRUE(TablesEqualUnordered(*a, *b, /*check_types=*/false));
  }
  // It converts to the other surfaces like any pipeline.
  CommandResult fmt = Thund("fmt " + ShellQuote(project.string()) + " --to yaml");
  ASSERT_EQ(fmt.exit_code, 0) << fmt.err;
  EXPECT_THAT(fmt.out, HasSubstr("example_python_materialized_view"));
}

TEST_F(PythonProjectsTest, BatchProjectMixedWithSqlEqualsSpark) {
  WriteText(tmp_.path() / "input" / "orders.csv",
            "id,customer,cents\n1,ann,500\n2,bob,300\n3,ann,900\n4,cid,50\n5,bob,1200\n"
            "6,ann,20\n7,dee,0\n8,cid,2000\n");
  WriteParquet(tmp_.path() / "input" / "customers" / "part-0.parquet",
               Strings({"customer", "region"}, {{"ann", "bob", "cid", "eve"},
                                                 {"north", "south", "north", "west"}}));
  const std::string db = UniqueSchema("py_batch");
  const std::string native = Project("py_batch", "native", db);
  const std::string spark = Project("py_batch", "spark", db);
  CommandResult n = Thund("run " + ShellQuote(native) + " --events none");
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  CommandResult s = RunOnSpark(spark, db);
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  ExpectSameDatasets(native, spark,
             {"customer_totals", "top_orders", "big_by_region", "all_customers", "report"});
}

TEST_F(PythonProjectsTest, StreamingProjectEqualsSpark) {
  WriteParquet(tmp_.path() / "input" / "events" / "a.parquet", Events(30));
  const std::string db = UniqueSchema("py_stream");
  const std::string native = Project("py_stream", "native", db);
  const std::string spark = Project("py_stream", "spark", db);
  CommandResult n = Thund("run " + ShellQuote(native) + " --events none");
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  CommandResult s = RunOnSpark(spark, db);
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  ExpectSameDatasets(native, spark, {"events", "clicks", "activity", "per_kind"});
  // The Python sink wrote the same rows.
  auto a = ReadParquetDir(native + "/out/click_export");
  auto b = ReadParquetDir(spark + "/out/click_export");
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
  EXPECT_GT((*a)->num_rows(), 0);
  EXPECT_TRUE(TablesEqualUnordered(**a, **b, /*check_types=*/false));
}

TEST_F(PythonProjectsTest, TheSparkBackendSendsThePythonFilesUnchanged) {
  // thund run --backend spark: SQL through thund's lowering, the .py files
  // through pyspark's own client in thund's Spark Connect session.
  WriteParquet(tmp_.path() / "input" / "events" / "a.parquet", Events(24));
  const std::string db = UniqueSchema("py_backend");
  const std::string native = Project("py_stream", "native", db);
  const std::string spark = Project("py_stream", "spark", db);
  WriteText(fs::path(spark) / "transformations" / "users.sql",
            "CREATE MATERIALIZED VIEW users AS SELECT DISTINCT user_id FROM activity;\n");
  WriteText(fs::path(native) / "transformations" / "users.sql",
            "CREATE MATERIALIZED VIEW users AS SELECT DISTINCT user_id FROM activity;\n");
  CommandResult n = Thund("run " + ShellQuote(native) + " --events none");
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  CommandResult s = Thund("run " + ShellQuote(spark) + " --backend spark --remote " + remote_ +
                          " --full-refresh-all");
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_THAT(s.out, HasSubstr("flow 'clicks': done"));
  ExpectSameDatasets(native, spark, {"events", "clicks", "activity", "per_kind", "users"});
  // thund lower copies the .py files as they are.
  const fs::path lowered = tmp_.path() / "lowered";
  CommandResult l = Thund("lower --to spark " + ShellQuote(spark) + " " + ShellQuote(lowered));
  ASSERT_EQ(l.exit_code, 0) << l.out << l.err;
  std::ifstream a(fs::path(spark) / "transformations" / "events.py");
  std::ifstream b(lowered / "transformations" / "events.py");
  std::stringstream sa, sb;
  sa << a.rdbuf();
  sb << b.rdbuf();
  EXPECT_EQ(sa.str(), sb.str());
}

TEST_F(PythonProjectsTest, StreamingWindowsFromPythonRunNativelyAsOnSpark) {
  // F.window / F.session_window in groupBy, window.start / window.end after
  // it: the same datasets natively (recompute and incremental) as on Spark
  // (the .py files unchanged, thund's Spark backend), run after run.
  WriteParquet(tmp_.path() / "input" / "readings" / "a.parquet",
               Readings({1, 5, 30, 61, 62, 95, 125, 150}));
  const std::string db = UniqueSchema("py_windows");
  const std::string recompute = Project("py_windows", "recompute", db);
  const std::string incremental = Project("py_windows", "incremental", db);
  const std::string spark = Project("py_windows", "spark", db);
  // The windowed aggregation is the flow's outermost SELECT (the loader
  // flattens sqlframe's CTEs), so windows close and run incrementally.
  CommandResult explain = Thund("explain " + ShellQuote(incremental) +
                                " --streaming-mode incremental");
  ASSERT_EQ(explain.exit_code, 0) << explain.out << explain.err;
  EXPECT_THAT(explain.out, HasSubstr("partial aggregate"));
  const std::vector<std::string> datasets = {"readings", "per_minute", "per_minute_bounds",
                                             "sliding", "sessions"};
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    // The second file moves the watermark past the windows the first left open.
    if (run == 1) {
      WriteParquet(tmp_.path() / "input" / "readings" / "b.parquet", Readings({190, 250, 400}));
    }
    CommandResult r = Thund("run " + ShellQuote(recompute) + " --events none");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    CommandResult i = Thund("run " + ShellQuote(incremental) +
                            " --events none --streaming-mode incremental");
    ASSERT_EQ(i.exit_code, 0) << i.out << i.err;
    CommandResult s = Thund("run " + ShellQuote(spark) + " --backend spark --remote " + remote_ +
                            " --spark-storage " + ShellQuote(spark + "/spark-checkpoints") +
                            (run == 0 ? " --full-refresh-all" : ""));
    ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
    ExpectSameDatasets(recompute, spark, datasets);
    ExpectSameDatasets(incremental, spark, datasets);
  }
  // After the second run the first file's windows are all closed.
  auto bounds = Rows(recompute, "per_minute_bounds", false);
  ASSERT_TRUE(bounds);
  EXPECT_GE(bounds->num_rows(), 5);
}

TEST_F(PythonProjectsTest, ChainsAcrossPythonAndSqlResolve) {
  // numbers (py) -> doubled (sql) -> bucket_stats (py) -> ranked (sql) ->
  // top_buckets (py): read in rounds until every dataset's columns are known.
  const std::string db = UniqueSchema("py_chain");
  const std::string native = Project("py_chain", "native", db);
  const std::string spark = Project("py_chain", "spark", db);
  CommandResult n = Thund("run " + ShellQuote(native) + " --events none");
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  CommandResult s = RunOnSpark(spark, db);
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  ExpectSameDatasets(native, spark,
                     {"numbers", "doubled", "bucket_stats", "ranked", "top_buckets"});
  EXPECT_EQ(Rows(native, "top_buckets", false)->num_rows(), 2);
}

TEST_F(PythonProjectsTest, ExpectationsFromPythonRunAsOnSpark) {
  // drop / warn / fail, single and expect_all, below and above the dataset
  // decorator. Spark runs drop as a WHERE and fail as assert_true, as for SQL.
  WriteText(tmp_.path() / "input" / "readings.csv",
            "id,sensor,value\n1,a,20\n2,a,200\n3,,15\n4,b,-10\n5,b,-70\n6,c,99\n7,a,21\n"
            ",c,5\n");
  const std::string db = UniqueSchema("py_quality");
  const std::string native = Project("py_quality", "native", db);
  const std::string spark = Project("py_quality", "spark", db);
  CommandResult check = Thund("check " + ShellQuote(native) + " --format json");
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  CommandResult n = Thund("run " + ShellQuote(native));
  ASSERT_EQ(n.exit_code, 0) << n.out << n.err;
  // Each expectation is the IR's: counted natively, with its action.
  CommandResult yaml = Thund("fmt " + ShellQuote(native) + " --to yaml");
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  for (const char* e : {"has_sensor", "positive", "in_range", "known", "small", "has_rows"}) {
    EXPECT_THAT(yaml.out, HasSubstr(e));
  }
  EXPECT_THAT(yaml.out, HasSubstr("on_violation: drop"));
  EXPECT_THAT(yaml.out, HasSubstr("on_violation: fail"));
  CommandResult s = Thund("run " + ShellQuote(spark) + " --backend spark --remote " + remote_ +
                          " --spark-storage " + ShellQuote(spark + "/spark-checkpoints") +
                          " --full-refresh-all");
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_THAT(s.out, HasSubstr("in_range (drop)"));
  ExpectSameDatasets(native, spark,
                     {"raw_readings", "valid_readings", "in_range", "sensor_stats"});
  // has_sensor drops 3; in_range drops 2 (200), 5 (-70) and the id-less row.
  EXPECT_EQ(Rows(native, "valid_readings", false)->num_rows(), 7);
  EXPECT_EQ(Rows(native, "in_range", false)->num_rows(), 4);

  // A violated fail expectation fails the flow on both backends.
  for (const std::string& project : {native, spark}) {
    WriteText(fs::path(project) / "transformations" / "strict.py",
              "from pyspark import pipelines as dp\n\n"
              "@dp.materialized_view\n@dp.expect_or_fail('small_values', 'value < 50')\n"
              "def strict():\n    return spark.read.table('in_range')\n");
  }
  CommandResult nf = Thund("run " + ShellQuote(native) + " --events none");
  EXPECT_EQ(nf.exit_code, 1) << nf.out << nf.err;
  EXPECT_THAT(nf.out + nf.err, HasSubstr("small_values"));
  CommandResult sf = Thund("run " + ShellQuote(spark) + " --backend spark --remote " + remote_ +
                           " --spark-storage " + ShellQuote(spark + "/spark-checkpoints") +
                           " --full-refresh-all");
  EXPECT_EQ(sf.exit_code, 1) << sf.out << sf.err;
  EXPECT_THAT(sf.out, HasSubstr("expectation 'small_values' failed"));
}

TEST_F(PythonProjectsTest, AutoCdcFromPythonEqualsTheSqlForm) {
  // Spark cannot run AUTO CDC on Parquet tables (docs/spark.md): the oracle is
  // the same flow written in SQL, and the rows a reader expects.
  arrow::Int64Builder id, seq;
  arrow::StringBuilder name, op;
  const std::vector<std::tuple<int64_t, std::string, int64_t, std::string>> rows = {
      {1, "a", 1, "u"}, {2, "b", 1, "u"}, {1, "a2", 2, "u"}, {3, "c", 1, "u"}, {2, "x", 3, "d"}};
  for (const auto& [i, n, q, o] : rows) {
    THUND_ASSERT_OK(id.Append(i));
    THUND_ASSERT_OK(name.Append(n));
    THUND_ASSERT_OK(seq.Append(q));
    THUND_ASSERT_OK(op.Append(o));
  }
  std::shared_ptr<arrow::Array> a, b, c, d;
  THUND_ASSERT_OK(id.Finish(&a));
  THUND_ASSERT_OK(name.Finish(&b));
  THUND_ASSERT_OK(seq.Finish(&c));
  THUND_ASSERT_OK(op.Finish(&d));
  WriteParquet(tmp_.path() / "input" / "changes" / "c.parquet",
               arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64()),
                                                 arrow::field("name", arrow::utf8()),
                                                 arrow::field("seq", arrow::int64()),
                                                 arrow::field("op", arrow::utf8())}),
                                  {a, b, c, d}));
  const std::string changes = (tmp_.path() / "input" / "changes").string();
  const fs::path py = tmp_.path() / "cdc-python";
  WriteText(py / "spark-pipeline.yml", CdcSpec(py));
  WriteText(py / "t" / "c.py",
            "from pyspark import pipelines as dp\nfrom pyspark.sql import functions as F\n\n"
            "@dp.table\ndef changes():\n    return spark.readStream.format('parquet').load('" +
                changes +
                "')\n\ndp.create_streaming_table('users')\n"
                "dp.create_auto_cdc_flow(target='users', source='changes', keys=['id'],\n"
                "    sequence_by=F.col('seq'), apply_as_deletes=F.expr(\"op = 'd'\"),\n"
                "    except_column_list=['op'], stored_as_scd_type=1)\n");
  const fs::path sql = tmp_.path() / "cdc-sql";
  WriteText(sql / "spark-pipeline.yml", CdcSpec(sql));
  WriteText(sql / "t" / "c.sql",
            "CREATE STREAMING TABLE changes AS SELECT * FROM STREAM read_files('" + changes +
                "', format => 'parquet');\nCREATE STREAMING TABLE users;\n"
                "CREATE FLOW users AS AUTO CDC INTO users FROM STREAM(changes) KEYS (id)\n"
                "APPLY AS DELETE WHEN op = 'd' SEQUENCE BY seq COLUMNS * EXCEPT (op)\n"
                "STORED AS SCD TYPE 1;\n");
  ExpectPythonEqualsSql(py, sql, {"users"}, "--events none");
  auto from_python = Rows(py.string(), "users", false);
  ASSERT_TRUE(from_python);
  EXPECT_EQ(from_python->num_rows(), 2);  // 1 (a2, its latest) and 3; 2 was deleted
}

TEST_F(PythonProjectsTest, AutoCdcColumnListsAndTrackedHistoryEqualTheSqlForm) {
  // column_list and track_history_(except_)column_list lower to the IR's CDC
  // fields, as COLUMNS (...) and TRACK HISTORY ON do in SQL.
  arrow::Int64Builder id, seq;
  arrow::StringBuilder name, city, op;
  const std::vector<std::tuple<int64_t, std::string, std::string, int64_t, std::string>> rows = {
      {1, "a", "x", 1, "u"}, {1, "a", "y", 2, "u"}, {1, "b", "y", 3, "u"}, {2, "c", "x", 1, "u"},
      {2, "c", "x", 2, "d"}, {3, "d", "z", 1, "u"}};
  for (const auto& [i, n, c, q, o] : rows) {
    THUND_ASSERT_OK(id.Append(i));
    THUND_ASSERT_OK(name.Append(n));
    THUND_ASSERT_OK(city.Append(c));
    THUND_ASSERT_OK(seq.Append(q));
    THUND_ASSERT_OK(op.Append(o));
  }
  std::shared_ptr<arrow::Array> a, b, c, d, e;
  THUND_ASSERT_OK(id.Finish(&a));
  THUND_ASSERT_OK(name.Finish(&b));
  THUND_ASSERT_OK(city.Finish(&c));
  THUND_ASSERT_OK(seq.Finish(&d));
  THUND_ASSERT_OK(op.Finish(&e));
  WriteParquet(tmp_.path() / "input" / "changes2" / "c.parquet",
               arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64()),
                                                 arrow::field("name", arrow::utf8()),
                                                 arrow::field("city", arrow::utf8()),
                                                 arrow::field("seq", arrow::int64()),
                                                 arrow::field("op", arrow::utf8())}),
                                  {a, b, c, d, e}));
  const std::string changes = (tmp_.path() / "input" / "changes2").string();
  const fs::path py = tmp_.path() / "cdc2-python";
  WriteText(py / "spark-pipeline.yml", CdcSpec(py));
  WriteText(py / "t" / "c.py",
            "from pyspark import pipelines as dp\n\n"
            "@dp.table\ndef changes():\n    return spark.readStream.format('parquet').load('" +
                changes +
                "')\n\n"
                "for t in ('latest', 'by_name', 'but_city'):\n"
                "    dp.create_streaming_table(t)\n"
                "dp.create_auto_cdc_flow(target='latest', source='changes', keys=['id'],\n"
                "    sequence_by='seq', apply_as_deletes=\"op = 'd'\", column_list=['id', 'name'])\n"
                "dp.create_auto_cdc_flow(target='by_name', source='changes', keys=['id'],\n"
                "    sequence_by='seq', apply_as_deletes=\"op = 'd'\",\n"
                "    column_list=['id', 'name', 'city'], stored_as_scd_type=2,\n"
                "    track_history_column_list=['name'])\n"
                "dp.create_auto_cdc_flow(target='but_city', source='changes', keys=['id'],\n"
                "    sequence_by='seq', apply_as_deletes=\"op = 'd'\", except_column_list=['op'],\n"
                "    stored_as_scd_type='2', track_history_except_column_list=['city'])\n");
  const fs::path sql = tmp_.path() / "cdc2-sql";
  WriteText(sql / "spark-pipeline.yml", CdcSpec(sql));
  WriteText(sql / "t" / "c.sql",
            "CREATE STREAMING TABLE changes AS SELECT * FROM STREAM read_files('" + changes +
                "', format => 'parquet');\n"
                "CREATE STREAMING TABLE latest;\nCREATE STREAMING TABLE by_name;\n"
                "CREATE STREAMING TABLE but_city;\n"
                "CREATE FLOW latest AS AUTO CDC INTO latest FROM STREAM(changes) KEYS (id)\n"
                "APPLY AS DELETE WHEN op = 'd' SEQUENCE BY seq COLUMNS (id, name);\n"
                "CREATE FLOW by_name AS AUTO CDC INTO by_name FROM STREAM(changes) KEYS (id)\n"
                "APPLY AS DELETE WHEN op = 'd' SEQUENCE BY seq COLUMNS (id, name, city)\n"
                "STORED AS SCD TYPE 2 TRACK HISTORY ON (name);\n"
                "CREATE FLOW but_city AS AUTO CDC INTO but_city FROM STREAM(changes) KEYS (id)\n"
                "APPLY AS DELETE WHEN op = 'd' SEQUENCE BY seq COLUMNS * EXCEPT (op)\n"
                "STORED AS SCD TYPE 2 TRACK HISTORY ON * EXCEPT (city);\n");
  for (const char* mode : {"recompute", "incremental"}) {
    ExpectPythonEqualsSql(py, sql, {"latest", "by_name", "but_city"},
                          std::string("--events none --full-refresh-all --streaming-mode ") + mode);
  }
  auto latest = Rows(py.string(), "latest", false);
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->num_columns(), 2);  // id, name
  EXPECT_EQ(latest->num_rows(), 2);     // 1 (b) and 3; 2 was deleted
  // Key 1's city change alone opens no version: 2 versions of 1, one of 2 and 3.
  for (const char* t : {"by_name", "but_city"}) {
    auto h = Rows(py.string(), t, false);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->num_rows(), 4) << t;
  }
}

TEST_F(PythonProjectsTest, UnsupportedConstructsAreRefusedWhereWritten) {
  struct Case {
    std::string code;
    int line;
    std::string message;
  };
  const std::string head = "from pyspark import pipelines as dp\nfrom pyspark.sql import "
                           "functions as F\n\n@dp.materialized_view\ndef m():\n";
  std::vector<Case> cases = {
      {head + "    f = F.udf(lambda x: x)\n    return spark.range(3).select(f('id'))\n", 6,
       "a Python UDF is not supported"},
      {head + "    rows = spark.range(3).collect()\n    return spark.range(len(rows))\n", 6,
       "DataFrame.collect() is not supported"},
      {head + "    return spark.range(3).toPandas()\n", 6, "DataFrame.toPandas() is not supported"},
      {head + "    return spark.conf.get('missing_key')\n", 6, "spark.conf.get('missing_key')"},
      {head + "    return spark.read.table('nowhere')\n", 4,
       "'m' reads 'nowhere', which no file of the pipeline defines"},
      {"from pyspark import pipelines as dp\n\ndef broken(:\n", 3, "Python syntax error"},
      {"from pyspark import pipelines as dp\n\n@dp.materialized_view\n"
       "@dp.expect_or_drop('x', 5)\ndef m():\n    return spark.range(3)\n",
       4, "dp.expect_or_drop with a non-string name or constraint"},
      {"from pyspark import pipelines as dp\n\ndp.create_streaming_table('t')\n"
       "dp.create_auto_cdc_flow(target='t', source='t', keys=['id'], sequence_by='seq',\n"
       "    column_list=['id'], except_column_list=['x'])\n",
       4, "with both column_list and except_column_list"},
      {"from pyspark import pipelines as dp\n\ndp.create_streaming_table('t')\n"
       "@dp.expect('e', 'id > 0')\n@dp.append_flow(target='t')\ndef f():\n"
       "    return spark.range(3)\n",
       5, "expectations on the append flow 'f'"},
  };
  int i = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.code);
    const fs::path dir = tmp_.path() / ("refused-" + std::to_string(i++));
    WriteText(dir / "spark-pipeline.yml",
              "name: r\nstorage: s\nlibraries:\n  - glob:\n      include: t/**\n");
    WriteText(dir / "t" / "m.py", c.code);
    CommandResult r = Thund("check " + ShellQuote(dir.string()) + " --format json");
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(c.message));
    EXPECT_THAT(r.out, HasSubstr("\"line\": " + std::to_string(c.line)));
    EXPECT_THAT(r.out, HasSubstr((dir / "t" / "m.py").string()));
  }
}

TEST_F(PythonProjectsTest, ACycleAcrossPythonAndSqlIsALocatedError) {
  const fs::path dir = tmp_.path() / "cycle";
  WriteText(dir / "spark-pipeline.yml",
            "name: c\nstorage: s\nlibraries:\n  - glob:\n      include: t/**\n");
  WriteText(dir / "t" / "a.py",
            "from pyspark import pipelines as dp\n\n@dp.materialized_view\ndef a():\n"
            "    return spark.read.table('b')\n");
  WriteText(dir / "t" / "b.sql", "CREATE MATERIALIZED VIEW b AS SELECT * FROM a;\n");
  CommandResult r = Thund("check " + ShellQuote(dir.string()) + " --format json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("'a' reads 'b', which reads it back: a -> b -> a (a cycle)"));
  EXPECT_THAT(r.out, HasSubstr((dir / "t" / "a.py").string()));
  EXPECT_THAT(r.out, HasSubstr("\"line\": 3"));
}

}  // namespace
}  // namespace thund
