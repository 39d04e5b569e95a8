// ParseSql: what each statement form lowers to, and how errors are reported.
#include <string>

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>

#include "sql/parse_helpers.h"
#include "thund/sql_pipeline.h"

namespace thund {
namespace {

using testing::OnlyError;
using testing::Parse;
using testing::Render;

TEST(ParseSql, MaterializedViewDeclaresDatasetAndFlowWithVerbatimQuery) {
  const std::string query = "SELECT a,\n       sum(b) AS total  -- per a\nFROM src GROUP BY a";
  Pipeline p = Parse("CREATE MATERIALIZED VIEW totals AS " + query +
                     ";\nCREATE MATERIALIZED VIEW src AS SELECT 1 AS a, 2 AS b");
  ASSERT_EQ(p.datasets.size(), 2u);
  ASSERT_EQ(p.flows.size(), 2u);
  EXPECT_EQ(p.datasets[0], Dataset::MaterializedView("totals"));
  EXPECT_EQ(p.flows[0], Flow("totals", "totals", query));
  EXPECT_EQ(p.flows[1].sql, "SELECT 1 AS a, 2 AS b");
  EXPECT_EQ(p.datasets[0].location, (SourceLocation{"test.sql", 1, 26}));
  EXPECT_EQ(p.flows[0].location, (SourceLocation{"test.sql", 1, 26}));
}

TEST(ParseSql, ColumnListCommentsAndExpectations) {
  Pipeline p = Parse(R"(CREATE STREAMING TABLE events (
  id BIGINT NOT NULL COMMENT 'event id',
  tags ARRAY<STRING>,
  info STRUCT<kind: STRING, n: INT>,
  CONSTRAINT has_id EXPECT (id IS NOT NULL) ON VIOLATION FAIL UPDATE,
  CONSTRAINT small EXPECT (n < 10) ON VIOLATION DROP ROW,
  CONSTRAINT warn_only EXPECT (size(tags) > 0)
) COMMENT 'all events' PARTITIONED BY (id) TBLPROPERTIES ('quality' = 'silver', delta.x = true))");
  ASSERT_EQ(p.datasets.size(), 1u);
  const Dataset& d = p.datasets[0];
  EXPECT_EQ(d.kind, DatasetKind::kStreamingTable);
  auto schema = arrow::schema({
      arrow::field("id", arrow::int64(), false,
                   arrow::key_value_metadata({"comment"}, {"event id"})),
      arrow::field("tags", arrow::list(arrow::utf8())),
      arrow::field("info", arrow::struct_({arrow::field("kind", arrow::utf8()),
                                           arrow::field("n", arrow::int32())})),
  });
  EXPECT_TRUE(d.schema == Schema{schema}) << d.schema.ToString();
  ASSERT_EQ(d.expectations.size(), 3u);
  EXPECT_EQ(d.expectations[0].name, "has_id");
  EXPECT_EQ(d.expectations[0].predicate, "id IS NOT NULL");
  EXPECT_EQ(d.expectations[0].action, ExpectationAction::kFail);
  EXPECT_EQ(d.expectations[1].action, ExpectationAction::kDrop);
  EXPECT_EQ(d.expectations[2].action, ExpectationAction::kWarn);
  EXPECT_EQ(d.expectations[2].predicate, "size(tags) > 0");
  EXPECT_EQ(d.expectations[0].location.line, 5);
  EXPECT_EQ(d.comment, "all events");
  EXPECT_EQ(d.storage.partition_by, (std::vector<std::string>{"id"}));
  EXPECT_EQ(d.properties, (StringMap{{"quality", "silver"}, {"delta.x", "true"}}));
  EXPECT_TRUE(p.flows.empty());  // a streaming table without AS has no flow
}

TEST(ParseSql, ViewsAndTables) {
  Pipeline p = Parse(
      "CREATE VIEW v AS SELECT 1 AS a; CREATE TEMPORARY VIEW tv AS SELECT a FROM v;"
      "CREATE TABLE t AS SELECT a FROM tv; CREATE SINK s USING json LOCATION 'out/'");
  ASSERT_EQ(p.datasets.size(), 4u);
  EXPECT_EQ(p.datasets[0].kind, DatasetKind::kView);
  EXPECT_EQ(p.datasets[1].kind, DatasetKind::kTemporaryView);
  EXPECT_EQ(p.datasets[2].kind, DatasetKind::kTable);
  EXPECT_EQ(p.datasets[3].kind, DatasetKind::kSink);
  EXPECT_EQ(p.datasets[3].storage.format, FileFormat::kJson);
  EXPECT_EQ(p.datasets[3].storage.location, "out/");
  EXPECT_EQ(p.flows.size(), 3u);
}

TEST(ParseSql, FlowsInsertByNameAndOnce) {
  Pipeline p = Parse(
      "CREATE STREAMING TABLE t;\n"
      "CREATE FLOW live COMMENT 'the feed' AS INSERT INTO t BY NAME SELECT * FROM STREAM(src);\n"
      "CREATE FLOW backfill AS INSERT INTO ONCE TABLE t BY NAME SELECT * FROM old;");
  ASSERT_EQ(p.flows.size(), 2u);
  EXPECT_EQ(p.flows[0].name, "live");
  EXPECT_EQ(p.flows[0].target, "t");
  EXPECT_EQ(p.flows[0].comment, "the feed");
  EXPECT_EQ(p.flows[0].sql, "SELECT * FROM STREAM(src)");
  EXPECT_FALSE(p.flows[0].once);
  EXPECT_FALSE(p.flows[0].streaming);  // a STREAM read alone implies no knobs
  EXPECT_TRUE(p.flows[1].once);
  EXPECT_EQ(p.flows[1].location, (SourceLocation{"test.sql", 3, 13}));
}

TEST(ParseSql, SdpRefusalsNameTheConstruct) {
  struct Case {
    std::string sql;
    std::string message;
    int column;
  };
  const Case cases[] = {
      {"CREATE FLOW f AS INSERT INTO t SELECT 1", "CREATE FLOW needs INSERT INTO ... BY NAME", 32},
      {"CREATE FLOW f AS INSERT OVERWRITE t BY NAME SELECT 1",
       "CREATE FLOW cannot INSERT OVERWRITE", 25},
      {"CREATE FLOW f AS INSERT INTO t (a) SELECT 1", "CREATE FLOW cannot list target columns", 32},
      {"CREATE FLOW f AS INSERT INTO t IF NOT EXISTS SELECT 1",
       "CREATE FLOW does not take IF NOT EXISTS", 32},
      {"CREATE FLOW IF NOT EXISTS f AS INSERT INTO t BY NAME SELECT 1",
       "CREATE FLOW does not take IF NOT EXISTS", 13},
      {"CREATE FLOW a.b AS INSERT INTO t BY NAME SELECT 1", "a flow name is a single identifier",
       13},
      {"SET x", "SET needs a value", 1},
  };
  for (const auto& c : cases) {
    Diagnostic d = OnlyError(c.sql);
    EXPECT_EQ(d.message.rfind(c.message, 0), 0u) << c.sql << " -> " << d.message;
    EXPECT_EQ(d.location.line, 1) << c.sql;
    EXPECT_EQ(d.location.column, c.column) << c.sql;
    EXPECT_EQ(d.code, "sdp-refused") << c.sql;
  }
}

TEST(ParseSql, ErrorsCarryACaretExcerpt) {
  const std::string sql = "CREATE STREAMING TABLE t;\nCREATE FLOW f AS INSERT INTO t SELECT 1;\n";
  ParseResult r = ParseSql(sql, "flows.sql");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(
      RenderDiagnostic(r.diagnostics[0], sql),
      "flows.sql:2:32: error: CREATE FLOW needs INSERT INTO ... BY NAME\n"
      " 2 | CREATE FLOW f AS INSERT INTO t SELECT 1;\n"
      "   |                                ^\n"
      "   = hint: SDP matches the query's columns to the target's by name: write INSERT INTO t BY "
      "NAME SELECT ...\n");
}

TEST(ParseSql, AnErrorInOneStatementDoesNotHideTheOthers) {
  const std::string sql =
      "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;\n"
      "CREATE MATERIALIZED VIEW b (x money) AS SELECT 1 AS x;\n"
      "CREATE MATERIALIZED VIEW c AS SELECT 2 AS x;\n"
      "CREATE FLOW d AS INSERT INTO c SELECT 3;\n"
      "CREATE MATERIALIZED VIEW e AS SELECT 4 AS x";
  ParseResult r = ParseSql(sql, "t.sql");
  ASSERT_EQ(r.diagnostics.size(), 2u) << Render(r.diagnostics, sql);
  EXPECT_EQ(r.diagnostics[0].location.line, 2);
  EXPECT_EQ(r.diagnostics[1].location.line, 4);
  ASSERT_EQ(r.pipeline.datasets.size(), 3u);  // a, c, e
  EXPECT_EQ(r.pipeline.datasets[2].name, "e");
}

TEST(ParseSql, SetAndUse) {
  Pipeline p = Parse(
      "USE CATALOG main; USE SCHEMA sales; SET spark.sql.shuffle.partitions = 4;"
      "SET `odd key` = 'a value; with semicolon';"
      "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;"
      "USE SCHEMA staging; CREATE MATERIALIZED VIEW b AS SELECT 1 AS x;"
      "USE other.raw; CREATE FLOW f AS INSERT INTO c BY NAME SELECT 1 AS x;"
      "CREATE MATERIALIZED VIEW fully.qualified.d AS SELECT 1 AS x;");
  EXPECT_EQ(p.catalog, "main");
  EXPECT_EQ(p.database, "sales");
  EXPECT_EQ(p.configuration, (StringMap{{"spark.sql.shuffle.partitions", "4"},
                                        {"odd key", "a value; with semicolon"}}));
  ASSERT_EQ(p.datasets.size(), 3u);
  EXPECT_EQ(p.datasets[0].name, "a");
  EXPECT_EQ(p.datasets[1].name, "staging.b");
  EXPECT_EQ(p.datasets[2].name, "fully.qualified.d");
  ASSERT_EQ(p.flows.size(), 4u);
  EXPECT_EQ(p.flows[2].name, "f");  // flow names are never qualified
  EXPECT_EQ(p.flows[2].target, "other.raw.c");
}

TEST(ParseSql, SetChangingAValueWarns) {
  ParseResult r =
      ParseSql("SET a = 1; CREATE MATERIALIZED VIEW v AS SELECT 1 AS x; SET a = 2", "t.sql");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].severity, Severity::kWarning);
  EXPECT_EQ(r.pipeline.configuration.at("a"), "2");
}

TEST(ParseSql, WatermarkAndWindowsBecomeTheStreamingSpec) {
  Pipeline p = Parse(
      "CREATE STREAMING TABLE a AS SELECT window.start, count(*) AS n FROM STREAM e "
      "WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY window(e.ts, '1 minute');"
      "CREATE STREAMING TABLE b AS SELECT count(*) AS n FROM STREAM e "
      "GROUP BY window(ts, '10 minutes', '1 minute');"
      "CREATE STREAMING TABLE c AS SELECT k, count(*) AS n FROM STREAM(e) GROUP BY k, "
      "session_window(ts, INTERVAL 5 MINUTES);"
      "CREATE MATERIALIZED VIEW d AS SELECT count(*) AS n FROM e GROUP BY window(ts, '1 hour');"
      "CREATE STREAMING TABLE f AS SELECT * FROM TUMBLE(TABLE STREAM e, DESCRIPTOR(ts), INTERVAL "
      "'2' MINUTES);"
      "CREATE STREAMING TABLE g AS SELECT * FROM STREAM e WATERMARK to_timestamp(s) AS event_time "
      "DELAY OF INTERVAL 1 MINUTE 30 SECONDS");
  ASSERT_EQ(p.flows.size(), 6u);
  StreamingSpec a;
  a.watermark = Watermark{"ts", 10000, std::nullopt};
  a.window = WindowSpec::Tumbling("ts", 60000);
  EXPECT_EQ(p.flows[0].streaming, a);
  StreamingSpec b;
  b.window = WindowSpec::Hopping("ts", 600000, 60000);
  EXPECT_EQ(p.flows[1].streaming, b);
  StreamingSpec c;
  c.window = WindowSpec::Session("ts", 300000);
  EXPECT_EQ(p.flows[2].streaming, c);
  EXPECT_FALSE(p.flows[3].streaming);  // window() in a batch query is only bucketing
  StreamingSpec f;
  f.window = WindowSpec::Tumbling("ts", 120000);
  EXPECT_EQ(p.flows[4].streaming, f);
  StreamingSpec g;
  g.watermark = Watermark{"event_time", 90000, std::nullopt};
  EXPECT_EQ(p.flows[5].streaming, g);
}

TEST(ParseSql, WithOptionsOverrideWhatTheQueryImplies) {
  Pipeline p = Parse(
      "CREATE STREAMING TABLE a WITH (trigger = '10s', output_mode = 'update', mode = "
      "'incremental', "
      "allowed_lateness = '1m', idle_timeout = '5m', window = 'hopping', window_slide = '30s') "
      "AS SELECT count(*) AS n FROM STREAM e WATERMARK ts DELAY OF INTERVAL 10 SECONDS "
      "GROUP BY window(ts, '1 minute');"
      "CREATE STREAMING TABLE b WITH (streaming = false) AS SELECT count(*) AS n FROM STREAM e "
      "WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY window(ts, '1 minute');"
      "CREATE STREAMING TABLE c WITH (watermark = 'event_time', window = 'session', "
      "window_column = 'event_time', window_gap = '2m', trigger = 'once') AS SELECT * FROM STREAM "
      "e;"
      "CREATE STREAMING TABLE d WITH (streaming = true) AS SELECT * FROM STREAM e;"
      "CREATE STREAMING TABLE e AS SELECT * FROM STREAM read_memory('e');");
  StreamingSpec a;
  a.trigger = Trigger::ProcessingTime(10000);
  a.output_mode = OutputMode::kUpdate;
  a.mode = StreamingMode::kIncremental;
  a.watermark = Watermark{"ts", 60000, 300000};
  a.window = WindowSpec::Hopping("ts", 60000, 30000);
  EXPECT_EQ(p.flows[0].streaming, a);
  EXPECT_FALSE(p.flows[1].streaming);
  StreamingSpec c;
  c.trigger = Trigger::Once();
  c.watermark = Watermark{"event_time", 0, std::nullopt};
  c.window = WindowSpec::Session("event_time", 120000);
  EXPECT_EQ(p.flows[2].streaming, c);
  EXPECT_EQ(p.flows[3].streaming, StreamingSpec{});
  EXPECT_FALSE(p.flows[4].streaming);
}

TEST(ParseSql, OptionErrors) {
  EXPECT_EQ(OnlyError("CREATE STREAMING TABLE t WITH (output_mod = 'update') AS SELECT 1").hint,
            "did you mean 'output_mode'?");
  EXPECT_EQ(OnlyError("CREATE STREAMING TABLE t WITH (trigger = 'sometimes') AS SELECT 1").code,
            "sql-option");
  EXPECT_EQ(
      OnlyError("CREATE STREAMING TABLE t WITH (allowed_lateness = '1s') AS SELECT 1").message,
      "option 'allowed_lateness' needs a watermark");
  EXPECT_EQ(
      OnlyError("CREATE STREAMING TABLE t WITH (streaming = false, trigger = '1s') AS SELECT 1")
          .message,
      "streaming = false cannot be combined with 'trigger'");
  EXPECT_EQ(
      OnlyError("CREATE STREAMING TABLE t WITH (mode = 'fast', mode = 'slow') AS SELECT 1").message,
      "option 'mode' is given twice");
}

TEST(ParseSql, DatasetOptionsAndStorage) {
  Pipeline p = Parse(
      "CREATE MATERIALIZED VIEW m USING csv OPTIONS ('header' = 'true', sep = ';') LOCATION "
      "'/out/m' "
      "WITH (materialization = 'incremental', write_mode = 'overwrite', keyed_write.keys = (id, "
      "`odd key`), "
      "keyed_write.buckets = 8, keyed_write.threads = 2, keyed_write.batch_size = 1000, "
      "keyed_write.duplicates = 'all') AS SELECT 1 AS id");
  const Dataset& d = p.datasets[0];
  EXPECT_EQ(d.materialization, Materialization::kIncremental);
  EXPECT_EQ(d.storage.format, FileFormat::kCsv);
  EXPECT_EQ(d.storage.location, "/out/m");
  EXPECT_EQ(d.storage.mode, WriteMode::kOverwrite);
  EXPECT_EQ(d.storage.options, (StringMap{{"header", "true"}, {"sep", ";"}}));
  KeyedWrite k;
  k.keys = {"id", "odd key"};
  k.tuning.buckets = 8;
  k.tuning.threads = 2;
  k.tuning.batch_size = 1000;
  k.duplicates = DuplicateKeys::kAll;
  EXPECT_EQ(d.keyed_write, k);
}

TEST(ParseSql, MergeSinkWithKeysAndItsPrintedForm) {
  const std::string sql =
      "CREATE SINK totals USING parquet LOCATION 'out/totals' "
      "WITH (write_mode = 'merge', merge_keys = (region, `customer id`));\n"
      "CREATE SINK one WITH (write_mode = 'merge', merge_keys = 'id');";
  Pipeline p = Parse(sql);
  ASSERT_EQ(p.datasets.size(), 2u);
  const Dataset& d = p.datasets[0];
  EXPECT_EQ(d.kind, DatasetKind::kSink);
  EXPECT_EQ(d.storage.format, FileFormat::kParquet);
  EXPECT_EQ(d.storage.location, "out/totals");
  EXPECT_EQ(d.storage.mode, WriteMode::kMerge);
  EXPECT_EQ(d.storage.merge_keys, (std::vector<std::string>{"region", "customer id"}));
  EXPECT_EQ(p.datasets[1].storage.merge_keys, (std::vector<std::string>{"id"}));
  const std::string printed = FormatSql(p);
  EXPECT_NE(printed.find("WITH (write_mode = 'merge', merge_keys = (region, `customer id`))"),
            std::string::npos)
      << printed;
  EXPECT_TRUE(Parse(printed) == p) << printed;
  EXPECT_EQ(OnlyError("CREATE SINK s WITH (merge_keys = ('k' = 'v'));").message,
            "option 'merge_keys' takes a single value");
}

TEST(ParseSql, SourcesAreWholeQueryTableFunctions) {
  Pipeline p = Parse(
      "CREATE STREAMING TABLE a AS SELECT * FROM STREAM read_files('in/*.csv', format => 'csv', "
      "header => true, `odd.key` => 'x');"
      "CREATE TABLE b AS SOURCE read_files('in/*.parquet', format => 'parquet');"
      "CREATE MATERIALIZED VIEW c AS SELECT * FROM read_files('in/*.json', format => 'json');"
      "CREATE STREAMING TABLE d AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid', seed "
      "=> 9, "
      "rows_per_batch => 10, total_rows => 100, events_per_second => 5, out_of_orderness => '3s', "
      "skew => '0.5');"
      "CREATE STREAMING TABLE e AS SELECT * FROM STREAM read_memory('api');"
      "CREATE STREAMING TABLE f AS SELECT * FROM STREAM read_kafka(bootstrapServers => 'b:9092', "
      "subscribe => 'orders', startingOffsets => 'latest', format => 'csv', `kafka.security` => "
      "'SSL');");
  ASSERT_EQ(p.flows.size(), 6u);
  FileSource a{"in/*.csv", FileFormat::kCsv, true, {{"header", "true"}, {"odd.key", "x"}}};
  EXPECT_EQ(p.flows[0].source, SourceSpec{a});
  EXPECT_TRUE(p.flows[0].sql.empty());
  FileSource b{"in/*.parquet", FileFormat::kParquet, false, {}};
  EXPECT_EQ(p.flows[1].source, SourceSpec{b});
  EXPECT_FALSE(p.flows[2].source);  // a batch read_files in a query stays SQL
  EXPECT_EQ(p.flows[2].sql, "SELECT * FROM read_files('in/*.json', format => 'json')");
  GeneratorSource g;
  g.kind = GeneratorKind::kNexmarkBid;
  g.seed = 9;
  g.rows_per_batch = 10;
  g.total_rows = 100;
  g.events_per_second = 5;
  g.out_of_orderness_ms = 3000;
  g.options = {{"skew", "0.5"}};
  EXPECT_EQ(p.flows[3].source, SourceSpec{g});
  EXPECT_EQ(p.flows[4].source, SourceSpec{MemorySource{"api"}});
  KafkaSource k;
  k.bootstrap_servers = "b:9092";
  k.topic = "orders";
  k.starting_offsets = StartingOffsets::kLatest;
  k.format = "csv";
  k.options = {{"kafka.security", "SSL"}};
  EXPECT_EQ(p.flows[5].source, SourceSpec{k});
  // A dotted option name written bare is not one identifier.
  Diagnostic d = OnlyError(
      "CREATE STREAMING TABLE f AS SELECT * FROM STREAM read_kafka(topic => 't', "
      "kafka.security => 'SSL')");
  EXPECT_EQ(d.message, "write the option name in back quotes: `kafka.security` => ...");
  EXPECT_EQ(d.location.column, 75);  // at kafka.security
}

TEST(ParseSql, AutoCdc) {
  Pipeline p = Parse(
      "CREATE STREAMING TABLE target;"
      "CREATE FLOW c AS AUTO CDC INTO target FROM STREAM changes KEYS (id, region) "
      "APPLY AS DELETE WHEN op = 'D' AND NOT replay SEQUENCE BY seq COLUMNS * EXCEPT (op, seq) "
      "STORED AS SCD TYPE 2;"
      "CREATE STREAMING TABLE t2 FLOW AUTO CDC FROM (SELECT * FROM STREAM changes WHERE ok) "
      "KEYS (id) SEQUENCE BY `ts col`;");
  ASSERT_EQ(p.flows.size(), 2u);
  Cdc c;
  c.keys = {"id", "region"};
  c.apply_as_deletes = "op = 'D' AND NOT replay";
  c.sequence_by = "seq";
  c.except_columns = {"op", "seq"};
  c.scd_type = 2;
  EXPECT_EQ(p.flows[0].cdc, c);
  EXPECT_EQ(p.flows[0].sql, "SELECT * FROM STREAM changes");
  EXPECT_EQ(p.flows[0].target, "target");
  EXPECT_EQ(p.flows[1].name, "t2");
  EXPECT_EQ(p.flows[1].sql, "SELECT * FROM STREAM changes WHERE ok");
  EXPECT_EQ(p.flows[1].cdc->sequence_by, "ts col");
  EXPECT_EQ(p.flows[1].cdc->scd_type, 1);
}

TEST(ParseSql, StandalonePipelineStatement) {
  Pipeline p = Parse("CREATE PIPELINE shop WITH (storage = 's3://bucket/shop');");
  EXPECT_EQ(p.name, "shop");
  EXPECT_EQ(p.storage, "s3://bucket/shop");
  SqlParseOptions lib;
  lib.project_library = true;
  ParseResult r = ParseSql("CREATE PIPELINE x", "lib.sql", lib);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.diagnostics[0].message,
            "CREATE PIPELINE is not allowed in a library file of an SDP project");
}

TEST(ParseSql, UnsupportedFormsSayWhatToDo) {
  EXPECT_EQ(
      OnlyError("CREATE MATERIALIZED VIEW t (a INT GENERATED ALWAYS AS (1)) AS SELECT 1 AS a").code,
      "sql-unsupported");
  EXPECT_EQ(OnlyError("CREATE MATERIALIZED VIEW t (PRIMARY KEY (a)) AS SELECT 1 AS a").code,
            "sql-unsupported");
  EXPECT_EQ(OnlyError("APPLY CHANGES INTO t FROM s KEYS (a) SEQUENCE BY b").code,
            "sql-unsupported");
  EXPECT_EQ(OnlyError("INSERT INTO t SELECT 1").message,
            "unsupported statement 'INSERT' in a pipeline definition file");
}

}  // namespace
}  // namespace thund
