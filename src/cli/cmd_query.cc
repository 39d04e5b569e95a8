// thund query PATH "SELECT ...": ad-hoc SQL over the stored datasets.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "backend/native/native_backend.h"
#include "backend/native/stored_catalog.h"
#include "cli/commands.h"
#include "cli/loaded.h"
#include "cli/spark_cli.h"
#include "engine/batch/query_output.h"
#include "thund/sql_dialect.h"

namespace thund::cli {
namespace {

struct QueryOptions {
  std::string path;
  std::string sql;
  std::string storage;
  std::string format = "table";
  std::string output;
  std::string backend = "native";
  SparkCliOptions spark;
};

int RunQuery(const QueryOptions& o) {
  // On Spark the SQL is Spark's own and runs there, over what Spark stored.
  if (o.backend == "spark") return PrintSparkQuery(o.spark, o.sql, o.format, o.output);
  auto format = engine::batch::ParseOutputFormat(o.format);
  if (!format.ok()) {
    std::cerr << "error: " << format.status().message() << "\n";
    return kUsage;
  }
  Loaded l = LoadAndValidate(o.path);
  if (!l.parsed) {
    PrintDiagnosticsHuman(l, std::cerr);
    return kFailed;
  }
  auto catalog = native::OpenStoredCatalog(&l.pipeline,
                                           native::ResolveStorageRoot(l.pipeline, o.storage));
  if (!catalog.ok()) {
    std::cerr << "error: " << catalog.status().message() << "\n";
    return kFailed;
  }
  auto sql = SparkToDuckDb(o.sql);
  if (!sql.ok()) {
    std::cerr << "error: " << sql.status().message() << "\n";
    return kFailed;
  }
  std::string text = *sql;
  while (!text.empty() && (text.back() == ';' || std::isspace(static_cast<unsigned char>(text.back())))) {
    text.pop_back();
  }
  arrow::Status st =
      engine::batch::WriteQueryResult(*catalog->session, text, *format, std::cout, o.output);
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    std::cerr << "readable datasets:";
    for (const auto& name : catalog->bound) std::cerr << " " << name;
    std::cerr << "\n";
    return kFailed;
  }
  return kOk;
}

}  // namespace

void RegisterQuery(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<QueryOptions>();
  auto* c = app.add_subcommand("query", "Run ad-hoc SQL over a pipeline's stored datasets.");
  c->add_option("PATH", o->path, "pipeline file, .sql file or SDP project")->required();
  c->add_option("SQL", o->sql, "one SELECT; datasets are read by name")->required();
  c->add_option("--storage", o->storage, "storage root (default: the pipeline's)");
  c->add_option("--format", o->format, "table, csv, json or parquet")
      ->check(CLI::IsMember({"table", "csv", "json", "parquet"}));
  c->add_option("--output,-o", o->output, "write to this file instead of standard output");
  c->add_option("--backend", o->backend,
                "where the datasets are: native, or spark (the SQL runs on Spark; --remote)")
      ->check(CLI::IsMember({"native", "spark"}));
  AddSparkOptions(c, &o->spark, /*with_storage=*/false);
  c->callback([o, exit_code] { *exit_code = RunQuery(*o); });
}

}  // namespace thund::cli
