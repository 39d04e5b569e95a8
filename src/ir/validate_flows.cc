// Rules on a flow's body: exactly one of SQL / source, SQL that parses, a
// source the target can take, and source settings that make sense.
#include <variant>

#include "ir/validate_internal.h"
#include "common/text.h"

namespace thund::internal {
namespace {

using text::IsBlank;

// Targets a source flow may write: the stored, append-capable kinds and sinks.
// Materialized views and views are defined by a query.
bool AcceptsSource(DatasetKind k) {
  return k == DatasetKind::kTable || k == DatasetKind::kStreamingTable || k == DatasetKind::kSink;
}

void SourceProblem(const Pipeline& p, size_t i, const std::string& field, std::string message,
                   std::string hint, Diagnostics* out) {
  out->push_back(FlowDiag(p, i, Severity::kError, "source-spec", "source." + field,
                          std::move(message), std::move(hint)));
}

void CheckSourceSpec(const Pipeline& p, size_t i, const SourceSpec& src, Diagnostics* out) {
  if (const auto* f = std::get_if<FileSource>(&src)) {
    if (f->path.empty()) {
      SourceProblem(p, i, "path", "file source has no path",
                    "set the path of a file, directory or glob (e.g. data/*.parquet)", out);
    }
    if (!f->format) {
      SourceProblem(p, i, "format", "file source has no format",
                    "set its format: one of parquet, csv, json", out);
    } else if (*f->format == FileFormat::kNoop) {
      SourceProblem(p, i, "format", "file source has format noop, which only sinks take",
                    "set its format: one of parquet, csv, json", out);
    }
  } else if (const auto* g = std::get_if<GeneratorSource>(&src)) {
    if (g->rows_per_batch <= 0) {
      SourceProblem(p, i, "rows_per_batch", "generator rows_per_batch must be positive",
                    "set rows_per_batch to 1 or more", out);
    }
    if (g->total_rows < 0 || g->events_per_second < 0 || g->out_of_orderness_ms < 0) {
      SourceProblem(p, i, "total_rows",
                    "generator total_rows, events_per_second and out_of_orderness must not be "
                    "negative",
                    "use 0 for the defaults (unbounded, default rate, in order)", out);
    }
  } else if (const auto* m = std::get_if<MemorySource>(&src)) {
    if (m->name.empty()) {
      SourceProblem(p, i, "name", "memory source has no name",
                    "name the in-memory stream that the run options will feed", out);
    }
  } else if (const auto* k = std::get_if<KafkaSource>(&src)) {
    if (k->bootstrap_servers.empty() || k->topic.empty()) {
      SourceProblem(p, i, k->topic.empty() ? "topic" : "bootstrap_servers",
                    "kafka source needs bootstrap_servers and a topic",
                    "set bootstrap_servers (host:port) and topic", out);
    }
  }
}

}  // namespace

void CheckFlowBodies(const ValidateContext& ctx, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  for (size_t i = 0; i < p.flows.size(); ++i) {
    const Flow& f = p.flows[i];
    const bool has_sql = !f.sql.empty();
    if (has_sql == f.source.has_value()) {
      out->push_back(FlowDiag(
          p, i, Severity::kError, "flow-body", has_sql ? "source" : "sql",
          has_sql ? "flow " + Quote(f.name) + " has both a SQL query and a source"
                  : "flow " + Quote(f.name) + " has neither a SQL query nor a source",
          has_sql ? "keep one: the query (it can read files with read_parquet(...)) or the "
                    "source"
                  : "give the flow a SELECT query or a source"));
    }
    if (has_sql && !ctx.flows[i].parse_status.ok()) {
      out->push_back(FlowDiag(p, i, Severity::kError, "sql-parse-error", "sql",
                              "the SQL of flow " + Quote(f.name) +
                                  " does not parse: " + ctx.flows[i].parse_status.message(),
                              IsBlank(f.sql) ? "write a SELECT query"
                                             : "fix the query (a flow body is one SELECT "
                                               "statement in Spark or DuckDB SQL)"));
    }
    if (f.source) {
      CheckSourceSpec(p, i, *f.source, out);
      const Dataset* target = ctx.Find(f.target);
      // A temporary view may stream a source to its readers (a stream view).
      const bool stream_view =
          target && target->kind == DatasetKind::kTemporaryView && IsStreamingSource(*f.source);
      if (target && !AcceptsSource(target->kind) && !stream_view) {
        out->push_back(FlowDiag(
            p, i, Severity::kError, "source-target-kind", "source",
            "flow " + Quote(f.name) + " reads a " + SourceKindName(*f.source) + " source into " +
                Name(target->kind) + " " + Quote(f.target) + ", which is defined by a query",
            "declare " + Quote(f.target) +
                " as a streaming_table (or a table for a one-off file load), or replace the "
                "source with a query such as SELECT * FROM read_parquet('path')" +
                (IsStreamingSource(*f.source)
                     ? "; a temporary view can stream a source's rows to streaming flows "
                       "without storing them"
                     : "")));
      }
    }
  }
}

}  // namespace thund::internal
