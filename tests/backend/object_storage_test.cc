// Datasets, sinks and inputs on object storage: pipelines whose storage root,
// file inputs, file drop, file sinks and merge sinks are s3:// locations on a
// real S3-compatible server (moto, started by the test on loopback).
//
// The oracle never reads S3 through thund: every object under a prefix is
// copied to local disk with Arrow's own S3 filesystem, and an independent
// DuckDB reads the copies (a dataset at the version its `_current` names).
// Each S3 pipeline is compared with the same pipeline on a local root, and
// the streaming one is killed (SIGKILL of the real CLI) again and again
// before it runs to completion: nothing lost, nothing twice.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <arrow/filesystem/s3fs.h>
#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

#include "batch_fixture.h"
#include "engine/fs/atomic_write.h"
#include "engine/fs/filesystem_uri.h"
#include "testing/run_command.h"
#include "testing/s3_server.h"

namespace thund::native::testing {
namespace {

namespace fs = std::filesystem;
using ::thund::testing::ReadAll;
using ::thund::testing::Spawn;

class ObjectStorageTest : public BatchFixture {
 protected:
  static void SetUpTestSuite() {
    auto started = ::thund::testing::S3Server::Start();
    if (!started.ok()) {
      start_error_ = started.status().ToString();
      return;
    }
    server_ = std::move(*started);
    arrow::Status made = server_->CreateBucket("data");
    if (!made.ok()) start_error_ = made.ToString();
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    BatchFixture::SetUp();
    ASSERT_TRUE(start_error_.empty()) << start_error_;
    // Arrow's S3 filesystem on the server, made here (not through thund;
    // resolving a location once only initializes Arrow's S3 support the way
    // the process then shuts it down at exit).
    ASSERT_TRUE(engine::ResolveLocation("s3://data").ok());
    auto opts = arrow::fs::S3Options::FromAccessKey("testing", "testing");
    opts.endpoint_override = "127.0.0.1:" + std::to_string(server_->port());
    opts.scheme = "http";
    opts.region = "us-east-1";
    auto made = arrow::fs::S3FileSystem::Make(opts);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    s3_ = *made;
  }

  void Put(const std::string& key, const std::string& content) {
    auto out = s3_->OpenOutputStream("data/" + key);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_TRUE((*out)->Write(content).ok());
    ASSERT_TRUE((*out)->Close().ok());
  }

  // Copies every object under data/`prefix` to a fresh local directory.
  std::string Mirror(const std::string& prefix) {
    const std::string local = Path("mirror-" + std::to_string(mirrors_++));
    arrow::fs::FileSelector sel;
    sel.base_dir = "data/" + prefix;
    sel.recursive = true;
    auto infos = s3_->GetFileInfo(sel);
    EXPECT_TRUE(infos.ok()) << infos.status().ToString();
    if (!infos.ok()) return local;
    for (const auto& info : *infos) {
      if (info.type() != arrow::fs::FileType::File) continue;
      const fs::path to = fs::path(local) / info.path().substr(sel.base_dir.size() + 1);
      fs::create_directories(to.parent_path());
      auto in = s3_->OpenInputStream(info.path());
      EXPECT_TRUE(in.ok());
      auto bytes = (*in)->Read(info.size());
      EXPECT_TRUE(bytes.ok());
      std::ofstream(to, std::ios::binary)
          .write(reinterpret_cast<const char*>((*bytes)->data()), (*bytes)->size());
    }
    return local;
  }

  // The version `_current` names in a local root (or a mirrored one).
  static std::string CurrentVersionOf(const std::string& root, const std::string& dataset) {
    std::string version = ReadAll(root + "/" + dataset + "/_current");
    while (!version.empty() && version.back() == '\n') version.pop_back();
    EXPECT_FALSE(version.empty()) << root << "/" << dataset << " has no _current";
    return version;
  }
  // A dataset of a local root (or a mirrored one) at that version.
  std::shared_ptr<arrow::Table> Committed(const std::string& root, const std::string& dataset) {
    return Oracle("SELECT * FROM read_parquet('" + root + "/" + dataset + "/" +
                  CurrentVersionOf(root, dataset) + "/*.parquet')");
  }

  void ExpectEqual(const std::shared_ptr<arrow::Table>& a, const std::shared_ptr<arrow::Table>& b,
                   const std::string& what) {
    ASSERT_NE(a, nullptr) << what;
    ASSERT_NE(b, nullptr) << what;
    EXPECT_GT(a->num_rows(), 0) << what;
    EXPECT_TRUE(::thund::engine::testing::TablesEqualUnordered(*a, *b, /*check_types=*/false))
        << what << ": " << a->num_rows() << " vs " << b->num_rows() << " rows";
  }

  static std::unique_ptr<::thund::testing::S3Server> server_;
  static std::string start_error_;
  std::shared_ptr<arrow::fs::FileSystem> s3_;
  int mirrors_ = 0;
};

std::unique_ptr<::thund::testing::S3Server> ObjectStorageTest::server_;
std::string ObjectStorageTest::start_error_;

constexpr const char* kBatchSql = R"sql(
CREATE MATERIALIZED VIEW orders AS SELECT * FROM read_csv('s3://data/in/orders-*.csv');
CREATE MATERIALIZED VIEW first_file AS SELECT * FROM csv.`s3a://data/in/orders-1.csv`;
CREATE MATERIALIZED VIEW per_customer AS
SELECT customer, count(*) AS n, sum(amount) AS total FROM orders GROUP BY customer;
CREATE SINK per_customer_out USING parquet LOCATION '{out}/per_customer';
CREATE FLOW to_out AS INSERT INTO per_customer_out BY NAME SELECT * FROM per_customer;
)sql";

// A batch pipeline stored on S3, reading S3 inputs (s3:// and Hadoop's
// s3a:// spelling) and writing an S3 sink: the same rows as on a local root,
// the aggregate as DuckDB computes it from the input files, and a second
// run finds everything up to date.
TEST_F(ObjectStorageTest, ABatchPipelineOnAnS3RootReadsS3InputsAndReconciles) {
  Put("in/orders-1.csv", "id,customer,amount\n1,ann,10\n2,bob,20\n3,ann,5\n");
  Put("in/orders-2.csv", "id,customer,amount\n4,cy,7\n5,bob,1\n");
  auto pipeline = [&](const std::string& out) {
    std::string sql = kBatchSql;
    sql.replace(sql.find("{out}"), 5, out);
    return ParsePipeline(sql);
  };
  RunOptions local;
  local.storage_root = Path("local");
  RunSummary l = Run(pipeline(Path("local-out")), local);
  ASSERT_EQ(l.status, RunPhase::kCompleted) << l.ToString();
  RunOptions remote;
  remote.storage_root = "s3://data/batch";
  RunSummary r = Run(pipeline("s3://data/batch-out"), remote);
  ASSERT_EQ(r.status, RunPhase::kCompleted) << r.ToString();
  const std::string mirror = Mirror("batch");
  for (const std::string d : {"orders", "first_file", "per_customer"}) {
    ExpectEqual(Committed(Path("local"), d), Committed(mirror, d), d);
  }
  const std::string inputs = Mirror("in");
  ExpectEqual(Committed(mirror, "per_customer"),
              Oracle("SELECT customer, count(*) AS n, sum(amount) AS total FROM read_csv('" +
                     inputs + "/orders-*.csv') GROUP BY customer"),
              "per_customer against the input files");
  const std::string out = Mirror("batch-out");
  ExpectEqual(Oracle("SELECT * FROM read_parquet('" + out + "/per_customer/*.parquet')"),
              Committed(Path("local"), "per_customer"), "the S3 sink");
  RunSummary again = Run(pipeline("s3://data/batch-out"), remote);
  ASSERT_EQ(again.status, RunPhase::kCompleted) << again.ToString();
  for (const auto& d : again.datasets) {
    if (d.dataset == "per_customer_out") continue;  // sinks are written again
    EXPECT_EQ(d.status, DatasetStatus::kUpToDate) << d.dataset << ": " << d.reason;
  }
}

constexpr const char* kStreamSql = R"sql(
CREATE PIPELINE ck_s3;
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(kind => 'keyed_events',
  seed => 5, rows_per_batch => 500, total_rows => 12000, keys => 60, events_per_second => 1000);
CREATE STREAMING TABLE drops (id BIGINT, name STRING, amount BIGINT)
AS SELECT * FROM STREAM read_files('s3://data/drop/', format => 'csv', max_files_per_trigger => 1);
CREATE STREAMING TABLE per_window WITH (mode = 'incremental', watermark = 'event_time',
  allowed_lateness = '1 second') AS
SELECT window.start AS ws, key, count(*) AS n, sum(value) AS total
FROM STREAM(ev) GROUP BY window(event_time, '2 seconds'), key;
CREATE SINK raw USING parquet LOCATION '{out}/raw';
CREATE FLOW to_raw WITH (mode = 'incremental') AS
INSERT INTO raw BY NAME SELECT key, value, seq FROM STREAM(ev);
CREATE SINK even USING csv LOCATION '{out}/even';
CREATE FLOW to_even WITH (mode = 'incremental') AS
INSERT INTO even BY NAME SELECT key, value FROM STREAM(ev) WHERE value % 2 = 0;
CREATE SINK per_key USING parquet LOCATION '{out}/per_key'
  WITH (write_mode = 'merge', merge_keys = (key));
CREATE FLOW to_per_key WITH (mode = 'incremental', output_mode = 'update') AS
INSERT INTO per_key BY NAME SELECT key, count(*) AS n, max(value) AS top FROM STREAM(ev)
GROUP BY key;
)sql";

// A streaming pipeline entirely on S3 — storage root, checkpoints (the
// default under the root), a file drop, Parquet and CSV file sinks and a
// merge sink — killed at random points and resumed until it completes:
// every dataset and sink equals one uninterrupted run on local disk.
TEST_F(ObjectStorageTest, AStreamingPipelineOnS3SurvivesKillsAndEqualsALocalRun) {
  for (int i = 0; i < 6; ++i) {
    std::string csv = "id,name,amount\n";
    for (int j = 0; j < 20; ++j) {
      csv += std::to_string(i * 100 + j) + ",n" + std::to_string(j % 7) + "," +
             std::to_string((i * 31 + j * 17) % 50) + "\n";
    }
    Put("drop/part-" + std::to_string(i) + ".csv", csv);
  }
  auto sql_file = [&](const std::string& name, const std::string& out) {
    std::string sql = kStreamSql;
    size_t at;
    while ((at = sql.find("{out}")) != std::string::npos) sql.replace(at, 5, out);
    const std::string path = Path(name + ".sql");
    std::ofstream(path) << sql;
    return path;
  };
  const std::string thund = THUND_BINARY;
  const std::string local_sql = sql_file("local", Path("local-out"));
  auto ref = ::thund::testing::RunCommand(thund + " run " + local_sql + " --storage " +
                                          Path("local"));
  ASSERT_EQ(ref.exit_code, 0) << ref.out << ref.err;

  const std::string s3_sql = sql_file("s3", "s3://data/stream-out");
  std::mt19937 rng(20261202);
  int landed = 0, resumed = 0;
  for (int kill = 0; kill < 6; ++kill) {
    const std::string log = Path("kill-" + std::to_string(kill) + ".log");
    pid_t pid = Spawn({thund, "run", s3_sql, "--storage", "s3://data/stream", "--events", "json"},
                      log);
    ASSERT_GT(pid, 0);
    // Kill points follow the run, not the clock (sanitizer builds are several
    // times slower): the first kill lands before any epoch, the others a random
    // 0-400 ms after this run's first committed epoch (so the next run resumes).
    int status = 0;
    bool exited = false;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (kill > 0 && std::chrono::steady_clock::now() < give_up &&
           ReadAll(log).find("\"event\":\"checkpoint\"") == std::string::npos) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!exited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kill == 0 ? 50 : rng() % 400));
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    resumed += ReadAll(log).find("resumed from epoch") != std::string::npos;
    if (WIFSIGNALED(status)) {
      ++landed;
    } else {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadAll(log);
    }
  }
  EXPECT_GT(landed, 0) << "no kill landed: the runs ended before them";
  EXPECT_GT(resumed, 0) << "no run resumed from an epoch: the kills came too early";
  std::cout << "[ kills    ] " << landed << " of 6 landed, " << resumed
            << " runs resumed from an epoch\n";
  auto done = ::thund::testing::RunCommand(thund + " run " + s3_sql +
                                           " --storage s3://data/stream");
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;

  // The CLI reads an S3 root as it reads a local one.
  auto runs = ::thund::testing::RunCommand(thund + " runs " + s3_sql +
                                           " --storage s3://data/stream --format csv");
  ASSERT_EQ(runs.exit_code, 0) << runs.out << runs.err;
  EXPECT_NE(runs.out.find("\"completed\""), std::string::npos) << runs.out;
  auto count = ::thund::testing::RunCommand(
      thund + " query " + s3_sql + " --storage s3://data/stream --format csv " +
      ::thund::testing::ShellQuote("SELECT count(*) AS n FROM per_window"));
  ASSERT_EQ(count.exit_code, 0) << count.out << count.err;
  const std::string root = Mirror("stream");
  EXPECT_NE(count.out.find("\n" + std::to_string(Committed(root, "per_window")->num_rows())),
            std::string::npos)
      << count.out;
  for (const std::string d : {"ev", "drops", "per_window"}) {
    ExpectEqual(Committed(Path("local"), d), Committed(root, d), d);
  }
  const std::string out = Mirror("stream-out");
  const std::string local_out = Path("local-out");
  ExpectEqual(Oracle("SELECT * FROM read_parquet('" + out + "/raw/*.parquet')"),
              Oracle("SELECT * FROM read_parquet('" + local_out + "/raw/*.parquet')"), "raw");
  ExpectEqual(Oracle("SELECT * FROM read_csv('" + out + "/even/*.csv')"),
              Oracle("SELECT * FROM read_csv('" + local_out + "/even/*.csv')"), "even");
  ExpectEqual(Committed(out, "per_key"), Committed(local_out, "per_key"), "per_key");
  // The merge sink against its batch query over the generated events.
  ExpectEqual(Committed(out, "per_key"),
              Oracle("SELECT key, count(*) AS n, max(value) AS top FROM read_parquet('" + root +
                     "/ev/" + CurrentVersionOf(root, "ev") + "/*.parquet') GROUP BY key"),
              "per_key against its query");
}

// A single-object sink on S3 is replaced only by a complete write: a run
// whose query fails keeps the object of the run before (its upload is
// abandoned, not completed or deleted).
TEST_F(ObjectStorageTest, AFailedWriteOfAnS3ObjectSinkKeepsThePreviousObject) {
  auto pipeline = [&](const std::string& query) {
    Pipeline p = ParsePipeline("CREATE MATERIALIZED VIEW src AS SELECT 1 AS x;");
    Dataset sink = Dataset::Sink("one");
    sink.storage = {FileFormat::kParquet, "s3://data/sinks/one.parquet", WriteMode::kOverwrite,
                    {}, {}, {}};
    p.Add(sink);
    p.Add(Flow("to_one", "one", query));
    return p;
  };
  RunOptions o;
  o.storage_root = Path("overwrite");
  RunSummary good = Run(pipeline("SELECT id, id * 2 AS v FROM range(5)"), o);
  ASSERT_EQ(good.status, RunPhase::kCompleted) << good.ToString();
  RunSummary bad = Run(
      pipeline("SELECT id, CAST(CASE WHEN id < 900000 THEN '1' ELSE 'x' END AS INT) AS v"
               " FROM range(1000000)"),
      o);
  const DatasetOutcome* one = Find(bad, "one");
  ASSERT_NE(one, nullptr) << bad.ToString();
  EXPECT_EQ(one->status, DatasetStatus::kFailed) << bad.ToString();
  const std::string out = Mirror("sinks");
  ExpectEqual(Oracle("SELECT * FROM read_parquet('" + out + "/one.parquet')"),
              Oracle("SELECT range AS id, range * 2 AS v FROM range(5)"), "the previous object");
}

// What S3 does not take is refused with the reason; a missing bucket is
// named, with what to do.
TEST_F(ObjectStorageTest, AMissingBucketAndAKeyedS3SinkAreClearErrors) {
  RunOptions o;
  o.storage_root = "s3://no-such-bucket/root";
  auto missing = TryRun(ParsePipeline("CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;"), o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("bucket 'no-such-bucket' does not exist"),
            std::string::npos)
      << missing.status().ToString();
  RunOptions local;
  local.storage_root = Path("keyed");
  RunSummary keyed = Run(ParsePipeline(
                             "CREATE MATERIALIZED VIEW src AS SELECT range AS id FROM range(5);\n"
                             "CREATE SINK k USING parquet LOCATION 's3://data/keyed'\n"
                             "  WITH (keyed_write.keys = (id));\n"
                             "CREATE FLOW f AS INSERT INTO k BY NAME SELECT id FROM src;"),
                         local);
  const DatasetOutcome* k = Find(keyed, "k");
  ASSERT_NE(k, nullptr) << keyed.ToString();
  EXPECT_EQ(k->status, DatasetStatus::kFailed) << keyed.ToString();
  EXPECT_NE(k->reason.find("write the keyed sink to a local directory"), std::string::npos)
      << k->reason;
}

}  // namespace
}  // namespace thund::native::testing
