#include "batch_fixture.h"

#include <arrow/filesystem/localfs.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "backend/native/native_backend.h"
#include "engine/duckdb/duckdb_session.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/fs/fault_injection_fs.h"
#include "thund/sql_pipeline.h"

namespace thund::native::testing {

void BatchFixture::WriteFile(const std::string& name, const std::string& content) {
  std::filesystem::path p = dir_.path() / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
}

RunSummary BatchFixture::Run(const Pipeline& p, RunOptions options) {
  auto summary = TryRun(p, std::move(options));
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  return summary.ok() ? *summary : RunSummary{};
}

BatchFixture::CountedRun BatchFixture::RunCountingWrites(const Pipeline& p) {
  auto probe = std::make_shared<engine::FaultInjectingFileSystem>(
      std::make_shared<arrow::fs::LocalFileSystem>());
  RunOptions o;
  o.native.filesystem = probe;
  CountedRun out;
  out.summary = Run(p, o);
  out.write_operations = probe->operations();
  return out;
}

int BatchFixture::RunWithRandomFaults(const Pipeline& given, int tries, uint32_t seed,
                                      const std::function<void()>& check) {
  // The faulted runs must make the same writes as the counted one: state
  // images must not switch to full images because a write was slow (the
  // time back-off), or a fault near the end is never reached under load.
  Pipeline p = given;
  p.configuration["thund.checkpoint.back_off_by_time"] = "false";
  std::filesystem::remove_all(root());
  const CountedRun counted = RunCountingWrites(p);
  EXPECT_EQ(counted.summary.status, RunPhase::kCompleted);
  const int64_t total = counted.write_operations;
  EXPECT_GT(total, 20);
  if (total <= 0) return 0;
  auto local = std::make_shared<arrow::fs::LocalFileSystem>();
  std::mt19937 rng(seed);
  int failed_runs = 0;
  for (int i = 0; i < tries; ++i) {
    const int64_t k = 1 + static_cast<int64_t>(rng() % total);
    SCOPED_TRACE("fault at write " + std::to_string(k) + " of " + std::to_string(total));
    std::filesystem::remove_all(root());
    auto faulty = std::make_shared<engine::FaultInjectingFileSystem>(local);
    faulty->FailAfter(k);
    RunOptions o;
    o.native.filesystem = faulty;
    auto broken = TryRun(p, o);
    EXPECT_TRUE(faulty->tripped());
    if (!broken.ok() || broken->status != RunPhase::kCompleted) ++failed_runs;
    // The rerun (no fault) resumes from what was committed.
    RunSummary again = Run(p);
    EXPECT_EQ(again.status, RunPhase::kCompleted) << again.ToString();
    check();
  }
  return failed_runs;
}

arrow::Result<RunSummary> BatchFixture::TryRun(const Pipeline& p, RunOptions options) {
  if (options.storage_root.empty()) options.storage_root = root();
  auto user = options.on_event;
  options.on_event = [this, user](const RunEvent& e) {
    events_.push_back(e);
    if (user) user(e);
  };
  auto backend = NativeBackend::Make();
  return backend->Run(p, options);
}

std::shared_ptr<arrow::Table> BatchFixture::ReadDataset(const std::string& dataset) const {
  const std::string glob = root() + "/" + dataset + "/current/*.parquet";
  if (!std::filesystem::exists(root() + "/" + dataset + "/current")) return nullptr;
  return Oracle("SELECT * FROM read_parquet(" + engine::QuoteString(glob) + ")");
}

std::shared_ptr<arrow::Table> BatchFixture::Oracle(const std::string& sql) const {
  if (!oracle_) {
    auto session = engine::DuckDbSession::Open();
    EXPECT_TRUE(session.ok());
    oracle_ = std::move(*session);
    // Tests rewrite files under the same paths within a second (a fresh store
    // per case); DuckDB's file cache would serve the old bytes.
    EXPECT_TRUE(oracle_->Execute("SET enable_external_file_cache = false").ok());
  }
  auto t = oracle_->Query(sql);
  EXPECT_TRUE(t.ok()) << sql << ": " << t.status().ToString();
  return t.ok() ? *t : nullptr;
}

std::string BatchFixture::CurrentVersion(const std::string& dataset) const {
  std::ifstream in(root() + "/" + dataset + "/_current");
  std::string v;
  in >> v;
  return v;
}

Pipeline BatchFixture::ParsePipeline(const std::string& sql) const {
  auto parsed = ParseSql(sql, "pipeline.sql");
  for (const auto& d : parsed.diagnostics) {
    EXPECT_NE(d.severity, Severity::kError) << d.ToString();
  }
  parsed.pipeline.name = "s";
  return parsed.pipeline;
}

const DatasetOutcome* BatchFixture::Find(const RunSummary& s, const std::string& dataset) {
  for (const auto& d : s.datasets) {
    if (d.dataset == dataset) return &d;
  }
  return nullptr;
}

}  // namespace thund::native::testing
