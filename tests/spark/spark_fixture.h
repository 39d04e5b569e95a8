// Shared by the Spark tests: a fixture with the test Spark server's address,
// the thund CLI, scratch files, and a dataset's rows as either backend stored
// them (thund show; Spark's read back over Spark Connect as Arrow).
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>

#include "engine/duckdb/duckdb_session.h"
#include "engine/table_compare.h"
#include "testing/run_command.h"
#include "testing/spark_server.h"

namespace thund::testing {

inline void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline void WriteParquet(const std::filesystem::path& path,
                         const std::shared_ptr<arrow::Table>& t) {
  std::filesystem::create_directories(path.parent_path());
  auto out = arrow::io::FileOutputStream::Open(path.string());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE(parquet::arrow::WriteTable(*t, arrow::default_memory_pool(), *out, 1024).ok());
  ASSERT_TRUE((*out)->Close().ok());
}

inline arrow::Result<std::shared_ptr<arrow::Table>> ReadParquet(const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(auto in, arrow::io::ReadableFile::Open(path));
  ARROW_ASSIGN_OR_RAISE(auto reader, parquet::arrow::OpenFile(in, arrow::default_memory_pool()));
  return reader->ReadTable();
}

// Every Parquet file under `dir` (a sink's output), as one table, via DuckDB.
inline arrow::Result<std::shared_ptr<arrow::Table>> ReadParquetDir(const std::string& dir) {
  ARROW_ASSIGN_OR_RAISE(auto session, engine::DuckDbSession::Open());
  return session->Query("SELECT * FROM read_parquet('" + dir + "/**/*.parquet')");
}

// Sensor readings at `seconds` after 2026-01-01 UTC (a timestamp with a time
// zone: Spark's event time must be TIMESTAMP, not TIMESTAMP_NTZ).
inline std::shared_ptr<arrow::Table> Readings(const std::vector<int64_t>& seconds) {
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  arrow::StringBuilder sensor;
  arrow::Int64Builder value;
  const int64_t base = 1767225600LL * 1000000;  // 2026-01-01T00:00:00Z
  for (size_t i = 0; i < seconds.size(); ++i) {
    EXPECT_TRUE(ts.Append(base + seconds[i] * 1000000).ok());
    EXPECT_TRUE(sensor.Append(i % 3 == 0 ? "a" : "b").ok());
    EXPECT_TRUE(value.Append(static_cast<int64_t>(i * 7 % 11)).ok());
  }
  std::shared_ptr<arrow::Array> a, b, c;
  EXPECT_TRUE(ts.Finish(&a).ok() && sensor.Finish(&b).ok() && value.Finish(&c).ok());
  return arrow::Table::Make(
      arrow::schema({arrow::field("ts", a->type()), arrow::field("sensor", arrow::utf8()),
                     arrow::field("value", arrow::int64())}),
      {a, b, c});
}

class SparkFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto remote = SharedSparkRemote();
    ASSERT_TRUE(remote.ok()) << remote.status().ToString();
    remote_ = *remote;
  }

  CommandResult Thund(const std::string& args) const { return RunThund(args); }

  // The dataset as each backend stored it.
  std::shared_ptr<arrow::Table> Rows(const std::string& project, const std::string& dataset,
                                     bool spark) {
    const std::string file = (tmp_.path() / ("rows-" + std::to_string(reads_++) + ".parquet"));
    std::string args = "show " + dataset + " " + ShellQuote(project) + " --format parquet -o " +
                       ShellQuote(file);
    if (spark) args += " --backend spark --remote " + remote_;
    CommandResult r = Thund(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out << r.err;
    auto t = ReadParquet(file);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : nullptr;
  }

  // Every dataset has rows and the same rows on both sides (values, not
  // types: Spark infers int where DuckDB reads BIGINT).
  void ExpectSameDatasets(const std::string& native, const std::string& spark,
                          const std::vector<std::string>& datasets) {
    for (const auto& d : datasets) {
      SCOPED_TRACE("dataset " + d);
      auto a = Rows(native, d, false);
      auto b = Rows(spark, d, true);
      ASSERT_TRUE(a && b);
      EXPECT_GT(a->num_rows(), 0);
      EXPECT_TRUE(engine::testing::TablesEqualUnordered(*a, *b, /*check_types=*/false));
    }
  }

  // `spark-pipelines ARGS` of the pyspark package, in `dir`, on the test server.
  CommandResult StockCli(const std::string& dir, const std::string& args) const {
    const std::string venv = SparkVenv();
    return RunCommand("cd " + ShellQuote(dir) + " && env -u SPARK_HOME PATH=" +
                      ShellQuote(venv + "/bin") + ":$PATH " + venv + "/bin/spark-pipelines " +
                      args);
  }

  engine::testing::TempDir tmp_;
  std::string remote_;
  int reads_ = 0;
};

}  // namespace thund::testing
