// A fault at every write of the checkpoint commit sequence. A streaming run
// resumes from its first epoch and runs one trigger with a fault injected at
// its k-th write (through the one filesystem seam), for every k up to the
// number of writes that trigger makes: dataset versions, the file sink's
// epoch file, the merge sink's version, state files, manifests, pointers,
// retention.
// After a clean rerun, every output equals one uninterrupted run: no row lost,
// none twice.
#include <gtest/gtest.h>

#include <filesystem>

#include <arrow/filesystem/localfs.h>

#include "batch_fixture.h"
#include "engine/fs/fault_injection_fs.h"

namespace thund::native::testing {
namespace {

constexpr const char* kSql = R"sql(
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 5, rows_per_batch => 600, total_rows => 2400, events_per_second => 400,
  out_of_orderness => '1s');
CREATE STREAMING TABLE per_window WITH (mode = 'incremental') AS
SELECT window_start, auction, count(*) AS n, max(price) AS top
FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '1' SECONDS)
WATERMARK date_time DELAY OF INTERVAL 1 SECONDS GROUP BY window_start, auction;
CREATE STREAMING TABLE first_bid WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '1 second') AS
SELECT bidder, auction, price FROM (
  SELECT *, row_number() OVER (PARTITION BY bidder ORDER BY date_time) AS rn FROM STREAM(bids)
) AS ranked WHERE rn = 1;
CREATE SINK cheap_sink USING parquet;
CREATE FLOW cheap_flow WITH (mode = 'incremental') AS
INSERT INTO cheap_sink BY NAME SELECT auction, bidder, price FROM STREAM(bids) WHERE price < 300;
CREATE SINK totals_sink USING parquet WITH (write_mode = 'merge', merge_keys = (channel));
CREATE FLOW totals_flow WITH (mode = 'incremental', output_mode = 'update') AS
INSERT INTO totals_sink BY NAME
SELECT channel, count(*) AS n, sum(price) AS total FROM STREAM(bids) GROUP BY channel;
)sql";

class CheckpointFaultTest : public BatchFixture {
 protected:
  std::map<std::string, std::shared_ptr<arrow::Table>> Outputs(const std::string& store) {
    std::map<std::string, std::shared_ptr<arrow::Table>> out;
    auto read = [&](const std::string& glob) {
      return Oracle("SELECT * FROM read_parquet('" + glob + "')");
    };
    out["per_window"] = read(store + "/per_window/current/*.parquet");
    out["first_bid"] = read(store + "/first_bid/current/*.parquet");
    out["cheap_sink"] = read(store + "/_thund/sinks/cheap_sink/*.parquet");
    out["totals_sink"] = read(store + "/_thund/sinks/totals_sink/current/*.parquet");
    return out;
  }
};

TEST_F(CheckpointFaultTest, AFaultAtEveryWriteOfTheCommitSequenceLosesNothing) {
  const Pipeline p = ParsePipeline(kSql);
  const std::string clean = Path("clean"), base = Path("base");
  RunOptions o;
  o.storage_root = clean;
  ASSERT_EQ(Run(p, o).status, RunPhase::kCompleted);
  const auto want = Outputs(clean);
  // The state after the first epoch, which every faulty run resumes from.
  o.storage_root = base;
  o.max_triggers = 1;
  ASSERT_EQ(Run(p, o).status, RunPhase::kCompleted);
  // How many writes the second trigger makes.
  auto local = std::make_shared<arrow::fs::LocalFileSystem>();
  const std::string probe_root = Path("probe");
  std::filesystem::copy(base, probe_root, std::filesystem::copy_options::recursive |
                                                 std::filesystem::copy_options::copy_symlinks);
  auto probe = std::make_shared<engine::FaultInjectingFileSystem>(local);
  RunOptions counting;
  counting.storage_root = probe_root;
  counting.max_triggers = 1;
  counting.native.filesystem = probe;
  ASSERT_EQ(Run(p, counting).status, RunPhase::kCompleted);
  const int64_t total = probe->operations();
  ASSERT_GT(total, 30);
  int failed = 0;
  // Every write in release builds; under sanitizers (several times slower)
  // every 7th, so the suite stays within its time limit.
#if defined(__SANITIZE_ADDRESS__)
  const int64_t stride = 7;
#else
  const int64_t stride = 1;
#endif
  int64_t tried = 0;
  for (int64_t k = 1; k <= total; k += stride, ++tried) {
    SCOPED_TRACE("fault at write " + std::to_string(k) + " of " + std::to_string(total));
    const std::string store = Path("faulty");
    std::filesystem::remove_all(store);
    std::filesystem::copy(base, store, std::filesystem::copy_options::recursive |
                                                 std::filesystem::copy_options::copy_symlinks);
    auto faulty = std::make_shared<engine::FaultInjectingFileSystem>(local);
    faulty->FailAfter(k);
    RunOptions broken;
    broken.storage_root = store;
    broken.max_triggers = 1;
    broken.native.filesystem = faulty;
    auto s = TryRun(p, broken);
    failed += !s.ok() || s->status != RunPhase::kCompleted;
    RunOptions again;
    again.storage_root = store;
    RunSummary resumed = Run(p, again);
    ASSERT_EQ(resumed.status, RunPhase::kCompleted) << resumed.ToString();
    const auto got = Outputs(store);
    for (const auto& [name, table] : want) {
      SCOPED_TRACE(name);
      ASSERT_TRUE(::thund::engine::testing::TablesEqualUnordered(*table, *got.at(name),
                                                                 /*check_types=*/false));
    }
  }
  EXPECT_GT(failed, tried / 2);  // most faults fail the run they hit
}

}  // namespace
}  // namespace thund::native::testing
