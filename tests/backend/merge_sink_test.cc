// Merge sinks in batch runs (`mode: merge`): each run upserts the flows' rows
// into the sink's merge table once, a rerun with the same rows leaves the
// same table, a full refresh replaces it; the CLI path; streams upsert into
// merge sinks at every checkpoint epoch.
#include <gmock/gmock.h>

#include <filesystem>

#include "backend/native/native_backend.h"
#include "batch_fixture.h"
#include "engine/batch/version_manifest.h"
#include "engine/fs/atomic_write.h"
#include "testing/run_command.h"

#include <arrow/filesystem/localfs.h>

namespace thund::native::testing {
namespace {

using ::testing::HasSubstr;

class MergeSinkTest : public BatchFixture {
 protected:
  // `suffix` changes the flow's SQL text (so the sink is recomputed) without
  // changing its rows.
  Pipeline MakePipeline(const std::string& suffix = "") const {
    Pipeline p("merge");
    Dataset sink = Dataset::Sink("totals");
    sink.storage.location = Path("out/totals");
    sink.storage.mode = WriteMode::kMerge;
    sink.storage.merge_keys = {"k", "g"};
    p.Add(sink);
    p.Add(Flow("totals", "totals", "SELECT " + Agg() + " FROM " + Csv() + " GROUP BY k, g" +
                                       suffix));
    return p;
  }
  static std::string Agg() { return "k, g, sum(v) AS total, max(note) AS note"; }
  std::string Csv() const {
    return "read_csv('" + Path("in.csv") + "', header = true, columns = {'k': 'VARCHAR', "
           "'g': 'INTEGER', 'v': 'BIGINT', 'note': 'VARCHAR'})";
  }
  std::shared_ptr<arrow::Table> Table() const {
    return Oracle("SELECT * FROM read_parquet('" + Path("out/totals") + "/current/*.parquet')");
  }
  std::string Version() const {
    auto local = std::make_shared<arrow::fs::LocalFileSystem>();
    auto text = engine::ReadWholeFile(*local, Path("out/totals/_current"));
    return text.ok() ? *text : "";
  }
  int64_t Epoch() const {
    std::string v = Version();
    while (!v.empty() && v.back() == '\n') v.pop_back();
    auto local = std::make_shared<arrow::fs::LocalFileSystem>();
    auto text = engine::ReadWholeFile(*local, Path("out/totals/" + v + "/_manifest.json"));
    if (!text.ok()) return -1;
    auto m = engine::batch::VersionManifest::Parse(*text, "manifest");
    return m.ok() ? m->epoch.value_or(0) : -1;
  }
  void ExpectTable(const std::string& oracle_sql) const {
    auto actual = Table();
    ASSERT_NE(actual, nullptr);
    auto expected = Oracle(oracle_sql);
    EXPECT_TRUE(engine::testing::TablesEqualUnordered(*expected, *actual, /*check_types=*/false));
  }
};

TEST_F(MergeSinkTest, EachRunUpsertsOnceAndARerunLeavesTheSameTable) {
  WriteFile("in.csv", "k,g,v,note\na,1,1,x\nb,1,2,\na,1,3,y\nc,2,4,\na,2,5,z\n");
  const std::string v1 = "SELECT " + Agg() + " FROM " + Csv() + " GROUP BY k, g";
  RunSummary first = Run(MakePipeline());
  ASSERT_EQ(first.status, RunPhase::kCompleted);
  const DatasetOutcome* o = Find(first, "totals");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->status, DatasetStatus::kComputed);
  EXPECT_THAT(o->reason, HasSubstr("4 inserted, 0 updated, 0 deleted, 4 rows"));
  EXPECT_EQ(o->rows_written, 4);
  ASSERT_TRUE(o->native.has_value());
  EXPECT_EQ(o->native->version, "v-000001");
  ExpectTable(v1);
  EXPECT_EQ(Epoch(), 1);

  // Unchanged: not recomputed at all.
  RunSummary second = Run(MakePipeline());
  EXPECT_EQ(Find(second, "totals")->status, DatasetStatus::kUpToDate);
  EXPECT_EQ(Version(), "v-000001\n");

  // Recomputed with the same rows (the SQL text changed): the same table, one epoch on.
  RunSummary third = Run(MakePipeline(" "));
  o = Find(third, "totals");
  EXPECT_EQ(o->status, DatasetStatus::kComputed);
  EXPECT_THAT(o->reason, HasSubstr("0 inserted, 4 updated, 0 deleted, 4 rows"));
  ExpectTable(v1);
  EXPECT_EQ(Epoch(), 2);

  // New rows: keys in them are replaced or added, the other keys stay.
  WriteFile("in.csv", "k,g,v,note\na,1,10,new\nd,1,7,\n");
  RunSummary fourth = Run(MakePipeline(" "));
  o = Find(fourth, "totals");
  EXPECT_THAT(o->reason, HasSubstr("1 inserted, 1 updated, 0 deleted, 5 rows"));
  const std::string v2 = "SELECT " + Agg() + " FROM " + Csv() + " GROUP BY k, g";
  ExpectTable("WITH old AS (SELECT * FROM (VALUES ('a', 2, 5::HUGEINT, 'z'), ('b', 1, 2, NULL), "
              "('c', 2, 4, NULL)) t(k, g, total, note)) " +
              v2 + " UNION ALL SELECT * FROM old");
  EXPECT_EQ(Epoch(), 3);

  // A full refresh replaces the content with the run's rows.
  RunOptions refresh;
  refresh.full_refresh = {"totals"};
  RunSummary fifth = Run(MakePipeline(" "), refresh);
  o = Find(fifth, "totals");
  EXPECT_THAT(o->reason, HasSubstr("replaced"));
  EXPECT_THAT(o->reason, HasSubstr("0 inserted, 2 updated, 3 deleted, 2 rows"));
  ExpectTable(v2);
}

TEST_F(MergeSinkTest, ANullKeyFailsTheSinkAndKeepsTheTable) {
  WriteFile("in.csv", "k,g,v,note\na,1,1,x\n");
  ASSERT_EQ(Run(MakePipeline()).status, RunPhase::kCompleted);
  WriteFile("in.csv", "k,g,v,note\na,1,2,x\n,1,3,y\n");
  RunSummary r = Run(MakePipeline());
  const DatasetOutcome* o = Find(r, "totals");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->status, DatasetStatus::kFailed);
  EXPECT_THAT(o->reason, HasSubstr("sink 'totals'"));
  EXPECT_THAT(o->reason, HasSubstr("has a NULL in key column 'k'"));
  EXPECT_EQ(Version(), "v-000001\n");
  ExpectTable("SELECT 'a' AS k, 1 AS g, 1 AS total, 'x' AS note");
}

TEST_F(MergeSinkTest, DeclaredSchemaFixesTheTableSchema) {
  WriteFile("in.csv", "k,g,v,note\na,1,1,x\n");
  Pipeline p = MakePipeline();
  p.datasets[0].WithSchema(arrow::schema({arrow::field("k", arrow::utf8(), false),
                                          arrow::field("g", arrow::int32(), false),
                                          arrow::field("total", arrow::float64()),
                                          arrow::field("note", arrow::utf8())}));
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  auto t = Table();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->schema()->field(2)->type()->id(), arrow::Type::DOUBLE);
}

TEST_F(MergeSinkTest, CommandRunTwiceLeavesTheSameTable) {
  WriteFile("in.csv", "k,g,v,note\na,1,1,x\nb,1,2,\na,1,3,y\n");
  WriteFile("p.yaml",
            "name: merge_cli\n"
            "storage: " + root() + "\n"
            "datasets:\n"
            "  - name: totals\n"
            "    kind: sink\n"
            "    storage: {location: " + Path("out/totals") +
                ", mode: merge, merge_keys: [k, g]}\n"
            "flows:\n"
            "  - target: totals\n"
            "    sql: |\n"
            "      SELECT " + Agg() + " FROM " + Csv() + " GROUP BY k, g\n");
  const std::string cmd =
      std::string(THUND_BINARY) + " run " + thund::testing::ShellQuote(Path("p.yaml"));
  auto r = thund::testing::RunCommand(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("merged into"));
  const std::string oracle = "SELECT " + Agg() + " FROM " + Csv() + " GROUP BY k, g";
  ExpectTable(oracle);
  auto again = thund::testing::RunCommand(cmd + " --full-refresh-all");
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  ExpectTable(oracle);
  EXPECT_EQ(Version(), "v-000002\n");
}

// Streams into merge sinks: an Update-mode aggregation and an AUTO CDC flow
// (incremental and Recompute) upsert into merge tables at each checkpoint
// epoch; run in pieces (a rerun resumes) they hold what the same flows put
// into streaming tables in one run.
TEST_F(MergeSinkTest, StreamsUpsertIntoMergeSinksAndRerunsResumeExactly) {
  const std::string sql = R"sql(
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => 'keyed_events',
  seed => 3, rows_per_batch => 250, total_rows => 3000, keys => 40);
CREATE STREAMING TABLE changes AS SELECT key, value, seq,
  value % 7 = 0 AS gone FROM STREAM(ev);

CREATE SINK totals_sink USING parquet LOCATION '{out}/totals'
  WITH (write_mode = 'merge', merge_keys = (key));
CREATE FLOW totals_flow WITH (mode = '{mode}', output_mode = 'update') AS
INSERT INTO totals_sink BY NAME
SELECT key, count(*) AS n, sum(value) AS s FROM STREAM(ev) GROUP BY key;
CREATE STREAMING TABLE totals_table WITH (mode = '{mode}', output_mode = 'update') AS
SELECT key, count(*) AS n, sum(value) AS s FROM STREAM(ev) GROUP BY key;

CREATE SINK latest_sink USING parquet LOCATION '{out}/latest'
  WITH (write_mode = 'merge', merge_keys = (key));
CREATE FLOW latest_flow WITH (mode = '{mode}') AS AUTO CDC INTO latest_sink
FROM STREAM(changes) KEYS (key) APPLY AS DELETE WHEN gone SEQUENCE BY seq
COLUMNS * EXCEPT (gone) STORED AS SCD TYPE 1;
CREATE STREAMING TABLE latest_table;
CREATE FLOW latest_table_flow WITH (mode = '{mode}') AS AUTO CDC INTO latest_table
FROM STREAM(changes) KEYS (key) APPLY AS DELETE WHEN gone SEQUENCE BY seq
COLUMNS * EXCEPT (gone) STORED AS SCD TYPE 1;
)sql";
  for (const std::string mode : {"incremental", "recompute"}) {
    SCOPED_TRACE(mode);
    std::string text = sql;
    const std::string out = Path("streams-" + mode);
    for (size_t at; (at = text.find("{out}")) != std::string::npos;) text.replace(at, 5, out);
    for (size_t at; (at = text.find("{mode}")) != std::string::npos;) text.replace(at, 6, mode);
    const Pipeline p = ParsePipeline(text);
    ASSERT_TRUE(NativeBackend::Make()->Check(p).empty());
    RunOptions o;
    o.storage_root = out + "/store";
    o.max_triggers = 3;
    for (int run = 0; run < 6; ++run) {
      RunSummary s = Run(p, o);
      ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    }
    auto read = [&](const std::string& glob) {
      return Oracle("SELECT * FROM read_parquet('" + glob + "')");
    };
    auto same = [](const std::shared_ptr<arrow::Table>& a,
                   const std::shared_ptr<arrow::Table>& b) {
      return ::thund::engine::testing::TablesEqualUnordered(*a, *b, /*check_types=*/false);
    };
    EXPECT_TRUE(same(read(out + "/store/totals_table/current/*.parquet"),
                     read(out + "/totals/current/*.parquet")));
    EXPECT_TRUE(same(read(out + "/store/latest_table/current/*.parquet"),
                     read(out + "/latest/current/*.parquet")));
    // And against the batch query over every event.
    EXPECT_TRUE(same(Oracle("SELECT key, count(*) AS n, sum(value) AS s FROM read_parquet('" +
                            out + "/store/ev/current/*.parquet') GROUP BY key"),
                     read(out + "/totals/current/*.parquet")));
  }
}

}  // namespace
}  // namespace thund::native::testing
