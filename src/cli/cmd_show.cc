// thund show DATASET [PATH]: print or export a dataset's current content.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "backend/native/native_backend.h"
#include "backend/native/stored_catalog.h"
#include "cli/commands.h"
#include "cli/loaded.h"
#include "cli/spark_cli.h"
#include "engine/batch/query_output.h"
#include "engine/duckdb/sql_quote.h"

namespace thund::cli {
namespace {

struct ShowOptions {
  std::string dataset;
  std::string path;
  std::string storage;
  int64_t limit = -1;  // -1: 20 for table output, all rows otherwise
  std::string format = "table";
  std::string output;
  std::string backend = "native";
  SparkCliOptions spark;
};

int RunShow(const ShowOptions& o) {
  if (o.backend == "spark") {
    // The dataset as Spark stores it, read through Spark Connect (Arrow).
    // With PATH, the dataset is in the pipeline's schema (and catalog).
    std::string name = o.dataset;
    if (!o.path.empty()) {
      Loaded l = LoadAndValidate(o.path, CheckBackend::kSpark);
      if (!l.parsed) {
        PrintDiagnosticsHuman(l, std::cerr);
        return kFailed;
      }
      if (!l.pipeline.database.empty()) name = l.pipeline.database + "." + name;
      if (!l.pipeline.catalog.empty()) name = l.pipeline.catalog + "." + name;
    }
    std::string sql = "SELECT * FROM " + spark::BackQuotedName(name);
    const int64_t limit = o.limit >= 0 ? o.limit : (o.format == "table" ? 20 : -1);
    if (limit >= 0) sql += " LIMIT " + std::to_string(limit);
    return PrintSparkQuery(o.spark, sql, o.format, o.output);
  }
  if (o.path.empty() && o.storage.empty()) {
    std::cerr << "error: give the pipeline PATH or --storage DIR to say where the data is\n";
    return kUsage;
  }
  auto format = engine::batch::ParseOutputFormat(o.format);
  if (!format.ok()) {
    std::cerr << "error: " << format.status().message() << "\n";
    return kUsage;
  }
  std::unique_ptr<Loaded> loaded;
  if (!o.path.empty()) {
    loaded = std::make_unique<Loaded>(LoadAndValidate(o.path));
    if (!loaded->parsed) {
      PrintDiagnosticsHuman(*loaded, std::cerr);
      return kFailed;
    }
  }
  const Pipeline* p = loaded ? &loaded->pipeline : nullptr;
  const Dataset* d = p ? p->FindDataset(o.dataset) : nullptr;
  if (d && d->kind == DatasetKind::kSink) {
    std::cerr << "error: '" << o.dataset << "' is a sink: its rows are in the files it writes ("
              << (d->storage.location.empty() ? "see docs/storage.md" : d->storage.location)
              << ")\n";
    return kFailed;
  }
  auto catalog = native::OpenStoredCatalog(
      p, p ? native::ResolveStorageRoot(*p, o.storage) : o.storage);
  if (!catalog.ok()) {
    std::cerr << "error: " << catalog.status().message() << "\n";
    return kFailed;
  }
  bool found = false;
  for (const auto& name : catalog->bound) found = found || name == o.dataset;
  if (!found) {
    std::cerr << "error: dataset '" << o.dataset << "' has no committed data under "
              << catalog->layout.root();
    for (const auto& m : catalog->missing) {
      if (m.rfind(o.dataset + ":", 0) == 0) std::cerr << " (" << m.substr(o.dataset.size() + 2) << ")";
    }
    std::cerr << "; readable datasets:";
    for (const auto& name : catalog->bound) std::cerr << " " << name;
    std::cerr << "\n";
    return kFailed;
  }
  int64_t limit = o.limit >= 0 ? o.limit : (*format == engine::batch::OutputFormat::kTable ? 20 : -1);
  std::string sql = "SELECT * FROM " + engine::QuoteIdentifier(o.dataset);
  if (limit >= 0) sql += " LIMIT " + std::to_string(limit);
  arrow::Status st =
      engine::batch::WriteQueryResult(*catalog->session, sql, *format, std::cout, o.output);
  if (!st.ok()) {
    std::cerr << "error: dataset '" << o.dataset << "': " << st.message() << "\n";
    return kFailed;
  }
  return kOk;
}

}  // namespace

void RegisterShow(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ShowOptions>();
  auto* c = app.add_subcommand("show", "Print or export the current content of a dataset.");
  c->add_option("DATASET", o->dataset, "dataset name")->required();
  c->add_option("PATH", o->path, "pipeline file, .sql file or SDP project");
  c->add_option("--storage", o->storage, "storage root (default: the pipeline's)");
  c->add_option("--limit", o->limit, "at most N rows (default 20 for table output, else all)");
  c->add_option("--format", o->format, "table, csv, json or parquet")
      ->check(CLI::IsMember({"table", "csv", "json", "parquet"}));
  c->add_option("--output,-o", o->output, "write to this file instead of standard output");
  c->add_option("--backend", o->backend, "where the dataset is: native or spark (--remote)")
      ->check(CLI::IsMember({"native", "spark"}));
  AddSparkOptions(c, &o->spark, /*with_storage=*/false);
  c->callback([o, exit_code] { *exit_code = RunShow(*o); });
}

}  // namespace thund::cli
