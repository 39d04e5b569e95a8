// `thund run` applying Dataset::keyed_write (docs/keyed-writes.md): sinks and
// stored tables, pipeline files and SQL, filter placement, counts, the
// crash-safe staging of stored tables. Inputs are made and results checked
// by an independent DuckDB (the oracle), never through the code under test.
#include <arrow/array.h>
#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>

#include "batch_fixture.h"
#include "engine/duckdb/sql_quote.h"
#include "thund/pipeline_file.h"
#include "thund/sql_pipeline.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;
using ::testing::HasSubstr;

class KeyedRunTest : public BatchFixture {
 protected:
  // Writes `select` (DuckDB SQL) as one Parquet file.
  void Parquet(const std::string& name, const std::string& select) {
    std::filesystem::create_directories(std::filesystem::path(Path(name)).parent_path());
    Oracle("COPY (" + select + ") TO " + QuoteString(Path(name)) + " (FORMAT parquet)");
  }
  static std::string Text(const Diagnostics& diags) {
    std::string out;
    for (const auto& d : diags) out += d.ToString() + "\n";
    return out;
  }
  Pipeline Yaml(const std::string& text) {
    ParseResult r = ParsePipelineFile(text, "test.yaml");
    EXPECT_TRUE(r.ok()) << Text(r.diagnostics);
    return r.pipeline;
  }
  Pipeline Sql(const std::string& text) {
    ParseResult r = ParseSql(text, "test.sql");
    EXPECT_TRUE(r.ok()) << Text(r.diagnostics);
    return r.pipeline;
  }
  std::string Glob(const std::string& dir, const std::string& ext = "parquet") const {
    return "read_" + std::string(ext == "json" ? "json" : ext) + "(" +
           QuoteString(Path(dir) + "/*." + ext) + ")";
  }
  // Rows of `sql` minus rows of `other` and vice versa, both by the oracle; "" if equal.
  std::string Diff(const std::string& expected, const std::string& actual) {
    auto t = Oracle("SELECT (SELECT count(*) FROM ((" + expected + ") EXCEPT ALL (" + actual +
                    "))) AS missing, (SELECT count(*) FROM ((" + actual + ") EXCEPT ALL (" +
                    expected + "))) AS extra");
    if (!t) return "oracle failed";
    auto missing = std::static_pointer_cast<arrow::Int64Array>(t->column(0)->chunk(0))->Value(0);
    auto extra = std::static_pointer_cast<arrow::Int64Array>(t->column(1)->chunk(0))->Value(0);
    if (missing == 0 && extra == 0) return "";
    return std::to_string(missing) + " rows missing, " + std::to_string(extra) + " extra";
  }
  bool HasMessage(const std::string& part) const {
    for (const auto& e : events_) {
      if (e.message.find(part) != std::string::npos) return true;
    }
    return false;
  }
  std::string Messages() const {
    std::string out;
    for (const auto& e : events_) out += e.ToString() + "\n";
    return out;
  }
};

TEST_F(KeyedRunTest, FileSourceIntoSinkSkipsKeysAlreadyInTheDirectory) {
  Parquet("src/a.parquet", "SELECT i AS id, 'new ' || i AS v FROM range(0, 600) t(i)");
  Parquet("src/b.parquet", "SELECT i AS id, 'new ' || i AS v FROM range(600, 1000) t(i)");
  // The target already holds every third key, with other values.
  Parquet("out/old.parquet", "SELECT i AS id, 'old ' || i AS v FROM range(0, 1000) t(i) "
                             "WHERE i % 3 = 0");
  Pipeline p = Yaml("name: k\n"
                    "datasets:\n"
                    "  - name: out\n"
                    "    kind: sink\n"
                    "    storage: {location: " + Path("out") + ", options: {rows_per_file: '100'}}\n"
                    "    keyed_write: {keys: [id]}\n"
                    "flows:\n"
                    "  - target: out\n"
                    "    source: {kind: files, path: " + Path("src") + ", format: parquet}\n");
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString() << Messages();
  const DatasetOutcome* o = Find(s, "out");
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(o->native->keyed);
  EXPECT_EQ(o->native->keyed->rows_read, 1000);
  EXPECT_EQ(o->native->keyed->rows_skipped_existing, 334);
  EXPECT_EQ(o->rows_written, 666);
  EXPECT_THAT(o->native->keyed->placement, HasSubstr("right after the file source"));
  EXPECT_TRUE(HasMessage("right after the file source")) << Messages();
  EXPECT_THAT(s.ToString(), HasSubstr("skipped as already written 334"));
  // Old rows stay; each new key once, with its new value.
  const std::string expected =
      "SELECT id, v FROM read_parquet(" + QuoteString(Path("out/old.parquet")) +
      ") UNION ALL SELECT id, v FROM " + Glob("src") + " WHERE id % 3 <> 0";
  EXPECT_EQ(Diff(expected, "SELECT id, v FROM " + Glob("out")), "");
  // 666 new rows in files of at most 100 rows.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(Path("out"))) {
    files += e.path().filename().string().rfind("part-", 0) == 0;
  }
  EXPECT_EQ(files, 7);
}

TEST_F(KeyedRunTest, SqlTableKeepsItsRowsAndAppendsNewKeysFilteredAtTheStoredSource) {
  Parquet("src/a.parquet", "SELECT i AS id, i * 10 AS v FROM range(0, 500) t(i)");
  const std::string sql = "CREATE TABLE raw AS SELECT * FROM read_parquet(" +
                          QuoteString(Path("src") + "/*.parquet") + ");\n"
                          "CREATE TABLE out WITH (keyed_write.keys = (id)) AS\n"
                          "SELECT id, v + 1 AS w FROM raw WHERE v >= 0;\n";
  Pipeline p = Sql(sql);
  RunSummary first = Run(p);
  ASSERT_EQ(first.status, RunPhase::kCompleted) << first.ToString() << Messages();
  EXPECT_EQ(Find(first, "out")->rows_written, 500);
  EXPECT_TRUE(HasMessage("target")) << Messages();
  // New input: 300 more keys, and 200 existing keys with other values.
  Parquet("src/b.parquet", "SELECT i AS id, -1 - i AS v FROM range(300, 500) t(i) UNION ALL "
                           "SELECT i AS id, i * 10 AS v FROM range(500, 800) t(i)");
  events_.clear();
  RunSummary second = Run(p);
  ASSERT_EQ(second.status, RunPhase::kCompleted) << second.ToString() << Messages();
  const DatasetOutcome* o = Find(second, "out");
  EXPECT_EQ(o->native->keyed->rows_read, 1000);               // rows of `raw`, read once
  EXPECT_EQ(o->native->keyed->rows_skipped_existing, 700);  // 500 + 200 repeated keys
  EXPECT_EQ(o->rows_written, 300);
  EXPECT_THAT(o->native->keyed->placement, HasSubstr("right after source raw"));
  EXPECT_EQ(CurrentVersion("out"), "v-000002");
  EXPECT_DATASET_MATCHES("out", "SELECT i AS id, i * 10 + 1 AS w FROM range(0, 800) t(i)");
  // The staging directory is empty after the commit.
  int staged = 0;
  for (const auto& e : std::filesystem::directory_iterator(root() + "/out/_keyed_staging")) {
    staged += e.path().extension() == ".parquet";
  }
  EXPECT_EQ(staged, 0);
}

TEST_F(KeyedRunTest, JoinPushesTheFilterToTheSideCarryingTheKey) {
  Parquet("a.parquet", "SELECT i AS id, 'x' || i AS x FROM range(0, 400) t(i)");
  Parquet("b.parquet", "SELECT i AS id, 'y' || i AS y FROM range(100, 500) t(i)");
  Parquet("out/old.parquet", "SELECT i AS id, 'x' AS x, 'y' AS y FROM range(0, 200) t(i)");
  Pipeline p = Yaml("name: k\n"
                    "datasets:\n"
                    "  - {name: a, query: \"SELECT * FROM read_parquet('" + Path("a.parquet") + "')\"}\n"
                    "  - {name: b, query: \"SELECT * FROM read_parquet('" + Path("b.parquet") + "')\"}\n"
                    "  - name: out\n"
                    "    kind: sink\n"
                    "    storage: {location: " + Path("out") + "}\n"
                    "    keyed_write: {keys: [id]}\n"
                    "    query: SELECT a.id, x, y FROM a JOIN b ON a.id = b.id\n");
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString() << Messages();
  const DatasetOutcome* o = Find(s, "out");
  EXPECT_THAT(o->native->keyed->placement, HasSubstr("right after source a"));
  EXPECT_EQ(o->native->keyed->rows_read, 400);
  EXPECT_EQ(o->native->keyed->rows_skipped_existing, 200);
  EXPECT_EQ(o->rows_written, 200);
  EXPECT_EQ(Diff("SELECT id, 'x' AS x, 'y' AS y FROM range(0, 200) t(id) UNION ALL "
                 "SELECT a.id, x, y FROM read_parquet(" + QuoteString(Path("a.parquet")) +
                     ") a JOIN read_parquet(" + QuoteString(Path("b.parquet")) +
                     ") b ON a.id = b.id WHERE a.id >= 200",
                 "SELECT id, x, y FROM " + Glob("out")),
            "");
}

TEST_F(KeyedRunTest, UnionFiltersEveryBranchAndAComputedKeyFiltersBeforeTheWrite) {
  Parquet("a.parquet", "SELECT i AS id, i AS v FROM range(0, 300) t(i)");
  Parquet("b.parquet", "SELECT i AS id, i AS v FROM range(300, 600) t(i)");
  Parquet("u/old.parquet", "SELECT i AS id, -1 AS v FROM range(0, 600) t(i) WHERE i % 2 = 0");
  Parquet("c/old.parquet", "SELECT i AS id, -1 AS v FROM range(0, 600) t(i) WHERE i % 2 = 0");
  const std::string a = "read_parquet(" + QuoteString(Path("a.parquet")) + ")";
  const std::string b = "read_parquet(" + QuoteString(Path("b.parquet")) + ")";
  Pipeline p = Sql("CREATE TABLE a AS SELECT * FROM " + a + ";\n"
                   "CREATE TABLE b AS SELECT * FROM " + b + ";\n"
                   "CREATE SINK u LOCATION " + QuoteString(Path("u")) +
                   " WITH (keyed_write.keys = (id));\n"
                   "CREATE FLOW fu AS INSERT INTO u BY NAME "
                   "SELECT id, v FROM a UNION ALL SELECT id, v FROM b;\n"
                   "CREATE SINK c LOCATION " + QuoteString(Path("c")) +
                   " WITH (keyed_write.keys = (id));\n"
                   "CREATE FLOW fc AS INSERT INTO c BY NAME "
                   "SELECT id + 0 AS id, v FROM a UNION ALL SELECT id, v FROM b;\n");
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString() << Messages();
  const DatasetOutcome* u = Find(s, "u");
  EXPECT_THAT(u->native->keyed->placement, HasSubstr("right after sources a"));
  EXPECT_EQ(u->native->keyed->rows_read, 600);
  EXPECT_EQ(u->rows_written, 300);
  const DatasetOutcome* c = Find(s, "c");
  EXPECT_THAT(c->native->keyed->placement, HasSubstr("filter before the write"));
  EXPECT_TRUE(HasMessage("filter before the write")) << Messages();
  EXPECT_EQ(c->native->keyed->rows_read, 600);
  EXPECT_EQ(c->native->keyed->rows_skipped_existing, 300);
  EXPECT_EQ(c->rows_written, 300);
  const std::string expected =
      "SELECT id, -1 AS v FROM range(0, 600) t(id) WHERE id % 2 = 0 UNION ALL "
      "SELECT id, v FROM (SELECT * FROM " + a + " UNION ALL SELECT * FROM " + b +
      ") WHERE id % 2 = 1";
  EXPECT_EQ(Diff(expected, "SELECT id, v FROM " + Glob("u")), "");
  EXPECT_EQ(Diff(expected, "SELECT id, v FROM " + Glob("c")), "");
}

TEST_F(KeyedRunTest, MissingTargetIsSaidAndEverythingIsWritten) {
  Parquet("src.parquet", "SELECT i AS id FROM range(0, 50) t(i)");
  Pipeline p = Yaml("name: k\n"
                    "datasets:\n"
                    "  - name: out\n"
                    "    kind: sink\n"
                    "    storage: {location: " + Path("new/out") + ", format: csv}\n"
                    "    keyed_write: {keys: [id]}\n"
                    "    query: \"SELECT * FROM read_parquet('" + Path("src.parquet") + "')\"\n");
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString() << Messages();
  EXPECT_TRUE(HasMessage("does not exist yet: no row is skipped")) << Messages();
  EXPECT_EQ(Find(s, "out")->rows_written, 50);
  EXPECT_EQ(Diff("SELECT i AS id FROM range(0, 50) t(i)", "SELECT id FROM " + Glob("new/out", "csv")),
            "");
  // Up to date on a rerun; after a full refresh nothing is new.
  events_.clear();
  RunOptions refresh;
  refresh.full_refresh_all = true;
  RunSummary again = Run(p, refresh);
  ASSERT_EQ(again.status, RunPhase::kCompleted) << again.ToString();
  EXPECT_EQ(Find(again, "out")->native->keyed->rows_skipped_existing, 50);
  EXPECT_EQ(Find(again, "out")->rows_written, 0);
}

TEST_F(KeyedRunTest, KeyColumnMissingFromATargetFileFailsNamingTheFile) {
  Parquet("src.parquet", "SELECT i AS id, i AS v FROM range(0, 10) t(i)");
  Parquet("out/foreign.parquet", "SELECT 1 AS other");
  Pipeline p = Yaml("name: k\n"
                    "datasets:\n"
                    "  - name: out\n"
                    "    kind: sink\n"
                    "    storage: {location: " + Path("out") + "}\n"
                    "    keyed_write: {keys: [id]}\n"
                    "    query: \"SELECT * FROM read_parquet('" + Path("src.parquet") + "')\"\n");
  RunSummary s = Run(p);
  EXPECT_EQ(s.status, RunPhase::kFailed);
  const DatasetOutcome* o = Find(s, "out");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->status, DatasetStatus::kFailed);
  EXPECT_THAT(o->reason, HasSubstr("foreign.parquet"));
  EXPECT_THAT(o->reason, HasSubstr("key column 'id' is missing"));
}

TEST_F(KeyedRunTest, NullKeysFailByDefaultAndAreDroppedAndCountedWithDrop) {
  Parquet("src.parquet", "SELECT CASE WHEN i % 10 = 0 THEN NULL ELSE i END AS id FROM "
                         "range(0, 100) t(i)");
  auto pipeline = [&](const std::string& extra) {
    return Yaml("name: k\n"
                "datasets:\n"
                "  - name: out\n"
                "    kind: table\n"
                "    keyed_write: {keys: [id]" + extra + "}\n"
                "    query: \"SELECT * FROM read_parquet('" + Path("src.parquet") + "')\"\n");
  };
  RunSummary failed = Run(pipeline(""));
  EXPECT_EQ(failed.status, RunPhase::kFailed);
  EXPECT_THAT(Find(failed, "out")->reason, HasSubstr("NULL"));
  RunSummary dropped = Run(pipeline(", null_keys: drop"));
  ASSERT_EQ(dropped.status, RunPhase::kCompleted) << dropped.ToString();
  EXPECT_EQ(Find(dropped, "out")->native->keyed->rows_null_key, 10);
  EXPECT_EQ(Find(dropped, "out")->rows_written, 90);
  EXPECT_DATASET_MATCHES("out", "SELECT i AS id FROM range(0, 100) t(i) WHERE i % 10 <> 0");
}

// The fast-path switches of keyed_write (docs/keyed-writes.md "Fast paths and
// their switches") change how the rows are found, never which land: four
// sinks fed by the same files over targets holding the same part of the keys
// (string keys, duplicates, NULLs dropped) end equal to each other and to a
// DuckDB anti-join; the defaults use the row index, the others its plain twin.
TEST_F(KeyedRunTest, FastPathSwitchesLandTheSameRowsIntoSinksAsTheDefaults) {
  // 1200 source rows over 700 keys (the value follows the key, so the first
  // row of a key equals any other), every 97th key NULL.
  const std::string rows = "SELECT CASE WHEN i % 97 = 0 THEN NULL ELSE 'k' || (i % 700) END AS k, "
                           "'v' || (i % 700) AS v FROM range(";
  Parquet("src/a.parquet", rows + "0, 650) t(i)");
  Parquet("src/b.parquet", rows + "650, 1200) t(i)");
  const std::string old =
      "SELECT 'k' || j AS k, 'old ' || j AS v FROM range(0, 700) t(j) WHERE j % 3 = 0";
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"fast", ""},
      {"plain", ", plain: true"},
      {"table", ", key_index: table"},
      {"nopool", ", memory_pool: false, huge_pages: false, join: false, direct_io: false"}};
  std::string yaml = "name: k\ndatasets:\n";
  std::string flows = "flows:\n";
  for (const auto& [name, extra] : variants) {
    Parquet("out_" + name + "/old.parquet", old);
    yaml += "  - name: out_" + name + "\n    kind: sink\n    storage: {location: " +
            Path("out_" + name) + "}\n    keyed_write: {keys: [k], null_keys: drop" + extra +
            "}\n";
    flows += "  - target: out_" + name + "\n    source: {kind: files, path: " + Path("src") +
             ", format: parquet}\n";
  }
  RunSummary s = Run(Yaml(yaml + flows));
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString() << Messages();
  const std::string src = "(SELECT * FROM " + Glob("src") + ")";
  const std::string target = "(" + old + ")";
  const std::string expected = old + " UNION ALL SELECT DISTINCT s.k, s.v FROM " + src +
                               " s ANTI JOIN " + target + " o ON s.k = o.k WHERE s.k IS NOT NULL";
  auto says = [&](const std::string& dataset, const std::string& part) {
    for (const auto& e : events_) {
      if (e.dataset == dataset && e.message.find(part) != std::string::npos) return true;
    }
    return false;
  };
  for (const auto& [name, extra] : variants) {
    SCOPED_TRACE(name + extra);
    const DatasetOutcome* o = Find(s, "out_" + name);
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->native->keyed->rows_read, 1200);
    EXPECT_EQ(o->native->keyed->rows_null_key, 13);  // i = 0, 97, ..., 1164
    EXPECT_EQ(Diff(expected, "SELECT k, v FROM " + Glob("out_" + name)), "");
    const bool row_index = name == "fast" || name == "nopool";
    EXPECT_TRUE(says("out_" + name, row_index ? "row index" : "key set")) << Messages();
  }
  EXPECT_EQ(Find(s, "out_fast")->rows_written, Find(s, "out_plain")->rows_written);
}

// The same for stored tables written from SQL over two runs, the second over
// a target holding the first run's keys.
TEST_F(KeyedRunTest, FastPathSwitchesLandTheSameRowsIntoStoredTablesAsTheDefaults) {
  const std::string rows = "SELECT CASE WHEN i % 89 = 0 THEN NULL ELSE 'k' || (i % 900) END AS k, "
                           "'v' || (i % 900) AS v FROM range(";
  Parquet("src/a.parquet", rows + "0, 500) t(i)");
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"fast", ""},
      {"plain", ", keyed_write.plain = true"},
      {"noindex", ", keyed_write.key_index = 'table', keyed_write.huge_pages = false"}};
  std::string sql = "CREATE TABLE raw AS SELECT * FROM read_parquet(" +
                    QuoteString(Path("src") + "/*.parquet") + ");\n";
  for (const auto& [name, extra] : variants) {
    sql += "CREATE TABLE t_" + name + " WITH (keyed_write.keys = (k), keyed_write.null_keys = "
           "'drop'" + extra + ") AS SELECT k, v FROM raw;\n";
  }
  Pipeline p = Sql(sql);
  RunSummary first = Run(p);
  ASSERT_EQ(first.status, RunPhase::kCompleted) << first.ToString() << Messages();
  // Second run: overlapping keys, more duplicates and NULLs.
  Parquet("src/b.parquet", rows + "300, 1800) t(i)");
  events_.clear();
  RunSummary second = Run(p);
  ASSERT_EQ(second.status, RunPhase::kCompleted) << second.ToString() << Messages();
  const std::string src_a = "(" + rows + "0, 500) t(i))";
  const std::string all = "(" + rows + "0, 1800) t(i))";
  // First run: each key of a once; second: each key of a or b once.
  const std::string expected =
      "SELECT DISTINCT k, v FROM " + all + " WHERE k IS NOT NULL";
  for (const auto& [name, extra] : variants) {
    SCOPED_TRACE(name);
    EXPECT_DATASET_MATCHES("t_" + name, expected);
    const DatasetOutcome* o = Find(second, "t_" + name);
    ASSERT_NE(o, nullptr);
    // New rows of the second run = the anti-join of b's keys against a's.
    auto count = Oracle("SELECT count(*) FROM (SELECT DISTINCT s.k FROM " + all +
                        " s ANTI JOIN " + src_a + " o ON s.k = o.k WHERE s.k IS NOT NULL)");
    ASSERT_TRUE(count);
    EXPECT_EQ(o->rows_written,
              std::static_pointer_cast<arrow::Int64Array>(count->column(0)->chunk(0))->Value(0));
    bool row_index = false;
    for (const auto& e : events_) {
      row_index |= e.dataset == "t_" + name && e.message.find("row index") != std::string::npos;
    }
    EXPECT_EQ(row_index, name == "fast") << Messages();
  }
}

// A NULL key deep into a file source (past the first batch DuckDB hands over)
// is named by the flow and its row counted from the source's start, also in
// the pre-pass that duplicates=all makes.
TEST_F(KeyedRunTest, ANullKeyErrorNamesTheFlowAndTheRowFromTheSourceStart) {
  Parquet("src.parquet", "SELECT CASE WHEN i = 5000 THEN NULL ELSE i END AS id FROM "
                         "range(0, 6000) t(i)");
  for (const std::string dup : {"first", "all"}) {
    SCOPED_TRACE("duplicates=" + dup);
    RunSummary failed = Run(Yaml("name: k\n"
                                 "datasets:\n"
                                 "  - name: out\n"
                                 "    kind: table\n"
                                 "    keyed_write: {keys: [id], duplicates: " + dup + "}\n"
                                 "flows:\n"
                                 "  - name: load\n"
                                 "    target: out\n"
                                 "    source: {kind: files, path: " + Path("src.parquet") +
                                 ", format: parquet}\n"));
    EXPECT_EQ(failed.status, RunPhase::kFailed);
    const std::string reason = Find(failed, "out")->reason;
    EXPECT_THAT(reason, HasSubstr("flow 'load'"));
    EXPECT_THAT(reason, HasSubstr("row 5001: a key column (id) is NULL"));
  }
}

TEST_F(KeyedRunTest, DuplicatesFirstAndAllOnATable) {
  Parquet("src.parquet", "SELECT i % 40 AS id, i AS v FROM range(0, 100) t(i)");
  auto pipeline = [&](const std::string& name, const std::string& dup) {
    return Yaml("name: " + name + "\n"
                "datasets:\n"
                "  - name: out\n"
                "    kind: table\n"
                "    keyed_write: {keys: [id], duplicates: " + dup + "}\n"
                "flows:\n"
                "  - target: out\n"
                "    source: {kind: files, path: " + Path("src.parquet") + ", format: parquet}\n");
  };
  RunSummary all = Run(pipeline("k1", "all"));
  ASSERT_EQ(all.status, RunPhase::kCompleted) << all.ToString() << Messages();
  EXPECT_EQ(Find(all, "out")->rows_written, 100);
  EXPECT_DATASET_MATCHES("out", "SELECT i % 40 AS id, i AS v FROM range(0, 100) t(i)");
  // A second source file: keys 30..49; only 40..49 are new, and all their rows are written.
  Parquet("src2.parquet", "SELECT 30 + i % 20 AS id, 1000 + i AS v FROM range(0, 60) t(i)");
  Pipeline p2 = pipeline("k1", "all");
  p2.flows.push_back(p2.flows[0]);
  p2.flows[1].name = "second";
  std::get<FileSource>(*p2.flows[1].source).path = Path("src2.parquet");
  RunSummary more = Run(p2);
  ASSERT_EQ(more.status, RunPhase::kCompleted) << more.ToString() << Messages();
  EXPECT_EQ(Find(more, "out")->rows_written, 30);
  EXPECT_DATASET_MATCHES("out", "SELECT i % 40 AS id, i AS v FROM range(0, 100) t(i) UNION ALL "
                                "SELECT 30 + i % 20, 1000 + i FROM range(0, 60) t(i) "
                                "WHERE 30 + i % 20 >= 40");
}

TEST_F(KeyedRunTest, StagedFilesOfAKilledRunAreAdoptedAndCommittedOnesNotTwice) {
  Parquet("src.parquet", "SELECT i AS id, i * 2 AS v FROM range(0, 1000) t(i)");
  Pipeline p = Yaml("name: k\n"
                    "datasets:\n"
                    "  - name: out\n"
                    "    kind: table\n"
                    "    keyed_write: {keys: [id]}\n"
                    "    query: \"SELECT * FROM read_parquet('" + Path("src.parquet") + "')\"\n");
  // What a run killed before its commit leaves: whole staged files + a partial one.
  const std::string staging = root() + "/out/_keyed_staging";
  std::filesystem::create_directories(staging);
  Oracle("COPY (SELECT i AS id, i * 2 AS v FROM range(0, 300) t(i)) TO " +
         QuoteString(staging + "/part-deadbeef-00000.parquet") + " (FORMAT parquet)");
  WriteFile("store/out/_keyed_staging/_tmp-1234-part-deadbeef-00001.parquet.inprogress", "PAR1x");
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString() << Messages();
  const DatasetOutcome* o = Find(s, "out");
  EXPECT_EQ(o->native->keyed->rows_skipped_existing, 300);
  EXPECT_EQ(o->rows_written, 700);
  EXPECT_TRUE(HasMessage("removed 1 partial file")) << Messages();
  EXPECT_DATASET_MATCHES("out", "SELECT i AS id, i * 2 AS v FROM range(0, 1000) t(i)");
  // A crash after the commit but before the staging cleanup: the staged file is
  // also in the version. The next run must not add it again.
  std::filesystem::copy_file(root() + "/out/current/part-deadbeef-00000.parquet",
                             staging + "/part-deadbeef-00000.parquet");
  Parquet("src.parquet", "SELECT i AS id, i * 2 AS v FROM range(0, 1100) t(i)");
  RunSummary again = Run(p);
  ASSERT_EQ(again.status, RunPhase::kCompleted) << again.ToString() << Messages();
  EXPECT_EQ(Find(again, "out")->rows_written, 100);
  EXPECT_DATASET_MATCHES("out", "SELECT i AS id, i * 2 AS v FROM range(0, 1100) t(i)");
}

TEST_F(KeyedRunTest, SchemaChangeOfAKeyedTableNeedsAFullRefresh) {
  Parquet("src.parquet", "SELECT i AS id FROM range(0, 10) t(i)");
  auto pipeline = [&](const std::string& select) {
    return Yaml("name: k\n"
                "datasets:\n"
                "  - name: out\n"
                "    kind: table\n"
                "    keyed_write: {keys: [id]}\n"
                "    query: \"" + select + " FROM read_parquet('" + Path("src.parquet") + "')\"\n");
  };
  ASSERT_EQ(Run(pipeline("SELECT id")).status, RunPhase::kCompleted);
  RunSummary changed = Run(pipeline("SELECT id, 'x' AS extra"));
  EXPECT_EQ(changed.status, RunPhase::kFailed);
  EXPECT_THAT(Find(changed, "out")->reason, HasSubstr("--full-refresh out"));
  RunOptions refresh;
  refresh.full_refresh = {"out"};
  RunSummary rewritten = Run(pipeline("SELECT id, 'x' AS extra"), refresh);
  ASSERT_EQ(rewritten.status, RunPhase::kCompleted) << rewritten.ToString();
  EXPECT_EQ(Find(rewritten, "out")->rows_written, 10);
  EXPECT_DATASET_MATCHES("out", "SELECT i AS id, 'x' AS extra FROM range(0, 10) t(i)");
}

TEST_F(KeyedRunTest, AFailureAtASourceLeavesTheSourceReadableByOtherDatasets) {
  Parquet("src.parquet", "SELECT CASE WHEN i = 5 THEN NULL ELSE i END AS id FROM "
                         "range(0, 100) t(i)");
  Pipeline p = Yaml("name: k\n"
                    "datasets:\n"
                    "  - {name: raw, query: \"SELECT * FROM read_parquet('" + Path("src.parquet") +
                    "')\"}\n"
                    "  - name: out\n"
                    "    kind: table\n"
                    "    keyed_write: {keys: [id]}\n"
                    "    query: SELECT id FROM raw\n"
                    "  - {name: cnt, query: SELECT count(*) AS n FROM raw}\n");
  RunSummary s = Run(p);
  EXPECT_EQ(Find(s, "out")->status, DatasetStatus::kFailed);
  EXPECT_THAT(Find(s, "out")->reason, HasSubstr("source 'raw' of flow 'out' row 6"));
  ASSERT_EQ(Find(s, "cnt")->status, DatasetStatus::kComputed) << s.ToString();
  EXPECT_DATASET_MATCHES("cnt", "SELECT 100 AS n");
}

TEST_F(KeyedRunTest, CompositeKeyIntoAJsonSinkWithDuplicatesAll) {
  auto pipeline = [&](int rows) {
    return Yaml("name: k\n"
                "datasets:\n"
                "  - {name: raw, query: \"SELECT i AS id, 'n' || (i % 7) AS name FROM range(0, " +
                std::to_string(rows) + ") t(i)\"}\n"
                "  - name: out\n"
                "    kind: sink\n"
                "    storage: {location: " + Path("out") + ", format: json, options: "
                "{rows_per_file: '30'}}\n"
                "    keyed_write: {keys: [id, name], duplicates: all}\n"
                "    query: SELECT * FROM raw UNION ALL SELECT * FROM raw WHERE id < 10\n");
  };
  RunSummary first = Run(pipeline(100));
  ASSERT_EQ(first.status, RunPhase::kCompleted) << first.ToString() << Messages();
  EXPECT_EQ(Find(first, "out")->rows_written, 110);
  RunSummary second = Run(pipeline(120));
  ASSERT_EQ(second.status, RunPhase::kCompleted) << second.ToString() << Messages();
  EXPECT_EQ(Find(second, "out")->native->keyed->rows_skipped_existing, 110);
  EXPECT_EQ(Find(second, "out")->rows_written, 20);
  const std::string raw = "SELECT i AS id, 'n' || (i % 7) AS name FROM range(0, 120) t(i)";
  EXPECT_EQ(Diff(raw + " UNION ALL SELECT * FROM (" + raw + ") WHERE id < 10",
                 "SELECT id, name FROM read_json(" + QuoteString(Path("out") + "/*.json") + ")"),
            "");
}

TEST_F(KeyedRunTest, StreamingFlowsIntoAKeyedDatasetAreRefusedUpFront) {
  std::filesystem::create_directories(Path("landing"));
  Pipeline p = Yaml("name: k\n"
                    "datasets:\n"
                    "  - name: events\n"
                    "    kind: streaming_table\n"
                    "    keyed_write: {keys: [id]}\n"
                    "flows:\n"
                    "  - target: events\n"
                    "    source: {kind: file_drop, path: " + Path("landing") + ", format: parquet}\n");
  auto r = TryRun(p);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("applies keyed writes to batch flows only"));
}

}  // namespace
}  // namespace thund::native::testing
