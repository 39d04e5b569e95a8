// Streaming runs over real sources (file drop, generator), AUTO CDC, the
// processing-time trigger with a clean stop, and faults injected at every
// write of a streaming run — each checked against an independent DuckDB
// oracle or against one clean run over the same rows.
#include <arrow/api.h>
#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "backend/native/native_backend.h"
#include "batch_fixture.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/fs/fault_injection_fs.h"
#include "engine/io/parquet_io.h"
#include "thund/sql_pipeline.h"
#include "thund/validate.h"

namespace thund::native::testing {
namespace {

namespace fs = std::filesystem;
using engine::QuoteString;
using engine::testing::RowStrings;
using engine::testing::TablesEqualUnordered;

class StreamSourcesTest : public BatchFixture {
 protected:
  std::string Glob(const std::string& dataset) const {
    return "read_parquet(" + QuoteString(root() + "/" + dataset + "/current/*.parquet") + ")";
  }
  // Sorted rows of a dataset, for comparing runs with each other.
  std::vector<std::string> Rows(const std::string& dataset) const {
    auto t = ReadDataset(dataset);
    if (!t) return {};
    auto rows = RowStrings(*t);
    std::sort(rows.begin(), rows.end());
    return rows;
  }
  int64_t Triggers(const std::string& flow) const {
    int64_t n = 0;
    for (const auto& e : events_) n += e.kind == RunEvent::Kind::kTrigger && e.flow == flow;
    return n;
  }
};

// ----------------------------------------------------------- file drop ----

std::string Csv(int from, int to) {
  std::string s = "id,k,v\n";
  for (int i = from; i < to; ++i) {
    s +=
        std::to_string(i) + ",k" + std::to_string(i % 7) + "," + std::to_string(i * 3 % 101) + "\n";
  }
  return s;
}

TEST_F(StreamSourcesTest, FileDropTakesNewFilesOnceAcrossRuns) {
  const std::string sql = "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('" +
                          Path("drop") +
                          "', format => 'csv');\n"
                          "CREATE STREAMING TABLE per_k WITH (output_mode = 'complete') AS "
                          "SELECT k, count(*) AS n, sum(v) AS s FROM STREAM(raw) GROUP BY k;\n";
  const Pipeline p = ParsePipeline(sql);
  WriteFile("drop/a.csv", Csv(0, 40));
  WriteFile("drop/b.csv", Csv(40, 90));
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  const std::string all = "read_csv(" + QuoteString(Path("drop") + "/*.csv") + ")";
  EXPECT_DATASET_MATCHES("raw", "SELECT * FROM " + all);

  // A file added between runs is taken; a half-written one (no final newline)
  // waits; nothing is read twice.
  WriteFile("drop/c.csv", Csv(90, 130));
  WriteFile("drop/d.csv", Csv(130, 150) + "150,k3,7");  // still being written
  RunSummary s = Run(p);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_DATASET_MATCHES("raw", "SELECT * FROM " + all + " WHERE id < 130");
  EXPECT_DATASET_MATCHES(
      "per_k", "SELECT k, count(*) AS n, sum(v) AS s FROM " + all + " WHERE id < 130 GROUP BY k");
  WriteFile("drop/d.csv", Csv(130, 151));  // complete now
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  EXPECT_DATASET_MATCHES("raw", "SELECT * FROM " + all);
  EXPECT_DATASET_MATCHES("per_k",
                         "SELECT k, count(*) AS n, sum(v) AS s FROM " + all + " GROUP BY k");
  // A run with nothing new changes nothing.
  const std::string version = CurrentVersion("raw");
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  EXPECT_EQ(CurrentVersion("raw"), version);
}

TEST_F(StreamSourcesTest, FileWithOtherColumnsFailsClearlyAndKeepsCommittedRows) {
  const Pipeline p =
      ParsePipeline("CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('" +
                    Path("drop") + "', format => 'csv');\n");
  WriteFile("drop/a.csv", Csv(0, 20));
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  const auto before = Rows("raw");
  WriteFile("drop/b.csv", "id,name\n1,x\n");
  RunSummary s = Run(p);
  EXPECT_EQ(s.status, RunPhase::kFailed);
  const DatasetOutcome* o = Find(s, "raw");
  ASSERT_NE(o, nullptr);
  EXPECT_NE(o->reason.find("b.csv"), std::string::npos) << o->reason;
  EXPECT_EQ(Rows("raw"), before);
  // Moving the file away lets the stream continue.
  fs::remove(Path("drop/b.csv"));
  WriteFile("drop/c.csv", Csv(20, 30));
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  EXPECT_DATASET_MATCHES("raw",
                         "SELECT * FROM read_csv(" + QuoteString(Path("drop") + "/*.csv") + ")");
}

// ----------------------------------------------------------- generator ----

std::string GeneratorPipeline(int rows_per_batch) {
  return "CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => "
         "'keyed_events', seed => 9, rows_per_batch => " +
         std::to_string(rows_per_batch) +
         ", total_rows => 3000, events_per_second => 50, out_of_orderness => '3s', keys => '12');\n"
         "CREATE STREAMING TABLE per_window AS SELECT key, window, count(*) AS n, sum(value) AS s "
         "FROM STREAM(ev) WATERMARK event_time DELAY OF INTERVAL 4 SECONDS "
         "GROUP BY key, window(event_time, '20 seconds');\n"
         "CREATE STREAMING TABLE big WITH (output_mode = 'update') AS "
         "SELECT key, count(*) AS n FROM STREAM(ev) WHERE value > 900 GROUP BY key;\n";
}

TEST_F(StreamSourcesTest, GeneratorRunsEqualTheBatchQueryForEverySplitting) {
  for (int per_batch : {3000, 250, 37}) {
    SCOPED_TRACE("rows_per_batch " + std::to_string(per_batch));
    fs::remove_all(root());
    events_.clear();
    RunSummary s = Run(ParsePipeline(GeneratorPipeline(per_batch)));
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    EXPECT_EQ(Triggers("ev"), (3000 + per_batch - 1) / per_batch);
    auto ev = ReadDataset("ev");
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->num_rows(), 3000);
    // The generator ended: every window is final and emitted.
    EXPECT_DATASET_MATCHES(
        "per_window",
        "SELECT key, {'start': time_bucket(INTERVAL 20 SECONDS, event_time, TIMESTAMPTZ "
        "'1970-01-01 "
        "00:00:00+00'), 'end': time_bucket(INTERVAL 20 SECONDS, event_time, TIMESTAMPTZ "
        "'1970-01-01 00:00:00+00') + INTERVAL 20 SECONDS} AS window, count(*) AS n, "
        "sum(value) AS s FROM " +
            Glob("ev") + " GROUP BY ALL");
    EXPECT_DATASET_MATCHES(
        "big", "SELECT key, count(*) AS n FROM " + Glob("ev") + " WHERE value > 900 GROUP BY key");
  }
}

TEST_F(StreamSourcesTest, ProcessingTimeRunsUntilStoppedAndCommitsEachTrigger) {
  const Pipeline p = ParsePipeline(
      "CREATE STREAMING TABLE ev WITH (trigger = '20ms') AS SELECT * FROM STREAM "
      "read_generator(kind => 'keyed_events', seed => 1, rows_per_batch => 100);\n"
      "CREATE STREAMING TABLE n WITH (output_mode = 'complete') AS "
      "SELECT count(*) AS n, sum(value) AS s FROM STREAM(ev);\n");
  std::atomic<bool> stop{false};
  RunOptions o;
  o.stop = &stop;
  int seen = 0;
  o.on_event = [&](const RunEvent& e) {
    if (e.kind == RunEvent::Kind::kTrigger && e.flow == "n" && ++seen == 3) stop = true;
  };
  RunSummary s = Run(p, o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_NE(std::find(s.notes.begin(), s.notes.end(), "stopped on request"), s.notes.end());
  EXPECT_EQ(Triggers("ev"), 3);
  auto ev = ReadDataset("ev");
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->num_rows(), 300);
  EXPECT_DATASET_MATCHES("n", "SELECT count(*) AS n, sum(value) AS s FROM " + Glob("ev"));
  // The unbounded generator continues where it stopped.
  stop = false;
  seen = 0;
  ASSERT_EQ(Run(p, o).status, RunPhase::kCompleted);
  ev = ReadDataset("ev");
  EXPECT_EQ(ev->num_rows(), 600);
  EXPECT_DATASET_MATCHES("ev", "SELECT DISTINCT * FROM " + Glob("ev"));  // no row twice
}

TEST_F(StreamSourcesTest, AFaultAtAnyWriteLosesNothingAndCountsNothingTwice) {
  const Pipeline p = ParsePipeline(GeneratorPipeline(600));
  // The reference: one clean run.
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  const auto ev = Rows("ev"), per_window = Rows("per_window"), big = Rows("big");
  const int failed_runs = RunWithRandomFaults(p, 12, 4, [&] {
    EXPECT_EQ(Rows("ev"), ev);
    EXPECT_EQ(Rows("per_window"), per_window);
    EXPECT_EQ(Rows("big"), big);
  });
  EXPECT_GT(failed_runs, 6);  // most faults hit a trigger's writes, not the run history
}

// ----------------------------------------------------------------- CDC ----

// Change rows: id (20 keys), name, seq (unique, arrival order shuffled so
// changes arrive out of order), op ('U' or 'D'), plus exact duplicates.
std::shared_ptr<arrow::Table> ChangeFeed(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> seqs(n);
  for (int i = 0; i < n; ++i) seqs[i] = i * 10;
  std::shuffle(seqs.begin(), seqs.end(), rng);
  arrow::Int64Builder id, seq;
  arrow::StringBuilder name, op;
  for (int i = 0; i < n; ++i) {
    const int copies = rng() % 8 == 0 ? 2 : 1;  // duplicates
    const int64_t key = rng() % 20;
    const bool del = rng() % 5 == 0;
    const std::string nm = "n" + std::to_string(rng() % 1000);
    for (int c = 0; c < copies; ++c) {
      EXPECT_TRUE(id.Append(key).ok());
      EXPECT_TRUE(seq.Append(seqs[i]).ok());
      EXPECT_TRUE(name.Append(nm).ok());
      EXPECT_TRUE(op.Append(del ? "D" : "U").ok());
    }
  }
  // A change that cannot be placed (NULL key): ignored and counted.
  EXPECT_TRUE(id.AppendNull().ok());
  EXPECT_TRUE(seq.Append(5).ok());
  EXPECT_TRUE(name.Append("nobody").ok());
  EXPECT_TRUE(op.Append("U").ok());
  std::shared_ptr<arrow::Array> a, b, c, d;
  EXPECT_TRUE(id.Finish(&a).ok());
  EXPECT_TRUE(name.Finish(&b).ok());
  EXPECT_TRUE(seq.Finish(&c).ok());
  EXPECT_TRUE(op.Finish(&d).ok());
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                     arrow::field("seq", arrow::int64()), arrow::field("op", arrow::utf8())});
  return arrow::Table::Make(schema, {a, b, c, d});
}

std::vector<std::shared_ptr<arrow::RecordBatch>> Batches(const std::shared_ptr<arrow::Table>& t,
                                                         int64_t size) {
  auto all = t->CombineChunksToBatch().ValueOrDie();
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  for (int64_t at = 0; at < all->num_rows(); at += size) {
    out.push_back(all->Slice(at, std::min(size, all->num_rows() - at)));
  }
  return out;
}

const char* kCdcPipeline = R"sql(
CREATE STREAMING TABLE changes AS SELECT * FROM STREAM read_memory('feed');
CREATE STREAMING TABLE customers;
CREATE FLOW customers_cdc AS AUTO CDC INTO customers FROM STREAM(changes)
KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op);
CREATE STREAMING TABLE history;
CREATE FLOW history_cdc AS AUTO CDC INTO history FROM STREAM(changes)
KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op)
STORED AS SCD TYPE 2;
)sql";

TEST_F(StreamSourcesTest, AutoCdcGivesTheSameTablesForEverySplitting) {
  auto feed = ChangeFeed(400, 21);
  const std::string all_path = Path("feed.parquet");
  ASSERT_TRUE(engine::WriteParquetFile(*feed, all_path).ok());
  std::vector<std::string> scd1, scd2;
  for (int64_t size : {feed->num_rows(), int64_t{9}, int64_t{64}}) {
    SCOPED_TRACE("batches of " + std::to_string(size));
    fs::remove_all(root());
    RunOptions o;
    o.memory_streams["feed"] = Batches(feed, size);
    RunSummary s = Run(ParsePipeline(kCdcPipeline), o);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
    // SCD1 against its definition: per key the change with the highest
    // sequence (sequences are unique per change), gone when it is a delete.
    EXPECT_DATASET_MATCHES(
        "customers",
        "SELECT id, name, seq FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY seq "
        "DESC) AS r FROM read_parquet(" +
            QuoteString(all_path) +
            ") WHERE id IS NOT NULL) "
            "WHERE r = 1 AND op <> 'D'");
    bool ignored_reported = false;
    for (const auto& e : events_) {
      ignored_reported |= e.kind == RunEvent::Kind::kMessage && e.flow == "customers_cdc" &&
                          e.count == 1 && e.message.find("ignored") != std::string::npos;
    }
    EXPECT_TRUE(ignored_reported);
    events_.clear();
    if (scd1.empty()) {
      scd1 = Rows("customers");
      scd2 = Rows("history");
    } else {
      EXPECT_EQ(Rows("customers"), scd1);
      EXPECT_EQ(Rows("history"), scd2);
    }
  }
  // SCD2: exactly one open version per live key, none for deleted keys.
  EXPECT_DATASET_MATCHES("history",
                         "SELECT * FROM " + Glob("history"));  // readable
  auto open = Oracle("SELECT id, name, seq FROM " + Glob("history") + " WHERE __END_AT IS NULL");
  auto live = Oracle("SELECT id, name, seq FROM " + Glob("customers"));
  EXPECT_TRUE(TablesEqualUnordered(*live, *open, /*check_types=*/false));
}

}  // namespace
}  // namespace thund::native::testing

namespace thund::native::testing {
namespace {

TEST_F(StreamSourcesTest, CheckRefusesWhatTheEngineCannotStreamWithAReason) {
  auto backend = NativeBackend::Make();
  Pipeline p = ParsePipeline(
      "CREATE STREAMING TABLE t;\n"
      "CREATE FLOW direct AS AUTO CDC INTO t FROM STREAM read_memory('m') KEYS (id) SEQUENCE BY "
      "seq;\n"
      "CREATE SINK out OPTIONS (format = 'parquet', path = '/tmp/x');\n"
      "CREATE STREAMING TABLE g AS SELECT * FROM STREAM read_generator(kind => 'keyed_events');\n"
      "CREATE FLOW to_sink AS INSERT INTO out BY NAME SELECT * FROM STREAM(g);\n"
      "CREATE STREAMING TABLE k AS SELECT * FROM STREAM read_kafka(bootstrap_servers => 'b:9092', "
      "topic => 'x');\n"
      "CREATE STREAMING TABLE u WITH (output_mode = 'update') AS SELECT key % 3, count(*) AS n "
      "FROM STREAM(g) GROUP BY key % 3;\n");
  // An update stream into a file sink (a flow reading STREAM(g) without
  // knobs is a batch flow over g's committed rows).
  for (auto& f : p.flows) {
    if (f.name == "to_sink") {
      f.streaming = StreamingSpec{};
      f.streaming->output_mode = OutputMode::kUpdate;
    }
  }
  auto diags = backend->Check(p);
  std::map<std::string, std::string> by_flow;
  for (const auto& d : diags) {
    if (d.severity == Severity::kError) by_flow[d.flow] += d.message + " | " + d.hint;
  }
  EXPECT_NE(by_flow["direct"].find("streaming table"), std::string::npos) << by_flow["direct"];
  EXPECT_NE(by_flow["to_sink"].find("file sink"), std::string::npos) << by_flow["to_sink"];
  EXPECT_NE(by_flow["k"].find("source:kafka"), std::string::npos) << by_flow["k"];
  EXPECT_NE(by_flow["u"].find("alias"), std::string::npos) << by_flow["u"];
  EXPECT_EQ(by_flow.count("g"), 0u);
}

}  // namespace
}  // namespace thund::native::testing

namespace thund::native::testing {
namespace {

// ---------------------------------------------------------------- sinks ----

std::string SinkPipeline(const std::string& out, const std::string& format) {
  return "CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => "
         "'keyed_events', seed => 3, rows_per_batch => 150, total_rows => 1500, keys => '9');\n"
         "CREATE SINK big USING " +
         format + " LOCATION '" + out +
         "';\n"
         "CREATE FLOW to_big WITH (output_mode = 'append') AS INSERT INTO big BY NAME "
         "SELECT key, value, seq FROM STREAM(ev) WHERE value >= 700;\n"
         "CREATE SINK per_key USING csv LOCATION '" +
         out +
         "_totals';\n"
         "CREATE FLOW to_per_key WITH (output_mode = 'complete') AS INSERT INTO per_key BY NAME "
         "SELECT key, count(*) AS n FROM STREAM(ev) GROUP BY key;\n";
}

TEST_F(StreamSourcesTest, AppendSinkGetsEveryRowOnceEvenAfterAFault) {
  const Pipeline p = ParsePipeline(SinkPipeline(Path("out"), "parquet"));
  const std::string sink = "read_parquet(" + QuoteString(Path("out") + "/*.parquet") + ")";
  const CountedRun counted = RunCountingWrites(p);
  ASSERT_EQ(counted.summary.status, RunPhase::kCompleted) << counted.summary.ToString();
  const int64_t total = counted.write_operations;
  auto local = std::make_shared<arrow::fs::LocalFileSystem>();
  // One file per trigger that had rows; the complete sink holds one file.
  EXPECT_DATASET_MATCHES("ev", "SELECT * FROM " + Glob("ev"));
  auto rows = Oracle("SELECT key, value, seq FROM " + sink);
  auto expected = Oracle("SELECT key, value, seq FROM " + Glob("ev") + " WHERE value >= 700");
  EXPECT_TRUE(TablesEqualUnordered(*expected, *rows, /*check_types=*/false));
  auto totals =
      Oracle("SELECT * FROM read_csv(" + QuoteString(Path("out_totals") + "/*.csv") + ")");
  auto totals_expected = Oracle("SELECT key, count(*) AS n FROM " + Glob("ev") + " GROUP BY key");
  EXPECT_TRUE(TablesEqualUnordered(*totals_expected, *totals, /*check_types=*/false));
  EXPECT_EQ(std::distance(fs::directory_iterator(Path("out_totals")), fs::directory_iterator()), 1);

  std::mt19937 rng(8);
  for (int i = 0; i < 8; ++i) {
    const int64_t k = 1 + static_cast<int64_t>(rng() % total);
    SCOPED_TRACE("fault at write " + std::to_string(k) + " of " + std::to_string(total));
    fs::remove_all(root());
    fs::remove_all(Path("out"));
    fs::remove_all(Path("out_totals"));
    auto faulty = std::make_shared<engine::FaultInjectingFileSystem>(local);
    faulty->FailAfter(k);
    RunOptions o;
    o.native.filesystem = faulty;
    (void)TryRun(p, o);
    ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
    rows = Oracle("SELECT key, value, seq FROM " + sink);
    EXPECT_TRUE(TablesEqualUnordered(*expected, *rows, /*check_types=*/false));
    totals = Oracle("SELECT * FROM read_csv(" + QuoteString(Path("out_totals") + "/*.csv") + ")");
    EXPECT_TRUE(TablesEqualUnordered(*totals_expected, *totals, /*check_types=*/false));
  }
}

}  // namespace
}  // namespace thund::native::testing

namespace thund::native::testing {
namespace {

TEST_F(StreamSourcesTest, AFlowReadingStreamIsStreamingAndAppendsEachRowOnce) {
  // No streaming option at all: reading STREAM(ev) makes the flow streaming
  // (SDP's rule), so a second run appends only the new rows.
  const Pipeline p = ParsePipeline(
      "CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => 'keyed_events', "
      "seed => 5, rows_per_batch => 200);\n"
      "CREATE SINK big USING parquet LOCATION '" +
      Path("out") +
      "';\n"
      "CREATE FLOW to_big AS INSERT INTO big BY NAME SELECT key, value, seq FROM STREAM(ev) "
      "WHERE value >= 700;\n");
  ASSERT_TRUE(IsStreamingFlow(p, *p.FindFlow("to_big")));
  RunOptions o;
  o.max_triggers = 2;
  ASSERT_EQ(Run(p, o).status, RunPhase::kCompleted);
  RunSummary s = Run(p, o);
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  auto ev = ReadDataset("ev");
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->num_rows(), 800);
  auto rows = Oracle("SELECT key, value, seq FROM read_parquet(" +
                     QuoteString(Path("out") + "/*.parquet") + ")");
  auto expected = Oracle("SELECT key, value, seq FROM " + Glob("ev") + " WHERE value >= 700");
  EXPECT_TRUE(TablesEqualUnordered(*expected, *rows, /*check_types=*/false));
}

}  // namespace
}  // namespace thund::native::testing
