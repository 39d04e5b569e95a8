// Checkpoints on object storage: a streaming run whose state root is
// s3://bucket/prefix on a real S3-compatible server (moto, started by the
// test on loopback) resumes across runs exactly like a local one, falls back
// from a damaged epoch, and keeps one run at a time with its lock object.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "batch_fixture.h"
#include "engine/fs/atomic_write.h"
#include "engine/fs/filesystem_uri.h"
#include "testing/s3_server.h"

namespace thund::native::testing {
namespace {

constexpr const char* kSql = R"sql(
SET thund.state_root = '{root}';
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid',
  seed => 11, rows_per_batch => 2000, total_rows => 24000, events_per_second => 2000,
  out_of_orderness => '1s');
CREATE STREAMING TABLE auctions AS SELECT * FROM STREAM read_generator(
  kind => 'nexmark_auction', seed => 11, rows_per_batch => 2000, total_rows => 24000,
  events_per_second => 2000, out_of_orderness => '1s');
CREATE STREAMING TABLE per_window WITH (mode = 'incremental') AS
SELECT window_start, auction, count(*) AS n, max(price) AS top
FROM TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECONDS)
WATERMARK date_time DELAY OF INTERVAL 1 SECONDS GROUP BY window_start, auction;
CREATE STREAMING TABLE early WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '1 second') AS
SELECT a.id, b.bidder, b.price FROM STREAM(auctions) AS a JOIN STREAM(bids) AS b
  ON a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.date_time + INTERVAL 2 SECONDS;
)sql";

class CheckpointS3Test : public BatchFixture {
 protected:
  static void SetUpTestSuite() {
    auto started = ::thund::testing::S3Server::Start();
    if (started.ok()) {
      server_ = std::move(*started);
      start_error_ = server_->CreateBucket("thund-ck").ToString();
      if (start_error_ == "OK") start_error_.clear();
    } else {
      start_error_ = started.status().ToString();
    }
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    BatchFixture::SetUp();
    ASSERT_TRUE(start_error_.empty()) << start_error_;
  }

  Pipeline Make(const std::string& root) const {
    std::string sql = kSql;
    sql.replace(sql.find("{root}"), 6, root);
    return ParsePipeline(sql);
  }
  RunSummary RunIn(const std::string& root, const std::string& store, int64_t triggers,
                   std::vector<RunEvent>* events = nullptr) {
    RunOptions o;
    o.storage_root = store;
    o.max_triggers = triggers;
    if (events) o.on_event = [events](const RunEvent& e) { events->push_back(e); };
    return Run(Make(root), o);
  }
  std::shared_ptr<arrow::Table> Read(const std::string& store, const std::string& dataset) {
    return Oracle("SELECT * FROM read_parquet('" + store + "/" + dataset + "/current/*.parquet')");
  }
  void ExpectSame(const std::string& a, const std::string& b) {
    for (const std::string d : {"per_window", "early"}) {
      SCOPED_TRACE(d);
      EXPECT_TRUE(::thund::engine::testing::TablesEqualUnordered(*Read(a, d), *Read(b, d),
                                                                 /*check_types=*/true));
    }
  }
  static bool Saw(const std::vector<RunEvent>& events, const std::string& text) {
    for (const auto& e : events) {
      if (e.kind == RunEvent::Kind::kRecovery && e.message.find(text) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  static std::unique_ptr<::thund::testing::S3Server> server_;
  static std::string start_error_;
};

std::unique_ptr<::thund::testing::S3Server> CheckpointS3Test::server_;
std::string CheckpointS3Test::start_error_;

TEST_F(CheckpointS3Test, RunsInPiecesOnS3EqualOneLocalRun) {
  RunSummary local = RunIn(Path("local-state"), Path("local"), 0);
  ASSERT_EQ(local.status, RunPhase::kCompleted) << local.ToString();
  std::vector<RunEvent> events;
  for (int run = 0; run < 5; ++run) {
    RunSummary s = RunIn("s3://thund-ck/pieces", Path("pieces"), 3, &events);
    ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  }
  EXPECT_TRUE(Saw(events, "resumed from epoch"));
  ExpectSame(Path("local"), Path("pieces"));
  // The epochs are objects under the prefix, with the pointer written last.
  auto loc = engine::ResolveLocation("s3://thund-ck/pieces/s");
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  auto latest = engine::ReadWholeFile(*loc->fs, loc->path + "/_latest");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->rfind("epoch=", 0), 0u) << *latest;
  // No lock object is left behind by a run that finished.
  auto lock = loc->fs->GetFileInfo(loc->path + "/_lock");
  ASSERT_TRUE(lock.ok());
  EXPECT_EQ(lock->type(), arrow::fs::FileType::NotFound);
}

TEST_F(CheckpointS3Test, ADamagedEpochOnS3FallsBackToTheOneBefore) {
  RunSummary local = RunIn(Path("local-state"), Path("local"), 0);
  ASSERT_EQ(local.status, RunPhase::kCompleted);
  ASSERT_EQ(RunIn("s3://thund-ck/damaged", Path("damaged"), 4).status, RunPhase::kCompleted);
  auto loc = engine::ResolveLocation("s3://thund-ck/damaged/s");
  ASSERT_TRUE(loc.ok());
  auto latest = engine::ReadWholeFile(*loc->fs, loc->path + "/_latest");
  ASSERT_TRUE(latest.ok());
  std::string epoch = *latest;
  while (!epoch.empty() && epoch.back() == '\n') epoch.pop_back();
  // Cut the newest manifest in half, as a torn upload through a proxy would.
  const std::string manifest = loc->path + "/" + epoch + "/_manifest.json";
  auto text = engine::ReadWholeFile(*loc->fs, manifest);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(engine::WriteFileAtomically(*loc->fs, manifest, text->substr(0, text->size() / 2))
                  .ok());
  std::vector<RunEvent> events;
  RunSummary resumed = RunIn("s3://thund-ck/damaged", Path("damaged"), 0, &events);
  ASSERT_EQ(resumed.status, RunPhase::kCompleted) << resumed.ToString();
  EXPECT_TRUE(Saw(events, "is damaged")) << resumed.ToString();
  ExpectSame(Path("local"), Path("damaged"));
}

TEST_F(CheckpointS3Test, ALiveLockIsRefusedAndADeadHoldersIsTakenOver) {
  auto loc = engine::ResolveLocation("s3://thund-ck/locked/s");
  ASSERT_TRUE(loc.ok());
  auto put = [&](int64_t pid, int64_t heartbeat_ms) {
    const std::string text = "{\"run_id\": \"other-run\", \"pid\": " + std::to_string(pid) +
                             ", \"host\": \"elsewhere\", \"heartbeat_ms\": " +
                             std::to_string(heartbeat_ms) + "}";
    ASSERT_TRUE(engine::WriteFileAtomically(*loc->fs, loc->path + "/_lock", text).ok());
  };
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  put(4242, now);  // another host, a fresh heartbeat: alive
  RunSummary refused = RunIn("s3://thund-ck/locked", Path("locked"), 1);
  EXPECT_EQ(refused.status, RunPhase::kFailed);
  EXPECT_NE(refused.ToString().find("in use by run other-run"), std::string::npos)
      << refused.ToString();
  put(4242, now - 10 * 60 * 1000);  // a heartbeat ten minutes old: gone
  std::vector<RunEvent> events;
  RunSummary taken = RunIn("s3://thund-ck/locked", Path("locked"), 1, &events);
  ASSERT_EQ(taken.status, RunPhase::kCompleted) << taken.ToString();
  EXPECT_TRUE(Saw(events, "took over the checkpoint lock of run other-run"));
}

}  // namespace
}  // namespace thund::native::testing
