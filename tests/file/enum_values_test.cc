// Enum-valued fields read from user text: bad values are reported where they
// are read (pipeline file, SQL), with the codes, messages and hints Validate
// used to give them; empty text keeps the default where the IR has one; every
// value round-trips through both writers.
#include <gtest/gtest.h>

#include "test_util.h"
#include "thund/pipeline_file.h"
#include "thund/sql_pipeline.h"
#include "thund/validate.h"

namespace thund {
namespace {

using file_test::DiagText;
using file_test::OnlyWithCode;

ParseResult Dataset1(const std::string& fields) {
  return ParsePipelineFile(
      "name: p\n"
      "datasets:\n"
      "  - name: out\n"
      "    kind: sink\n" +
          fields +
          "flows:\n"
          "  - target: out\n"
          "    sql: SELECT 1 AS id\n",
      "p.yaml");
}

ParseResult Source1(const std::string& source) {
  return ParsePipelineFile(
      "name: p\n"
      "datasets:\n"
      "  - {name: s, kind: streaming_table}\n"
      "flows:\n"
      "  - name: load\n"
      "    target: s\n"
      "    source: " +
          source + "\n",
      "p.yaml");
}

TEST(EnumValues, KeyedWriteValuesAreCheckedWhereTheyAreRead) {
  ParseResult r = Dataset1(
      "    keyed_write: {keys: [id], buckets: -1, duplicates: last, null_keys: skip,\n"
      "                  key_match: fuzzy}\n");
  ASSERT_FALSE(r.ok());
  int n = 0;
  for (const auto& d : r.diagnostics) n += d.code == "keyed-write-value";
  EXPECT_EQ(n, 3) << DiagText(r.diagnostics);  // buckets is Validate's (an integer)
  const Diagnostic& dup = r.diagnostics[0];
  EXPECT_EQ(dup.code, "keyed-write-value");
  EXPECT_EQ(dup.field_path, "datasets[0].keyed_write.duplicates");
  EXPECT_EQ(dup.message, "keyed_write duplicates 'last' is not supported");
  EXPECT_NE(dup.hint.find("first"), std::string::npos);
  EXPECT_EQ(dup.dataset, "out");
  EXPECT_EQ(dup.location.line, 5);
  EXPECT_EQ(r.diagnostics[1].message, "keyed_write null_keys 'skip' is not supported");
  EXPECT_NE(r.diagnostics[1].hint.find("use error"), std::string::npos);
  EXPECT_EQ(r.diagnostics[2].message, "keyed_write key_match 'fuzzy' is not supported");
  EXPECT_EQ(r.diagnostics[2].location.line, 6);
  EXPECT_NE(r.diagnostics[2].hint.find("use exact"), std::string::npos);
}

TEST(EnumValues, StorageFormatAndMode) {
  ParseResult r = Dataset1("    storage: {format: avro, mode: upsert}\n");
  ASSERT_FALSE(r.ok());
  const Diagnostic* f = OnlyWithCode(r.diagnostics, "storage-format");
  ASSERT_NE(f, nullptr) << DiagText(r.diagnostics);
  EXPECT_EQ(f->dataset, "out");
  EXPECT_EQ(f->field_path, "datasets[0].storage.format");
  EXPECT_EQ(f->message, "storage format 'avro' is not supported");
  EXPECT_EQ(f->hint,
            "use parquet, csv or json (or leave it empty for parquet); noop (rows counted and "
            "discarded) on a sink");
  const Diagnostic* m = OnlyWithCode(r.diagnostics, "storage-mode");
  ASSERT_NE(m, nullptr) << DiagText(r.diagnostics);
  EXPECT_EQ(m->dataset, "out");
  EXPECT_EQ(m->message, "storage mode 'upsert' is not supported");
  EXPECT_EQ(m->hint, "use append, overwrite or merge");
}

TEST(EnumValues, EmptyTextKeepsTheDefault) {
  ParseResult r = Dataset1(
      "    storage: {format: '', mode: ''}\n"
      "    keyed_write: {keys: [id], duplicates: '', null_keys: '', key_match: ''}\n");
  ASSERT_TRUE(r.ok()) << DiagText(r.diagnostics);
  const Dataset& d = r.pipeline.datasets[0];
  EXPECT_FALSE(d.storage.format.has_value());
  EXPECT_FALSE(d.storage.mode.has_value());
  EXPECT_EQ(d.keyed_write, KeyedWrite{{"id"}});
}

TEST(EnumValues, SourceValuesKeepTheSourceSpecCode) {
  struct Case {
    std::string source, path, message, hint;
  };
  const std::vector<Case> cases = {
      {"{kind: file_drop, path: in/, format: xml}", "flows[0].source.format",
       "file source format 'xml' is not supported", "use one of parquet, csv, json"},
      {"{kind: generator, generator: nexmark_bids}", "flows[0].source.generator",
       "unknown generator kind 'nexmark_bids'",
       "use one of keyed_events, nexmark, nexmark_person, nexmark_auction, nexmark_bid"},
      {"{kind: kafka, bootstrap_servers: 'b:1', topic: t, starting_offsets: newest}",
       "flows[0].source.starting_offsets", "kafka starting_offsets 'newest' is not supported",
       "use earliest or latest"},
  };
  for (const auto& c : cases) {
    ParseResult r = Source1(c.source);
    const Diagnostic* d = OnlyWithCode(r.diagnostics, "source-spec");
    ASSERT_NE(d, nullptr) << c.source << "\n" << DiagText(r.diagnostics);
    EXPECT_EQ(d->flow, "load");
    EXPECT_EQ(d->field_path, c.path);
    EXPECT_EQ(d->message, c.message);
    EXPECT_EQ(d->hint, c.hint);
  }
  // A file source without a format is Validate's to report.
  ParseResult r = Source1("{kind: file_drop, path: in/}");
  ASSERT_TRUE(r.ok()) << DiagText(r.diagnostics);
  const Diagnostics v = Validate(r.pipeline);
  const Diagnostic* d = OnlyWithCode(v, "source-spec");
  ASSERT_NE(d, nullptr) << DiagText(v);
  EXPECT_EQ(d->field_path, "flows[0].source.format");
}

TEST(EnumValues, SqlReportsBadValuesWithTheSameCodes) {
  struct Case {
    std::string sql, code, message;
  };
  const std::vector<Case> cases = {
      {"CREATE TABLE t WITH (keyed_write.keys = (id), keyed_write.null_keys = 'skip') AS "
       "SELECT 1 AS id;",
       "keyed-write-value", "keyed_write null_keys 'skip' is not supported"},
      {"CREATE TABLE t WITH (keyed_write.keys = (id), keyed_write.duplicates = 'last') AS "
       "SELECT 1 AS id;",
       "keyed-write-value", "keyed_write duplicates 'last' is not supported"},
      {"CREATE TABLE t WITH (keyed_write.keys = (id), keyed_write.key_match = 'fuzzy') AS "
       "SELECT 1 AS id;",
       "keyed-write-value", "keyed_write key_match 'fuzzy' is not supported"},
      {"CREATE SINK s USING avro LOCATION 'out/';", "storage-format",
       "storage format 'avro' is not supported"},
      {"CREATE SINK s USING json LOCATION 'out/' WITH (write_mode = 'upsert');", "storage-mode",
       "storage mode 'upsert' is not supported"},
      {"CREATE STREAMING TABLE g AS SELECT * FROM STREAM read_generator(kind => 'tpch');", "",
       "unknown generator kind 'tpch'; use one of keyed_events"},
      {"CREATE STREAMING TABLE k AS SELECT * FROM STREAM read_kafka(bootstrap_servers => 'b:1', "
       "topic => 't', starting_offsets => 'newest');",
       "", "kafka starting_offsets 'newest' is not supported; use earliest or latest"},
      {"CREATE STREAMING TABLE f AS SELECT * FROM STREAM read_files('in/', format => 'xml');", "",
       "file source format 'xml' is not supported; use one of parquet, csv, json"},
  };
  for (const auto& c : cases) {
    ParseResult r = ParseSql(c.sql, "p.sql");
    ASSERT_FALSE(r.ok()) << c.sql;
    ASSERT_FALSE(r.diagnostics.empty());
    const Diagnostic& d = r.diagnostics[0];
    EXPECT_NE(d.message.find(c.message), std::string::npos) << c.sql << "\n" << d.ToString();
    if (!c.code.empty()) {
      EXPECT_EQ(d.code, c.code) << c.sql;
    }
    EXPECT_EQ(d.location.line, 1) << c.sql;
  }
}

TEST(EnumValues, EveryValueRoundTripsThroughBothWriters) {
  for (FileFormat f : {FileFormat::kParquet, FileFormat::kCsv, FileFormat::kJson}) {
    for (WriteMode m : {WriteMode::kAppend, WriteMode::kOverwrite, WriteMode::kMerge}) {
      for (NullKeys n : {NullKeys::kError, NullKeys::kDrop}) {
        Pipeline p("p");
        Dataset d = Dataset::Sink("out");
        d.storage.format = f;
        d.storage.mode = m;
        d.storage.location = "out/";
        if (m == WriteMode::kMerge) d.storage.merge_keys = {"id", "odd key"};
        d.keyed_write.keys = {"id"};
        d.keyed_write.null_keys = n;
        d.keyed_write.duplicates = DuplicateKeys::kAll;
        d.keyed_write.key_match = KeyMatch::kHash;
        d.keyed_write.tuning = {2, 3, 4};
        p.Add(d);
        p.Add(Flow("out", "out", "SELECT 1 AS id"));
        ParseResult file = ParsePipelineFile(FormatPipelineFile(p), "p.yaml");
        ASSERT_TRUE(file.ok()) << DiagText(file.diagnostics);
        EXPECT_TRUE(file.pipeline == p) << FormatPipelineFile(p);
        ParseResult sql = ParseSql(FormatSql(p), "p.sql");
        ASSERT_TRUE(sql.ok()) << FormatSql(p) << DiagText(sql.diagnostics);
        EXPECT_EQ(sql.pipeline.datasets[0].storage, d.storage) << FormatSql(p);
        EXPECT_EQ(sql.pipeline.datasets[0].keyed_write, d.keyed_write) << FormatSql(p);
      }
    }
  }
  for (GeneratorKind g : {GeneratorKind::kKeyedEvents, GeneratorKind::kNexmarkPerson,
                          GeneratorKind::kNexmarkAuction, GeneratorKind::kNexmarkBid,
                          GeneratorKind::kNexmark}) {
    for (StartingOffsets o : {StartingOffsets::kEarliest, StartingOffsets::kLatest}) {
      Pipeline p("p");
      p.Add(Dataset::StreamingTable("s"));
      GeneratorSource gen;
      gen.kind = g;
      KafkaSource kafka;
      kafka.bootstrap_servers = "b:1";
      kafka.topic = "t";
      kafka.starting_offsets = o;
      p.Add(Flow::FromSource("gen", "s", gen));
      p.Add(Flow::FromSource("kafka", "s", kafka));
      p.Add(Flow::FromSource("files", "s", FileSource{"in/", FileFormat::kCsv, true, {}}));
      ParseResult file = ParsePipelineFile(FormatPipelineFile(p), "p.yaml");
      ASSERT_TRUE(file.ok()) << DiagText(file.diagnostics);
      EXPECT_TRUE(file.pipeline == p) << FormatPipelineFile(p);
      ParseResult sql = ParseSql(FormatSql(p), "p.sql");
      ASSERT_TRUE(sql.ok()) << FormatSql(p) << DiagText(sql.diagnostics);
      ASSERT_EQ(sql.pipeline.flows.size(), 3u) << FormatSql(p);
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(sql.pipeline.flows[i].source, p.flows[i].source) << FormatSql(p);
      }
    }
  }
}

}  // namespace
}  // namespace thund
