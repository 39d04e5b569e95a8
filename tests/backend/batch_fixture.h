// Shared fixture for native batch backend tests: a scratch directory with
// input files, runs of the NativeBackend, and an independent DuckDB oracle.
#pragma once

#include <functional>

#include <arrow/table.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/duckdb/duckdb_session.h"
#include "engine/table_compare.h"
#include "thund/backend.h"
#include "thund/ir.h"

namespace thund::native::testing {

class BatchFixture : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.File(name); }
  std::string root() const { return dir_.File("store"); }
  void WriteFile(const std::string& name, const std::string& content);

  // Runs `p` with the storage root set to root(); collects events.
  RunSummary Run(const Pipeline& p, RunOptions options = {});
  // Same, but a run that cannot start is returned, not a test failure.
  arrow::Result<RunSummary> TryRun(const Pipeline& p, RunOptions options = {});
  // Runs `p` on the local filesystem seen through a fault-injecting wrapper
  // that never fails: the run's summary and how many write operations it made
  // (the range a fault-injection test then picks from).
  struct CountedRun {
    RunSummary summary;
    int64_t write_operations = 0;
  };
  CountedRun RunCountingWrites(const Pipeline& p);
  // `tries` times: a run of `p` (on a fresh root) whose write number k fails,
  // k drawn from `seed` over the writes a clean run makes, then a clean rerun
  // that must complete, after which `check` asserts what it holds. Returns how
  // many faulty runs did not complete.
  int RunWithRandomFaults(const Pipeline& p, int tries, uint32_t seed,
                          const std::function<void()>& check);

  // The committed content of `dataset`, read by a fresh DuckDB through the
  // `current` symlink (the layout users read), or nullptr if none.
  std::shared_ptr<arrow::Table> ReadDataset(const std::string& dataset) const;
  // Rows of a query run by a fresh, independent DuckDB (the oracle).
  std::shared_ptr<arrow::Table> Oracle(const std::string& sql) const;
  // The version name `_current` points at ("" if none).
  std::string CurrentVersion(const std::string& dataset) const;

  // A pipeline named "s" from SQL text; parse errors fail the test.
  Pipeline ParsePipeline(const std::string& sql) const;

  static const DatasetOutcome* Find(const RunSummary& s, const std::string& dataset);

  engine::testing::TempDir dir_;
  // The oracle's own DuckDB (never the session of the code under test).
  mutable std::unique_ptr<engine::DuckDbSession> oracle_;
  std::vector<RunEvent> events_;
};

// Asserts that `dataset` holds exactly the rows of `oracle_sql` (any order,
// values compared as text so integer widths do not matter).
#define EXPECT_DATASET_MATCHES(dataset, oracle_sql)                                    \
  do {                                                                                 \
    auto _actual = ReadDataset(dataset);                                               \
    ASSERT_NE(_actual, nullptr) << "dataset " << dataset << " has no current version"; \
    auto _expected = Oracle(oracle_sql);                                               \
    EXPECT_TRUE(::thund::engine::testing::TablesEqualUnordered(*_expected, *_actual,   \
                                                               /*check_types=*/false)) \
        << "dataset " << dataset;                                                      \
  } while (0)

}  // namespace thund::native::testing
