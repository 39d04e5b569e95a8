// thund runs [PATH]: the run history kept under the storage root.
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "backend/native/native_backend.h"
#include "cli/commands.h"
#include "cli/loaded.h"
#include "engine/batch/query_output.h"
#include "engine/batch/run_history.h"
#include "engine/duckdb/duckdb_session.h"
#include "engine/duckdb/object_storage.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/fs/filesystem_uri.h"

namespace thund::cli {
namespace {

struct RunsOptions {
  std::string path;
  std::string storage;
  int64_t limit = 20;
  std::string format = "table";
};

int RunRuns(const RunsOptions& o) {
  if (o.path.empty() && o.storage.empty()) {
    std::cerr << "error: give the pipeline PATH or --storage DIR to say where the runs are\n";
    return kUsage;
  }
  auto format = engine::batch::ParseOutputFormat(o.format);
  if (!format.ok() || *format == engine::batch::OutputFormat::kParquet) {
    std::cerr << "error: --format must be table, csv or json\n";
    return kUsage;
  }
  std::string root = o.storage;
  if (!o.path.empty()) {
    Loaded l = LoadAndValidate(o.path);
    if (!l.parsed) {
      PrintDiagnosticsHuman(l, std::cerr);
      return kFailed;
    }
    root = native::ResolveStorageRoot(l.pipeline, o.storage);
  }
  auto layout = engine::batch::StorageLayout::Make(root);
  if (!layout.ok()) {
    std::cerr << "error: " << layout.status().message() << "\n";
    return kFailed;
  }
  // The root's filesystem: the local disk or S3.
  auto where = engine::ResolveLocation(layout->location());
  if (!where.ok()) {
    std::cerr << "error: " << where.status().message() << "\n";
    return kFailed;
  }
  arrow::fs::FileSelector runs;
  runs.base_dir = layout->RunsDir();
  runs.allow_not_found = true;
  auto listed = where->fs->GetFileInfo(runs);
  bool any = false;
  for (const auto& e : listed.ok() ? *listed : std::vector<arrow::fs::FileInfo>{}) {
    any = any || e.extension() == "parquet";
  }
  if (!any) {
    std::cout << "no runs recorded under " << layout->location() << "\n";
    return kOk;
  }
  auto session = engine::DuckDbSession::Open();
  if (!session.ok()) {
    std::cerr << "error: " << session.status().message() << "\n";
    return kFailed;
  }
  if (!layout->local()) {
    arrow::Status st = engine::EnableObjectStorage(**session, layout->location());
    if (!st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return kFailed;
    }
  }
  std::string sql =
      "SELECT run_id, status, strftime(started_at, '%Y-%m-%d %H:%M:%S') AS started_utc, "
      "round(duration_ms / 1000.0, 2) AS seconds, computed, up_to_date, failed, skipped, "
      "rows_written, error FROM read_parquet(" +
      engine::QuoteString(engine::batch::RunHistoryGlob(*layout)) +
      ") ORDER BY started_at DESC, run_id DESC LIMIT " + std::to_string(o.limit);
  arrow::Status st = engine::batch::WriteQueryResult(**session, sql, *format, std::cout);
  if (!st.ok()) {
    std::cerr << "error: reading the run history: " << st.message() << "\n";
    return kFailed;
  }
  return kOk;
}

}  // namespace

void RegisterRuns(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<RunsOptions>();
  auto* c = app.add_subcommand("runs", "List past runs (newest first) with status and duration.");
  c->add_option("PATH", o->path, "pipeline file, .sql file or SDP project");
  c->add_option("--storage", o->storage, "storage root (default: the pipeline's)");
  c->add_option("--limit", o->limit, "at most N runs (default 20)");
  c->add_option("--format", o->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  c->callback([o, exit_code] { *exit_code = RunRuns(*o); });
}

}  // namespace thund::cli
