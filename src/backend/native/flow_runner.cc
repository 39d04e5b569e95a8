#include "backend/native/flow_runner.h"

#include <chrono>
#include <filesystem>
#include <optional>

#include "engine/batch/file_source.h"
#include "engine/batch/input_files.h"
#include "engine/batch/schema_conform.h"
#include "engine/fs/filesystem_uri.h"
#include "thund/sql_dialect.h"
#include "common/clock.h"

namespace thund::native {

using engine::batch::BadRowsMode;

namespace {


// Runs `query` wrapped with the expectations; maps errors to the flow.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenQuery(
    RunContext& ctx, const Flow& flow, const Dataset& target, const std::string& query,
    const FlowRunOptions& options) {
  std::string wrapped =
      engine::batch::WrapWithExpectations(query, options.expectations, options.select_list);
  auto reader = ctx.session->QueryStream(wrapped);
  if (reader.ok()) return reader;
  if (wrapped != query) {
    // Tell an error in the flow's own SQL from one in an expectation predicate.
    auto bare = ctx.session->Query("DESCRIBE " + query);
    if (!bare.ok()) return FlowError(flow, bare.status());
    return arrow::Status::Invalid("dataset '", target.name, "': an expectation (or the ",
                                  "output format) does not apply to the rows of flow '",
                                  flow.name, "': ", reader.status().message());
  }
  return FlowError(flow, reader.status());
}

}  // namespace

arrow::Status FlowError(const Flow& flow, const arrow::Status& st) {
  std::string where = flow.location.known() || !flow.location.file.empty()
                          ? " (" + flow.location.ToString() + ")"
                          : "";
  return arrow::Status(st.code() == arrow::StatusCode::IOError ? arrow::StatusCode::IOError
                                                               : arrow::StatusCode::Invalid,
                       "flow '" + flow.name + "'" + where + ": " + st.message(), st.detail());
}

arrow::Result<std::string> TranslateFlowSql(const Flow& flow) {
  auto sql = SparkToDuckDb(flow.sql);
  if (!sql.ok()) return FlowError(flow, sql.status());
  std::string s = *sql;
  while (!s.empty() && (s.back() == ';' || std::isspace(static_cast<unsigned char>(s.back())))) {
    s.pop_back();
  }
  return s;
}

arrow::Result<bool> UsesObjectStorage(const Pipeline& p,
                                      const engine::batch::StorageLayout& layout) {
  if (!layout.local()) return true;
  for (const auto& flow : p.flows) {
    if (flow.source) {
      const auto* files = std::get_if<FileSource>(&*flow.source);
      if (files && engine::IsObjectStoreUri(files->path)) return true;
      continue;
    }
    if (flow.sql.empty()) continue;
    // A query that does not translate or plan reports its error when it runs.
    auto sql = TranslateFlowSql(flow);
    if (!sql.ok()) continue;
    auto reads = engine::batch::FileReadsInSql(*sql);
    if (!reads.ok()) continue;
    for (const auto& r : *reads) {
      if (engine::IsObjectStoreUri(r.pattern)) return true;
    }
  }
  return false;
}

arrow::Result<std::vector<std::string>> FlowInputFiles(RunContext& ctx, const Flow& flow) {
  if (auto it = ctx.input_files.find(&flow); it != ctx.input_files.end()) return it->second;
  ARROW_ASSIGN_OR_RAISE(auto files, ExpandFlowInputFiles(ctx, flow));
  ctx.input_files[&flow] = files;
  return files;
}

arrow::Result<std::vector<std::string>> ExpandFlowInputFiles(RunContext& ctx, const Flow& flow) {
  std::vector<std::string> out;
  if (flow.source) {
    const auto* files = std::get_if<FileSource>(&*flow.source);
    if (!files) return out;
    auto expanded = engine::batch::ExpandSourcePath(*ctx.session, files->path);
    if (!expanded.ok()) return FlowError(flow, expanded.status());
    if (expanded->empty()) {
      return FlowError(flow, arrow::Status::Invalid(
                                 "input path '", files->path, "' matches no file (relative paths "
                                 "are resolved from ", std::filesystem::current_path().string(),
                                 "); check the path or create the input first"));
    }
    return *expanded;
  }
  ARROW_ASSIGN_OR_RAISE(std::string sql, TranslateFlowSql(flow));
  auto reads = engine::batch::FileReadsInSql(sql);
  if (!reads.ok()) return FlowError(flow, reads.status());
  for (const auto& r : *reads) {
    if (engine::batch::IsRemotePath(r.pattern)) {
      out.push_back(r.pattern);
      continue;
    }
    auto expanded = engine::batch::ExpandFileRead(*ctx.session, r);
    if (!expanded.ok()) return FlowError(flow, expanded.status());
    if (expanded->empty()) {
      return FlowError(flow, arrow::Status::Invalid(
                                 r.function, "('", r.pattern, "') matches no file (relative "
                                 "paths are resolved from ",
                                 std::filesystem::current_path().string(),
                                 "); check the path or create the input first"));
    }
    out.insert(out.end(), expanded->begin(), expanded->end());
  }
  return out;
}

arrow::Result<FlowResult> RunFlow(RunContext& ctx, const Flow& flow, const Dataset& target,
                                  const FlowRunOptions& options, RowConsumer& consumer) {
  const int64_t start = SteadyMs();
  RunEvent started;
  started.kind = RunEvent::Kind::kFlowStarted;
  started.flow = flow.name;
  started.dataset = target.name;
  ctx.Emit(started);

  FlowResult result;
  std::optional<engine::batch::FileSourcePlan> plan;
  struct CleanupGuard {
    RunContext& ctx;
    std::optional<engine::batch::FileSourcePlan>& plan;
    ~CleanupGuard() {
      if (plan) engine::batch::Cleanup(*ctx.session, *plan);
    }
  } guard{ctx, plan};

  std::string query;
  if (flow.source) {
    const auto* files = std::get_if<FileSource>(&*flow.source);
    if (!files) {
      return FlowError(flow, arrow::Status::NotImplemented(
                                 "source kind '", SourceKindName(*flow.source),
                                 "' is not run by the native batch engine"));
    }
    auto planned = engine::batch::PlanFileSource(*ctx.session, flow, *files, target, ctx.NextTag());
    if (!planned.ok()) return FlowError(flow, planned.status());
    plan = std::move(*planned);
    query = plan->sql;
    result.bad_rows_mode = plan->mode;
    if (plan->mode == BadRowsMode::kFail && !plan->json_bad_rows.empty()) {
      return FlowError(flow, arrow::Status::Invalid(
                                 "malformed input row at ",
                                 engine::batch::DescribeBadRows(plan->json_bad_rows),
                                 ". Fix the file, or set the source option bad_rows to drop or "
                                 "dead_letter"));
    }
  } else {
    ARROW_ASSIGN_OR_RAISE(query, TranslateFlowSql(flow));
    ARROW_RETURN_NOT_OK(FlowInputFiles(ctx, flow).status());
  }

  ARROW_ASSIGN_OR_RAISE(auto reader, OpenQuery(ctx, flow, target, query, options));
  engine::batch::ExpectationEvaluator evaluator(options.expectations, target.name, flow.name);
  auto data_schema = evaluator.DataSchema(*reader->schema());
  std::optional<engine::batch::SchemaConformer> conformer;
  if (options.conform) {
    auto made = engine::batch::SchemaConformer::Make(
        *data_schema, options.target_schema ? options.target_schema : data_schema,
        options.declared, target.name, flow.name);
    if (!made.ok()) return FlowError(flow, made.status());
    conformer = std::move(*made);
    result.schema = conformer->target();
  } else {
    result.schema = data_schema;
  }
  ARROW_RETURN_NOT_OK(consumer.Open(result.schema));

  int64_t last_progress = SteadyMs();
  for (;;) {
    if (ctx.StopRequested()) return arrow::Status::Cancelled("run canceled");
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status st = reader->ReadNext(&batch);
    if (!st.ok()) return FlowError(flow, st);
    if (!batch) break;
    if (options.pre_filter) {
      auto filtered = options.pre_filter(batch);
      if (!filtered.ok()) return FlowError(flow, filtered.status());
      batch = *filtered;
    }
    ARROW_ASSIGN_OR_RAISE(auto kept, evaluator.Apply(batch));
    if (conformer) {
      auto conformed = conformer->Conform(kept);
      if (!conformed.ok()) return FlowError(flow, conformed.status());
      kept = *conformed;
    }
    result.rows_out += kept->num_rows();
    ARROW_RETURN_NOT_OK(consumer.Consume(kept));
    const int64_t now = SteadyMs();
    if (now - last_progress >= 250) {
      last_progress = now;
      RunEvent progress;
      progress.kind = RunEvent::Kind::kFlowProgress;
      progress.flow = flow.name;
      progress.dataset = target.name;
      progress.rows_in = evaluator.rows_in();
      progress.rows_out = result.rows_out;
      progress.elapsed_ms = now - start;
      ctx.Emit(progress);
    }
  }
  result.rows_in = evaluator.rows_in();
  result.violations = evaluator.violations();
  for (size_t i = 0; i < options.expectations.size(); ++i) {
    RunEvent e;
    e.kind = RunEvent::Kind::kExpectation;
    e.flow = flow.name;
    e.dataset = target.name;
    e.name = options.expectations[i].rule.name;
    e.action = Name(options.expectations[i].rule.action);
    e.count = result.violations[i];
    e.rows_in = result.rows_in;
    ctx.Emit(e);
  }
  if (plan) {
    auto bad = engine::batch::CollectBadRows(*ctx.session, *plan);
    if (!bad.ok()) return FlowError(flow, bad.status());
    if (!bad->empty() && plan->mode == BadRowsMode::kFail) {
      return FlowError(flow, arrow::Status::Invalid(
                                 "malformed input row at ", engine::batch::DescribeBadRows(*bad),
                                 ". Fix the file, or set the source option bad_rows to drop or "
                                 "dead_letter"));
    }
    result.bad_rows = std::move(*bad);
  }
  result.elapsed_ms = SteadyMs() - start;
  return result;
}

}  // namespace thund::native
