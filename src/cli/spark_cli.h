// What the commands share for the Spark backend: the --remote,
// --spark-version and --spark-storage options, the lowering report as
// diagnostics, and printing a Spark query's rows.
#pragma once

#include <string>

#include "backend/spark/spark_backend.h"
#include "thund/diagnostic.h"

namespace CLI {
class App;
}

namespace thund::cli {

struct SparkCliOptions {
  std::string remote;   // "" = $SPARK_REMOTE, else sc://127.0.0.1:15002
  std::string version = spark::Name(spark::kDefaultSparkVersion);
  std::string storage;  // Spark's checkpoints root
};

// Adds --remote, --spark-version (4.1 | 4.2 | 4.3) and, when `with_storage`,
// --spark-storage to `c`.
void AddSparkOptions(CLI::App* c, SparkCliOptions* o, bool with_storage);
spark::SparkBackendOptions BackendOptions(const SparkCliOptions& o);

// The lowering of `p` for the chosen version: refusals (errors) and the
// report (one note per item, code "spark-report", located at its flow).
Diagnostics SparkCheckDiagnostics(const Pipeline& p, const SparkCliOptions& o);

// Runs `spark_sql` on the Spark Connect server and writes its rows as `thund
// query` does (format table | csv | json | parquet). Returns an exit code.
int PrintSparkQuery(const SparkCliOptions& o, const std::string& spark_sql,
                    const std::string& format, const std::string& output);

}  // namespace thund::cli
