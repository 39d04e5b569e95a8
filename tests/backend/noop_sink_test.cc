// Noop sinks (`CREATE SINK s USING noop`, `format: noop`): rows are counted
// and discarded. The counts a run reports are checked against an independent
// DuckDB oracle over the stored input; nothing may be written for the sink;
// and every misuse (a noop table, a location, a noop source) is refused with a
// reason by validation.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "backend/native/native_backend.h"
#include "batch_fixture.h"
#include "engine/duckdb/sql_quote.h"
#include "thund/pipeline_file.h"
#include "thund/sql_pipeline.h"
#include "thund/validate.h"

namespace thund::native::testing {
namespace {

namespace fs = std::filesystem;
using engine::QuoteString;

class NoopSinkTest : public BatchFixture {
 protected:
  std::string Glob(const std::string& dataset) const {
    return "read_parquet(" + QuoteString(root() + "/" + dataset + "/current/*.parquet") + ")";
  }
  int64_t OracleCount(const std::string& sql) const {
    auto t = Oracle("SELECT count(*) AS n FROM (" + sql + ")");
    EXPECT_TRUE(t && t->num_rows() == 1);
    if (!t || t->num_rows() != 1) return -1;
    auto n = t->column(0)->GetScalar(0);
    EXPECT_TRUE(n.ok());
    return n.ok() ? std::static_pointer_cast<arrow::Int64Scalar>(*n)->value : -1;
  }
  int64_t RowsOut(const std::string& flow) const {
    int64_t n = -1;
    for (const auto& e : events_) {
      if (e.kind == RunEvent::Kind::kFlowFinished && e.flow == flow) n = e.rows_out;
    }
    return n;
  }
  // A file or directory named after `part` anywhere in the scratch directory
  // (the default sink directory `_thund/sinks/<sink>/` included) but the run
  // history, the checkpoints and the sink's last-write record
  // `_thund/sinks/<sink>.json`: a noop sink must write no data of its own.
  bool AnythingNamed(const std::string& part) const {
    for (auto it = fs::recursive_directory_iterator(dir_.File(""));
         it != fs::recursive_directory_iterator(); ++it) {
      const std::string name = it->path().filename().string();
      if (name == "runs" || name == "checkpoints") {
        it.disable_recursion_pending();
        continue;
      }
      if (name == part + ".json" && it->path().parent_path().filename() == "sinks") continue;
      if (it->path().string().find(part) != std::string::npos) return true;
    }
    return false;
  }
  // Validation's errors by the last two parts of their field path
  // ("storage.location"), each "code: message | hint".
  std::map<std::string, std::string> Errors(const Pipeline& p) const {
    std::map<std::string, std::string> out;
    for (const auto& d : Validate(p)) {
      if (d.severity != Severity::kError) continue;
      std::string field = d.field_path;
      const size_t dot = field.rfind('.');
      const size_t before = dot == std::string::npos ? std::string::npos : field.rfind('.', dot - 1);
      if (before != std::string::npos) field = field.substr(before + 1);
      out[field] += d.code + ": " + d.message + " | " + d.hint;
    }
    return out;
  }
};

TEST_F(NoopSinkTest, StreamIntoNoopSinkCountsTheOraclesRowsAndWritesNothing) {
  // Three streaming flows into noop sinks: a filter (Recompute), the same
  // filter in the incremental mode, and a projection of every row.
  const Pipeline p = ParsePipeline(
      "CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => 'keyed_events', "
      "seed => 7, rows_per_batch => 250, total_rows => 2000);\n"
      "CREATE SINK discard_big USING noop;\n"
      "CREATE FLOW to_big AS INSERT INTO discard_big BY NAME SELECT key, value, seq FROM "
      "STREAM(ev) WHERE value >= 700;\n"
      "CREATE SINK discard_inc USING noop;\n"
      "CREATE FLOW to_inc WITH (mode = 'incremental') AS INSERT INTO discard_inc BY NAME "
      "SELECT key, value * 2 AS twice FROM STREAM(ev) WHERE value % 3 = 1;\n"
      "CREATE SINK discard_all USING noop;\n"
      "CREATE FLOW to_all AS INSERT INTO discard_all BY NAME SELECT * FROM STREAM(ev);\n");
  ASSERT_TRUE(Errors(p).empty());
  ASSERT_TRUE(NativeBackend::Make()->Check(p).empty());
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  ASSERT_EQ(ReadDataset("ev")->num_rows(), 2000);

  const int64_t big = OracleCount("SELECT * FROM " + Glob("ev") + " WHERE value >= 700");
  const int64_t inc = OracleCount("SELECT * FROM " + Glob("ev") + " WHERE value % 3 = 1");
  ASSERT_GT(big, 0);
  ASSERT_GT(inc, 0);
  ASSERT_LT(big, 2000);
  for (const auto& [sink, flow, expected] :
       {std::tuple{"discard_big", "to_big", big}, std::tuple{"discard_inc", "to_inc", inc},
        std::tuple{"discard_all", "to_all", int64_t{2000}}}) {
    SCOPED_TRACE(sink);
    const DatasetOutcome* o = Find(s, sink);
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->status, DatasetStatus::kComputed) << o->reason;
    EXPECT_EQ(o->rows_written, expected);
    EXPECT_EQ(RowsOut(flow), expected);
    EXPECT_FALSE(AnythingNamed(sink)) << "a noop sink wrote something";
  }
}

TEST_F(NoopSinkTest, BatchFlowIntoNoopSinkCountsTheOraclesRows) {
  WriteFile("in.csv", "id,v\n1,10\n2,20\n3,30\n4,40\n5,50\n");
  const Pipeline p = ParsePipeline("CREATE SINK gone USING noop;\n"
                                   "CREATE FLOW f AS INSERT INTO gone BY NAME SELECT id, v FROM "
                                   "read_csv(" +
                                   QuoteString(Path("in.csv")) + ") WHERE v > 15;\n");
  ASSERT_TRUE(Errors(p).empty());
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  const DatasetOutcome* o = Find(s, "gone");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->rows_written,
            OracleCount("SELECT * FROM read_csv(" + QuoteString(Path("in.csv")) + ") WHERE v > 15"));
  EXPECT_FALSE(AnythingNamed("gone"));
}

TEST_F(NoopSinkTest, ThePipelineFileTakesFormatNoopAndRoundTrips) {
  const std::string yaml =
      "name: s\n"
      "datasets:\n"
      "  - name: ev\n"
      "    kind: streaming_table\n"
      "  - name: discard\n"
      "    kind: sink\n"
      "    storage: {format: noop}\n"
      "flows:\n"
      "  - name: ev\n"
      "    target: ev\n"
      "    source: {kind: generator, generator: keyed_events, rows_per_batch: 100, "
      "total_rows: 300}\n"
      "  - name: to_discard\n"
      "    target: discard\n"
      "    sql: SELECT * FROM STREAM(ev)\n";
  auto file = ParsePipelineFile(yaml, "p.yaml");
  ASSERT_TRUE(file.ok()) << (file.diagnostics.empty() ? "" : file.diagnostics[0].ToString());
  Pipeline* parsed = &file.pipeline;
  const Dataset* d = parsed->FindDataset("discard");
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->storage.format.has_value());
  EXPECT_EQ(*d->storage.format, FileFormat::kNoop);
  auto again = ParsePipelineFile(FormatPipelineFile(*parsed), "p.yaml");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.pipeline.FindDataset("discard")->storage, d->storage);
  EXPECT_NE(FormatPipelineFile(*parsed).find("format: noop"), std::string::npos);
  EXPECT_TRUE(Errors(*parsed).empty());
  RunSummary s = Run(*parsed);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  ASSERT_NE(Find(s, "discard"), nullptr);
  EXPECT_EQ(Find(s, "discard")->rows_written, OracleCount("SELECT * FROM " + Glob("ev")));
  EXPECT_EQ(Find(s, "discard")->rows_written, 300);
}

TEST_F(NoopSinkTest, ValidationRefusesNoopWhereNothingCouldBeDiscarded) {
  // A stored table cannot discard its rows.
  auto table = Errors(ParsePipeline(
      "CREATE TABLE t USING noop AS SELECT 1 AS x;\n"));
  ASSERT_EQ(table.count("storage.format"), 1u);
  EXPECT_NE(table["storage.format"].find("storage-format: "), std::string::npos);
  EXPECT_NE(table["storage.format"].find("only a sink may"), std::string::npos);
  // A location, partitioning, options or a keyed write mean nothing on it.
  auto sink = Errors(ParsePipeline(
      "CREATE SINK s USING noop OPTIONS ('compression' = 'zstd') PARTITIONED BY (x) "
      "LOCATION '/tmp/nowhere';\n"
      "CREATE FLOW f AS INSERT INTO s BY NAME SELECT 1 AS x;\n"));
  EXPECT_EQ(sink.count("storage.location"), 1u);
  EXPECT_EQ(sink.count("storage.partition_by"), 1u);
  EXPECT_EQ(sink.count("storage.options"), 1u);
  // A sink that only counts is fine with nothing else set.
  EXPECT_TRUE(Errors(ParsePipeline("CREATE SINK s USING noop;\n"
                                   "CREATE FLOW f AS INSERT INTO s BY NAME SELECT 1 AS x;\n"))
                  .empty());
  // Sources read files: noop is not a format to read, in SQL or in a
  // pipeline file.
  auto sql = ParseSql(
      "CREATE STREAMING TABLE r AS SELECT * FROM STREAM read_files('/tmp/x', format => 'noop');\n",
      "s.sql");
  ASSERT_FALSE(sql.ok());
  EXPECT_NE(sql.diagnostics.front().message.find("'noop' is not supported"), std::string::npos)
      << sql.diagnostics.front().ToString();
  auto file = ParsePipelineFile(
      "name: s\n"
      "datasets: [{name: r, kind: streaming_table}]\n"
      "flows: [{name: r, target: r, source: {kind: file_drop, path: /tmp/x, format: noop}}]\n",
      "p.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.diagnostics.front().code, "source-spec") << file.diagnostics.front().ToString();
}

}  // namespace
}  // namespace thund::native::testing
