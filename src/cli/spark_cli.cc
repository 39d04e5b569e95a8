#include "cli/spark_cli.h"

#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "engine/batch/query_output.h"
#include "engine/duckdb/duckdb_session.h"

namespace thund::cli {

void AddSparkOptions(CLI::App* c, SparkCliOptions* o, bool with_storage) {
  c->add_option("--remote", o->remote,
                "Spark Connect server, sc://host:port (default: $SPARK_REMOTE, else "
                "sc://127.0.0.1:15002)");
  c->add_option("--spark-version", o->version, "the Spark version to lower for")
      ->check(CLI::IsMember(spark::SparkVersionNames()));
  if (with_storage) {
    c->add_option("--spark-storage", o->storage,
                  "where Spark keeps streaming checkpoints, a path or URI the cluster can "
                  "write (default: <storage>/spark)");
  }
}

spark::SparkBackendOptions BackendOptions(const SparkCliOptions& o) {
  spark::SparkBackendOptions b;
  if (!o.remote.empty()) {
    b.remote = o.remote;
  } else if (const char* env = std::getenv("SPARK_REMOTE"); env && *env) {
    b.remote = env;
  }
  b.version = spark::ParseSparkVersion(o.version).value_or(spark::kDefaultSparkVersion);
  b.storage = o.storage;
  return b;
}

Diagnostics SparkCheckDiagnostics(const Pipeline& p, const SparkCliOptions& o) {
  const auto b = BackendOptions(o);
  spark::SparkLowering l = spark::LowerToSpark(p, {b.version, b.storage});
  Diagnostics out = l.diagnostics;
  for (const auto& r : l.project.report) {
    Diagnostic d;
    d.severity = Severity::kNote;
    d.code = "spark-report";
    d.flow = r.flow;
    d.dataset = r.dataset;
    d.message = "on Spark: " + spark::ReportLine(r);
    if (const Flow* f = p.FindFlow(r.flow)) {
      d.location = f->location;
    } else if (const Dataset* ds = p.FindDataset(r.dataset)) {
      d.location = ds->location;
    }
    out.push_back(std::move(d));
  }
  return out;
}

int PrintSparkQuery(const SparkCliOptions& o, const std::string& spark_sql,
                    const std::string& format_name, const std::string& output) {
  auto format = engine::batch::ParseOutputFormat(format_name);
  if (!format.ok()) {
    std::cerr << "error: " << format.status().message() << "\n";
    return kUsage;
  }
  auto remote = spark::ParseSparkRemote(BackendOptions(o).remote);
  if (!remote.ok()) {
    std::cerr << "error: " << remote.status().message() << "\n";
    return kUsage;
  }
  auto client = spark::SparkConnectClient::Connect(*remote);
  if (!client.ok()) {
    std::cerr << "error: " << client.status().message() << "\n";
    return kFailed;
  }
  auto table = (*client)->Query(spark_sql);
  if (!table.ok()) {
    std::cerr << "error: " << table.status().message() << "\n";
    return kFailed;
  }
  // The rows Spark sent (Arrow), printed by the same writer as native results.
  auto session = engine::DuckDbSession::Open();
  arrow::Status st = session.ok() ? (*session)->RegisterArrow("__spark_result", *table)
                                  : session.status();
  if (st.ok()) {
    st = engine::batch::WriteQueryResult(**session, "SELECT * FROM __spark_result", *format,
                                         std::cout, output);
  }
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return kFailed;
  }
  return kOk;
}

}  // namespace thund::cli
