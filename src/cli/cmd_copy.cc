// `thund copy SRC DST --checkpoint-keys k[,k2]`: a one-off key-checkpointed
// write. Rows of SRC (Parquet/CSV/JSON files; a file, directory or glob),
// optionally transformed by a DuckDB SELECT, are appended to the directory DST
// as atomically committed files -- skipping every row whose key DST already
// holds, so a rerun after a crash continues where the first run stopped.
#include <arrow/filesystem/filesystem.h>
#include <arrow/filesystem/localfs.h>

#include <algorithm>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/progress_line.h"
#include "engine/keyed/keyed_copy.h"
#include "thund/json_text.h"

namespace thund::cli {
namespace {

namespace keyed = thund::engine::keyed;

struct CopyOptions {
  std::string src;
  std::string dst;
  std::string keys;                        // comma-separated
  std::vector<std::string> extra_sources;  // NAME=PATH
  std::string source_name = "src";
  std::string transform;
  std::string format = "parquet";
  std::string source_format;
  int64_t buckets = 0, threads = 0, batch_size = 0;
  bool buckets_set = false, threads_set = false, batch_size_set = false;
  std::string duplicates = "first";
  std::string null_keys = "error";
  std::string key_match = "exact";
  int64_t rows_per_file = 1 << 20;
  // Fast-path switches (docs/keyed-writes.md "Fast paths and their switches").
  bool no_settle = false, no_passthrough = false, no_join = false, no_direct_io = false;
  bool no_memory_pool = false, no_huge_pages = false, plain = false;
  std::string key_index = "rows";
  bool json = false;
  bool quiet = false;
};

std::string LocalPath(const std::string& p) {
  if (p.find("://") != std::string::npos) return p;
  return std::filesystem::absolute(std::filesystem::path(p)).lexically_normal().string();
}

arrow::Result<keyed::KeyedCopyOptions> ToEngineOptions(const CopyOptions& o) {
  keyed::KeyedCopyOptions k;
  std::optional<keyed::FileFormat> source_format;
  if (!o.source_format.empty()) {
    ARROW_ASSIGN_OR_RAISE(source_format, keyed::ParseFileFormat(o.source_format));
  }
  k.sources.push_back({o.source_name, LocalPath(o.src), source_format});
  for (const auto& spec : o.extra_sources) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return arrow::Status::Invalid("--source '", spec, "': expected NAME=PATH");
    }
    k.sources.push_back({spec.substr(0, eq), LocalPath(spec.substr(eq + 1)), source_format});
  }
  k.target = LocalPath(o.dst);
  k.transform_sql = o.transform;
  // Split on commas, keeping empty names so that "id,,v" is reported; "" is an
  // empty list.
  if (!o.keys.empty()) {
    size_t start = 0;
    while (true) {
      const size_t comma = o.keys.find(',', start);
      std::string name =
          o.keys.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const size_t b = name.find_first_not_of(" \t");
      const size_t e = name.find_last_not_of(" \t");
      k.keyed.keys.push_back(b == std::string::npos ? "" : name.substr(b, e - b + 1));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (o.buckets_set) k.keyed.buckets = o.buckets;
  if (o.threads_set) k.keyed.threads = o.threads;
  if (o.batch_size_set) k.keyed.batch_size = o.batch_size;
  ARROW_ASSIGN_OR_RAISE(k.keyed.duplicates, keyed::ParseDuplicates(o.duplicates));
  ARROW_ASSIGN_OR_RAISE(k.keyed.null_keys, keyed::ParseNullKeys(o.null_keys));
  ARROW_ASSIGN_OR_RAISE(k.keyed.match, keyed::ParseKeyMatch(o.key_match));
  ARROW_ASSIGN_OR_RAISE(k.output.format, keyed::ParseFileFormat(o.format));
  if (o.rows_per_file <= 0) {
    return arrow::Status::Invalid("--rows-per-file must be > 0, got ", o.rows_per_file);
  }
  k.output.rows_per_file = o.rows_per_file;
  auto key_index = keyed::ParseKeyIndex(o.key_index);
  if (!key_index) {
    return arrow::Status::Invalid("--key-index '", o.key_index,
                                  "' is not a key index; use 'rows' or 'table'");
  }
  k.keyed.key_index = *key_index;
  k.tuning.settle = !o.no_settle;
  k.tuning.passthrough = !o.no_passthrough;
  k.output.join = !o.no_join;
  k.output.direct_io = !o.no_direct_io;
  k.keyed.memory_pool = !o.no_memory_pool;
  k.keyed.huge_pages = !o.no_huge_pages;
  if (o.plain) k.SetPlain();
  ARROW_RETURN_NOT_OK(k.keyed.Validate());
  return k;
}

nlohmann::json SummaryJson(const keyed::KeyedCopyResult& r) {
  return {{"rows_read", r.counts.rows_read},
          {"rows_skipped_existing", r.counts.rows_skipped_existing},
          {"rows_skipped_duplicate", r.counts.rows_skipped_duplicate},
          {"rows_null_key", r.counts.rows_null_key},
          {"rows_written", r.counts.rows_written},
          {"files_written", r.files_written},
          {"files_passed_through", r.files_passed_through},
          {"row_groups_settled", r.units_settled},
          {"row_groups_settled_by_stored_bytes", r.units_settled_by_stored_bytes},
          {"target_keys", r.target_keys},
          {"key_set_bytes", r.key_set_bytes},
          {"placement", r.placement},
          {"shape", r.shape},
          {"seconds", r.seconds}};
}

int RunCopy(const CopyOptions& o) {
  auto options = ToEngineOptions(o);
  if (!options.ok()) {
    std::cerr << "error: " << options.status().message() << "\n";
    return kUsage;
  }
  auto fs = std::make_shared<arrow::fs::LocalFileSystem>();
  for (const auto& s : options->sources) {
    if (s.path.find("://") != std::string::npos) {
      std::cerr << "error: source '" << s.path << "': thund copy reads local paths only\n";
      return kUsage;
    }
  }
  if (options->target.find("://") != std::string::npos) {
    std::cerr << "error: target '" << options->target << "': thund copy writes local paths only\n";
    return kUsage;
  }
  // On a terminal, a live line counts the committed files; the other events
  // are lines of their own (one line per file would be noise).
  ProgressLine line(std::cerr, ShouldShowProgress(o.quiet));
  std::mutex mu;
  int64_t files = 0, rows = 0, bytes = 0;
  auto on_event = [&](const keyed::KeyedEvent& e) {
    if (e.kind == keyed::KeyedEvent::Kind::kCommitted) {
      if (!line.enabled()) return;
      std::error_code ec;
      const auto size = std::filesystem::file_size(e.path, ec);
      std::lock_guard<std::mutex> lock(mu);
      ++files;
      rows += e.rows;
      if (!ec) bytes += static_cast<int64_t>(size);
      const double elapsed = std::max(line.Elapsed(), 1e-3);
      line.Update("thund copy: " + std::to_string(files) + " files | " +
                  HumanCount(static_cast<double>(rows)) + " rows written (" +
                  HumanCount(static_cast<double>(rows) / elapsed) + " rows/s) | " +
                  HumanBytes(bytes) + " | " + HumanDuration(elapsed));
      return;
    }
    if (o.quiet) return;
    line.Clear();
    std::cerr << "thund copy: " << e.message << "\n";
  };
  auto result = keyed::RunKeyedCopy(fs, *options, on_event);
  line.Clear();
  if (!result.ok()) {
    std::cerr << "error: " << result.status().message() << "\n";
    return kFailed;
  }
  if (o.json) {
    std::cout << JsonText(SummaryJson(*result)) << "\n";
  } else {
    std::cout << result->counts.ToString() << " (" << result->files_written << " files, "
              << result->seconds << " s)\n";
  }
  return kOk;
}

}  // namespace

void RegisterCopy(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<CopyOptions>();
  auto* c = app.add_subcommand(
      "copy",
      "Append SRC's rows to the directory DST, skipping rows whose key DST already holds "
      "(a rerun after a crash continues where the first run stopped).");
  c->add_option("SRC", o->src, "source: a Parquet/CSV/JSON file, a directory or a glob")
      ->required();
  c->add_option("DST", o->dst, "target directory (created when missing)")->required();
  c->add_option("--checkpoint-keys", o->keys, "key column(s), comma-separated")->required();
  c->add_option("--transform", o->transform,
                "DuckDB SELECT over `src` (and any --source) producing the rows to write");
  c->add_option("--source", o->extra_sources,
                "another input for --transform, as NAME=PATH (repeatable)");
  c->add_option("--source-name", o->source_name, "the name --transform uses for SRC");
  c->add_option("--format", o->format, "output format: parquet, csv or json");
  c->add_option("--source-format", o->source_format,
                "read sources as this format (default: by file extension)");
  auto* b = c->add_option("--buckets", o->buckets,
                          "shards of the key set (default: threads, rounded up to a power of two)");
  auto* t = c->add_option("--threads", o->threads, "worker threads (default: all cores)");
  auto* s = c->add_option("--batch-size", o->batch_size, "rows per filter batch (default 65536)");
  c->add_option("--duplicates", o->duplicates,
                "rows whose key repeats in the input: first (default) or all");
  c->add_option("--null-keys", o->null_keys, "rows with a NULL key: error (default) or drop");
  c->add_option("--key-match", o->key_match,
                "exact (default) or hash (128-bit hashes: less memory, collisions possible)");
  c->add_option("--rows-per-file", o->rows_per_file, "rows per output file (default 1048576)");
  c->add_flag("--no-settle", o->no_settle,
              "do not settle source row groups while the target's keys load");
  c->add_flag("--no-passthrough", o->no_passthrough,
              "decode and re-encode every row instead of committing all-new Parquet files "
              "unchanged");
  c->add_flag("--no-join", o->no_join,
              "do not join passed-through Parquet files by their pages (decode them instead)");
  c->add_flag("--no-direct-io", o->no_direct_io, "copy files through the page cache, not O_DIRECT");
  c->add_option("--key-index", o->key_index,
                "how the target's keys are held: rows (row numbers + Bloom filter where it "
                "applies, default) or table (the keys themselves)");
  c->add_flag("--no-memory-pool", o->no_memory_pool,
              "allocate from Arrow's system pool instead of the recycling pool");
  c->add_flag("--no-huge-pages", o->no_huge_pages, "never ask for huge pages for key tables");
  c->add_flag("--plain", o->plain,
              "every fast path off (the plain twin of each; same rows, slower)");
  c->add_flag("--json", o->json, "print the summary as JSON");
  c->add_flag("-q,--quiet", o->quiet,
              "no progress messages on stderr (and no live progress line on a terminal)");
  c->callback([o, exit_code, b, t, s] {
    o->buckets_set = b->count() > 0;
    o->threads_set = t->count() > 0;
    o->batch_size_set = s->count() > 0;
    *exit_code = RunCopy(*o);
  });
}

}  // namespace thund::cli
