#include "backend/native/copy_flow.h"

#include <chrono>

#include "engine/duckdb/sql_quote.h"
#include "engine/io/parquet_io.h"

namespace thund::native {
namespace {

using engine::ReadParquetSchema;

}  // namespace

bool CanCopyFlow(const RunContext& ctx, const Flow& flow, const Dataset& target,
                 size_t flows_into_target) {
  const auto& fs = ctx.options->native.filesystem;
  return !flow.sql.empty() && !flow.source && flows_into_target == 1 &&
         target.expectations.empty() && !target.schema.declared() &&
         !target.keyed_write.enabled() && (!fs || fs->type_name() == "local") &&
         ctx.store->layout().local();  // on S3 the rows go through the store's filesystem
}

arrow::Result<FlowResult> CopyFlow(RunContext& ctx, const Flow& flow, const Dataset& target,
                                   const std::string& dir, const std::string& file) {
  const auto start = std::chrono::steady_clock::now();
  RunEvent started;
  started.kind = RunEvent::Kind::kFlowStarted;
  started.flow = flow.name;
  started.dataset = target.name;
  ctx.Emit(started);

  ARROW_ASSIGN_OR_RAISE(std::string query, TranslateFlowSql(flow));
  ARROW_RETURN_NOT_OK(FlowInputFiles(ctx, flow).status());
  auto copied = ctx.session->QueryInt64("COPY (" + query + "\n) TO " +
                                        engine::QuoteString(dir + "/" + file) +
                                        " (FORMAT parquet, COMPRESSION snappy)");
  if (!copied.ok()) return FlowError(flow, copied.status());
  FlowResult result;
  // The schema of the rows, from the written file's footer.
  auto schema = ReadParquetSchema(dir + "/" + file);
  if (!schema.ok()) return FlowError(flow, schema.status());
  result.schema = *schema;
  result.rows_out = *copied;
  result.rows_in = result.rows_out;
  result.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  return result;
}

}  // namespace thund::native
