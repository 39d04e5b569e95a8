// LowerToSpark without a server: what is refused per Spark version, what is
// reported per knob, and what the lowered SQL says. Runs against real Spark
// are in spark_backend_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "backend/spark/spark_backend.h"
#include "backend/spark/spark_lowering.h"
#include "thund/sql_pipeline.h"
#include "thund/validate.h"

namespace thund::spark {
namespace {

using ::testing::HasSubstr;

Pipeline Sql(const std::string& text) {
  ParseResult r = ParseSql(text, "p.sql");
  EXPECT_TRUE(r.ok()) << (r.diagnostics.empty() ? "" : r.diagnostics[0].ToString());
  Diagnostics v = Validate(r.pipeline);
  EXPECT_FALSE(HasErrors(v)) << (v.empty() ? "" : v[0].ToString());
  return r.pipeline;
}

std::vector<std::string> Errors(const SparkLowering& l) {
  std::vector<std::string> out;
  for (const auto& d : l.diagnostics) {
    if (d.severity == Severity::kError) out.push_back(d.message);
  }
  return out;
}

const SparkReportItem* Item(const SparkLowering& l, const std::string& knob) {
  for (const auto& r : l.project.report) {
    if (r.knob == knob) return &r;
  }
  return nullptr;
}

std::string AllSql(const SparkLowering& l) {
  std::string out;
  for (const auto& [path, text] : l.project.sql_files) out += text;
  return out;
}

const char* kBase =
    "CREATE MATERIALIZED VIEW src AS SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(id, v);\n";

TEST(SparkLowering, KeepsSqlSurfaceBodiesAsWritten) {
  const std::string body =
      "SELECT v, count(*) AS n, max(id) FILTER (WHERE id > 1) AS m\n"
      "FROM src\nWHERE v <> 'z'  -- a comment\nGROUP BY v";
  Pipeline p = Sql(std::string(kBase) + "CREATE MATERIALIZED VIEW agg COMMENT 'per v' AS\n" +
                   body + ";\nCREATE TEMPORARY VIEW tv AS SELECT id FROM agg JOIN src USING (v);\n");
  SparkLowering l = LowerToSpark(p);
  ASSERT_TRUE(Errors(l).empty()) << Errors(l)[0];
  const std::string sql = AllSql(l);
  EXPECT_THAT(sql, HasSubstr("CREATE MATERIALIZED VIEW agg COMMENT 'per v' AS\n" + body + ";"));
  EXPECT_THAT(sql, HasSubstr("CREATE TEMPORARY VIEW tv AS\nSELECT id FROM agg JOIN src USING (v);"));
  EXPECT_EQ(l.project.sql_files.count("transformations/p.sql"), 1u);
  EXPECT_TRUE(l.project.report.empty());
  EXPECT_EQ(l.project.stored_datasets, (std::vector<std::string>{"src", "agg"}));
}

TEST(SparkLowering, RendersBuilderPipelinesAsSparkSql) {
  Pipeline p("built");
  p.database = "sales";
  p.WithConfiguration("spark.sql.shuffle.partitions", "2");
  p.Add(Dataset::StreamingTable("events")
            .WithSchema(arrow::schema({arrow::field("id", arrow::int64(), false),
                                       arrow::field("kind", arrow::utf8())}))
            .WithComment("raw events")
            .WithProperty("owner", "ops"));
  p.Add(Flow::FromSource("events", "events",
                         FileSource{"/data/in", FileFormat::kCsv, true, {{"delimiter", ";"}}}));
  p.AddQuery(Dataset::MaterializedView("kinds"),
             "SELECT kind, count(*) AS n FROM events GROUP BY kind");
  SparkLowering l = LowerToSpark(p);
  ASSERT_TRUE(Errors(l).empty()) << Errors(l)[0];
  const std::string sql = AllSql(l);
  EXPECT_THAT(sql, HasSubstr("CREATE STREAMING TABLE events (id bigint NOT NULL, kind string) "
                             "COMMENT 'raw events' TBLPROPERTIES ('owner' = 'ops') AS\n"
                             "SELECT * FROM STREAM(events__files);"));
  EXPECT_THAT(sql, HasSubstr("CREATE MATERIALIZED VIEW kinds AS\nSELECT kind, count(*)"));
  // The file drop is a streaming temporary view read by Spark's file source.
  ASSERT_EQ(l.project.flows.size(), 1u);
  const FlowDefinition& read = l.project.flows[0];
  ASSERT_TRUE(read.read.has_value());
  EXPECT_TRUE(read.read->streaming);
  EXPECT_EQ(read.read->format, "csv");
  EXPECT_EQ(read.read->options.at("sep"), ";");
  EXPECT_EQ(read.read->options.at("header"), "true");
  EXPECT_EQ(read.read->schema, "id bigint NOT NULL, kind string");
  // The project: spec with the schema and configuration, and the Python file.
  auto files = ProjectFiles(l.project);
  EXPECT_THAT(files.at("spark-pipeline.yml"), HasSubstr("database: \"sales\""));
  EXPECT_THAT(files.at("spark-pipeline.yml"),
              HasSubstr("\"spark.sql.shuffle.partitions\": \"2\""));
  EXPECT_THAT(files.at("transformations/thund_definitions.py"),
              HasSubstr("spark.readStream.format(\"csv\")"));
  const SparkReportItem* schema = Item(l, "schema");
  ASSERT_NE(schema, nullptr);
  EXPECT_FALSE(schema->native_runs_it);
}

TEST(SparkLowering, ReportsEveryIgnoredKnob) {
  Pipeline p = Sql(
      "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('/in', format => "
      "'parquet');\n"
      "CREATE STREAMING TABLE t WITH (trigger = '10s', mode = 'incremental', watermark = 'ts', "
      "allowed_lateness = '5s', idle_timeout = '1m', state_ttl = '1h') AS\n"
      "SELECT id, ts FROM STREAM(raw);\n"
      "CREATE MATERIALIZED VIEW m WITH (materialization = 'incremental') AS SELECT count(*) AS "
      "n FROM raw;\n"
      "CREATE MATERIALIZED VIEW e (CONSTRAINT w EXPECT (n > 0)) AS SELECT n FROM m;\n");
  SparkLowering l = LowerToSpark(p);
  ASSERT_TRUE(Errors(l).empty()) << Errors(l)[0];
  for (const char* knob : {"trigger", "mode", "watermark", "idle_timeout", "state_ttl",
                           "materialization", "expectation"}) {
    const SparkReportItem* it = Item(l, knob);
    ASSERT_NE(it, nullptr) << knob;
    EXPECT_TRUE(it->native_runs_it) << knob;
    EXPECT_FALSE(it->spark.empty()) << knob;
  }
  EXPECT_EQ(Item(l, "trigger")->value, "processing_time(10s)");
  EXPECT_EQ(Item(l, "trigger")->flow, "t");
  // The warn expectation is not lowered into the query.
  EXPECT_THAT(AllSql(l), HasSubstr("CREATE MATERIALIZED VIEW e AS\nSELECT n FROM m;"));
  // Text and JSON forms carry every item.
  const std::string text = ReportText(l.project.report);
  EXPECT_THAT(text, HasSubstr("flow 't': trigger processing_time(10s): "));
  const std::string json = ReportJson(l.project.report, l.diagnostics);
  EXPECT_THAT(json, HasSubstr("\"knob\": \"state_ttl\""));
}

TEST(SparkLowering, ReportsDatasetKnobsSparkDoesNotKeep) {
  Pipeline p("knobs");
  StorageSpec csv;
  csv.format = FileFormat::kCsv;
  csv.location = "/data/lookup";
  p.AddQuery(Dataset::Table("lookup").WithStorage(csv), "SELECT 1 AS code, 'a' AS label");
  p.Add(Flow::FromSource(
      "files", "files",
      FileSource{"/data/in", FileFormat::kParquet, false, {{"max_files_per_trigger", "2"}}}));
  p.Add(Dataset::MaterializedView("files"));
  SparkLowering l = LowerToSpark(p);
  ASSERT_TRUE(Errors(l).empty()) << Errors(l)[0];
  for (const char* knob : {"kind", "location", "format", "source option"}) {
    EXPECT_NE(Item(l, knob), nullptr) << knob;
  }
  EXPECT_EQ(Item(l, "kind")->dataset, "lookup");
  EXPECT_EQ(Item(l, "source option")->value, "max_files_per_trigger = 2");
  // A batch file source reads through a batch temporary view.
  EXPECT_THAT(AllSql(l), HasSubstr("CREATE MATERIALIZED VIEW files AS\nSELECT * FROM "
                                   "files__files;"));
  ASSERT_EQ(l.project.flows.size(), 1u);
  EXPECT_FALSE(l.project.flows[0].read->streaming);
}

TEST(SparkLowering, WatermarkAndWindowInTheQueryAreSparksOwn) {
  Pipeline p = Sql(
      "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('/in', format => "
      "'parquet');\n"
      "CREATE STREAMING TABLE w AS SELECT window.start AS ws, count(*) AS n\n"
      "FROM STREAM(raw) WATERMARK ts DELAY OF INTERVAL 10 SECONDS\n"
      "GROUP BY window(ts, '1 minute');\n");
  SparkLowering l = LowerToSpark(p);
  ASSERT_TRUE(Errors(l).empty()) << Errors(l)[0];
  EXPECT_EQ(Item(l, "watermark"), nullptr);
  EXPECT_THAT(AllSql(l), HasSubstr("WATERMARK ts DELAY OF INTERVAL 10 SECONDS"));
}

TEST(SparkLowering, RefusesWhatSparkWouldRunDifferently) {
  struct Case {
    std::string sql;
    std::string expect;
  };
  const std::string raw =
      "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('/in', format => "
      "'parquet');\n";
  std::vector<Case> cases = {
      {raw + "CREATE STREAMING TABLE u WITH (output_mode = 'update') AS SELECT k, count(*) AS n "
             "FROM STREAM(raw) GROUP BY k;",
       "needs 'output:update'"},
      {raw + "CREATE STREAMING TABLE c WITH (output_mode = 'complete') AS SELECT k, count(*) AS "
             "n FROM STREAM(raw) GROUP BY k;",
       "needs 'output:complete'"},
      {raw + "CREATE STREAMING TABLE k WITH (keyed_write.keys = (id)) AS SELECT * FROM "
             "STREAM(raw);",
       "needs 'keyed-write'"},
      {raw + "CREATE STREAMING TABLE late;\n"
             "CREATE STREAMING TABLE l WITH (watermark = 'ts', mode = 'incremental', late_rows = "
             "'late') AS SELECT * FROM STREAM(raw);",
       "late rows go to 'late'"},
      {"CREATE STREAMING TABLE g AS SELECT * FROM STREAM read_generator(kind => "
       "'keyed_events', total_rows => 10);",
       "needs 'source:generator'"},
      {raw + "CREATE STREAMING TABLE w WITH (watermark = 'ts', window = 'tumbling', "
             "window_column = 'ts', window_size = '1m') AS SELECT count(*) AS n FROM "
             "STREAM(raw);",
       "is given as an option, not in the query"},
      {raw + "CREATE STREAMING TABLE t AS SELECT window_start, count(*) AS n FROM "
             "TUMBLE(TABLE STREAM raw, DESCRIPTOR(ts), INTERVAL '1' MINUTE) GROUP BY "
             "window_start;",
       "window table functions (TUMBLE, HOP, SESSION) are thund's"},
      {"CREATE MATERIALIZED VIEW j AS SELECT a.* FROM read_files('/x', format => 'csv') a "
       "JOIN read_files('/y', format => 'csv') b USING (id);",
       "Spark has no table function 'read_files'"},
      {"CREATE MATERIALIZED VIEW d AS SELECT strftime(now(), '%Y') AS y, list_value(1, 2) AS l;",
       "Spark has no function 'strftime'"},
      {raw + "CREATE STREAMING TABLE s;\n"
             "CREATE FLOW s1 AS INSERT INTO s BY NAME SELECT * FROM STREAM(raw);\n"
             "CREATE FLOW s2 AS INSERT INTO ONCE s BY NAME SELECT * FROM raw;",
       "needs 'once'"},
      {"CREATE MATERIALIZED VIEW src AS SELECT 1 AS id;\n"
       "CREATE SINK out USING parquet LOCATION '/tmp/out';\n"
       "CREATE FLOW o AS INSERT INTO out BY NAME SELECT * FROM src;",
       "is a batch flow; Spark sinks take streaming flows only"},
      {raw + "CREATE SINK out USING parquet LOCATION '/tmp/out' WITH (write_mode = "
             "'overwrite');\nCREATE FLOW o AS INSERT INTO out BY NAME SELECT * FROM "
             "STREAM(raw);",
       "writes in overwrite mode; Spark sinks append"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.sql);
    ParseResult r = ParseSql(c.sql, "p.sql");
    ASSERT_TRUE(r.ok()) << r.diagnostics[0].ToString();
    SparkLowering l = LowerToSpark(r.pipeline);
    std::vector<std::string> errors = Errors(l);
    ASSERT_FALSE(errors.empty());
    EXPECT_TRUE(std::any_of(errors.begin(), errors.end(),
                            [&](const std::string& e) { return e.find(c.expect) != e.npos; }))
        << errors[0];
    for (const auto& d : l.diagnostics) {
      EXPECT_EQ(d.code, "spark-unsupported");
      EXPECT_FALSE(d.hint.empty()) << d.message;
    }
  }
}

TEST(SparkLowering, CdcReasonDependsOnTheVersion) {
  Pipeline p = Sql(
      "CREATE STREAMING TABLE changes AS SELECT * FROM STREAM read_files('/in', format => "
      "'parquet');\n"
      "CREATE STREAMING TABLE users;\n"
      "CREATE FLOW apply AS AUTO CDC INTO users FROM STREAM(changes) KEYS (id) SEQUENCE BY seq "
      "STORED AS SCD TYPE 1;\n");
  SparkLowering v41 = LowerToSpark(p, {SparkVersion::k4_1, ""});
  SparkLowering v43 = LowerToSpark(p, {SparkVersion::k4_3, ""});
  ASSERT_EQ(Errors(v41).size(), 1u);
  ASSERT_EQ(Errors(v43).size(), 1u);
  EXPECT_THAT(Errors(v41)[0], HasSubstr("Spark 4.1 has no AUTO CDC"));
  EXPECT_THAT(Errors(v43)[0], HasSubstr("does not support row-level operations"));
  EXPECT_EQ(v43.diagnostics[0].flow, "apply");
  EXPECT_EQ(v43.diagnostics[0].location.line, 3);
  // Capabilities name the same thing for every version.
  for (SparkVersion v : {SparkVersion::k4_1, SparkVersion::k4_2, SparkVersion::k4_3}) {
    EXPECT_FALSE(SparkCapabilities(v).Supports("cdc:scd1"));
    EXPECT_TRUE(SparkCapabilities(v).Supports("sink:parquet"));
    EXPECT_FALSE(SparkCapabilityReason(v, "cdc:scd2").empty());
  }
}

TEST(SparkLowering, FlowsIntoOneTableBecomeOneUnionByName) {
  Pipeline p = Sql(
      "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('/in', format => "
      "'parquet');\n"
      "CREATE STREAMING TABLE both;\n"
      "CREATE FLOW f1 AS INSERT INTO both BY NAME SELECT id, 'x' AS src FROM STREAM(raw);\n"
      "CREATE FLOW f2 AS INSERT INTO both BY NAME SELECT 'y' AS src, id * 10 AS id, 1 AS extra "
      "FROM STREAM(raw);\n");
  SparkLowering l = LowerToSpark(p);
  ASSERT_TRUE(Errors(l).empty()) << Errors(l)[0];
  const std::string sql = AllSql(l);
  EXPECT_THAT(sql, HasSubstr("SELECT id, src, NULL AS extra FROM (\nSELECT id, 'x' AS src FROM "
                             "STREAM(raw)\n) AS __thund_f0\nUNION ALL\nSELECT id, src, extra "
                             "FROM (\nSELECT 'y' AS src, id * 10 AS id, 1 AS extra FROM "
                             "STREAM(raw)\n) AS __thund_f1;"));
  const SparkReportItem* flows = Item(l, "flows");
  ASSERT_NE(flows, nullptr);
  EXPECT_EQ(flows->value, "f1, f2");
}

TEST(SparkLowering, ExpectationsDropAndFailBecomeFilters) {
  Pipeline p = Sql(std::string(kBase) +
                   "CREATE MATERIALIZED VIEW q (CONSTRAINT pos EXPECT (id > 0) ON VIOLATION DROP "
                   "ROW, CONSTRAINT named EXPECT (v IS NOT NULL) ON VIOLATION FAIL UPDATE) AS "
                   "SELECT * FROM src;\n");
  SparkLowering l = LowerToSpark(p);
  ASSERT_TRUE(Errors(l).empty()) << Errors(l)[0];
  EXPECT_THAT(AllSql(l),
              HasSubstr("SELECT * FROM (\nSELECT * FROM src\n) AS __thund_q WHERE (id > 0) AND "
                        "assert_true(coalesce((v IS NOT NULL), false), 'expectation \\'named\\' "
                        "failed: v IS NOT NULL') IS NULL;"));
}

TEST(SparkEvents, ParsesSparksFlowMessages) {
  auto a = ParseSparkFlowEvent("Flow spark_catalog.default.agg has COMPLETED.");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->flow, "agg");
  EXPECT_EQ(a->state, "COMPLETED");
  auto b = ParseSparkFlowEvent(
      "Flow 'spark_catalog.default.bad' has FAILED.\nError: [DIVIDE_BY_ZERO] Division by zero.");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->flow, "bad");
  EXPECT_EQ(b->state, "FAILED");
  auto c = ParseSparkFlowEvent("Flow sink_flow is RUNNING.");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->flow, "sink_flow");
  auto d = ParseSparkFlowEvent(
      "Failed to resolve flow: 'spark_catalog.w1.per_min'.\nError: [EVENT_TIME_IS_NOT_ON_...");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->flow, "per_min");
  EXPECT_EQ(d->state, "FAILED");
  auto e = ParseSparkFlowEvent("Flow 'spark_catalog.default.s' SKIPPED due to upstream failure(s).");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, "SKIPPED");
  EXPECT_FALSE(ParseSparkFlowEvent("Run is COMPLETED."));
}

TEST(SparkRemoteUrl, ParsesSparkConnectUrls) {
  auto r = ParseSparkRemote("sc://spark.example:15010/;user_id=me");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->host, "spark.example");
  EXPECT_EQ(r->port, 15010);
  auto d = ParseSparkRemote("sc://localhost");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port, 15002);
  EXPECT_FALSE(ParseSparkRemote("http://localhost:15002").ok());
  EXPECT_FALSE(ParseSparkRemote("sc://host:notaport").ok());
  EXPECT_FALSE(ParseSparkRemote("sc://:15002").ok());
}

TEST(SparkVersions, ParseAndName) {
  EXPECT_EQ(ParseSparkVersion("4.3"), SparkVersion::k4_3);
  EXPECT_EQ(ParseSparkVersion("4.3.0"), SparkVersion::k4_3);
  EXPECT_EQ(ParseSparkVersion("4.1"), SparkVersion::k4_1);
  EXPECT_FALSE(ParseSparkVersion("4.30"));
  EXPECT_FALSE(ParseSparkVersion("3.5"));
}

}  // namespace
}  // namespace thund::spark
