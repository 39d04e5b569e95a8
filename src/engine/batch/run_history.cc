#include "engine/batch/run_history.h"

#include <ctime>

#include <arrow/builder.h>
#include <arrow/memory_pool.h>
#include <parquet/arrow/writer.h>

#include "engine/fs/atomic_write.h"

namespace thund::engine::batch {

std::string NewRunId(int64_t started_ms) {
  std::time_t secs = static_cast<std::time_t>(started_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%04d%02d%02dT%02d%02d%02d%03dZ-", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(started_ms % 1000));
  return std::string(buf) + UniqueToken().substr(0, 8);
}

std::shared_ptr<arrow::Schema> RunHistorySchema() {
  return arrow::schema({
      arrow::field("run_id", arrow::utf8()),
      arrow::field("pipeline", arrow::utf8()),
      arrow::field("status", arrow::utf8()),
      arrow::field("started_at", arrow::timestamp(arrow::TimeUnit::MILLI, "UTC")),
      arrow::field("duration_ms", arrow::int64()),
      arrow::field("mode", arrow::utf8()),
      arrow::field("computed", arrow::int64()),
      arrow::field("up_to_date", arrow::int64()),
      arrow::field("failed", arrow::int64()),
      arrow::field("skipped", arrow::int64()),
      arrow::field("rows_written", arrow::int64()),
      arrow::field("error", arrow::utf8()),
      arrow::field("summary_json", arrow::utf8()),
  });
}

arrow::Status AppendRunRecord(arrow::fs::FileSystem& fs, const StorageLayout& layout,
                              const RunRecord& r) {
  auto schema = RunHistorySchema();
  std::vector<std::shared_ptr<arrow::Array>> cols;
  auto str = [&](const std::string& v) -> arrow::Status {
    arrow::StringBuilder b;
    ARROW_RETURN_NOT_OK(b.Append(v));
    std::shared_ptr<arrow::Array> a;
    ARROW_RETURN_NOT_OK(b.Finish(&a));
    cols.push_back(a);
    return arrow::Status::OK();
  };
  auto i64 = [&](int64_t v) -> arrow::Status {
    arrow::Int64Builder b;
    ARROW_RETURN_NOT_OK(b.Append(v));
    std::shared_ptr<arrow::Array> a;
    ARROW_RETURN_NOT_OK(b.Finish(&a));
    cols.push_back(a);
    return arrow::Status::OK();
  };
  ARROW_RETURN_NOT_OK(str(r.run_id));
  ARROW_RETURN_NOT_OK(str(r.pipeline));
  ARROW_RETURN_NOT_OK(str(r.status));
  {
    arrow::TimestampBuilder b(schema->field(3)->type(), arrow::default_memory_pool());
    ARROW_RETURN_NOT_OK(b.Append(r.started_ms));
    std::shared_ptr<arrow::Array> a;
    ARROW_RETURN_NOT_OK(b.Finish(&a));
    cols.push_back(a);
  }
  ARROW_RETURN_NOT_OK(i64(r.duration_ms));
  ARROW_RETURN_NOT_OK(str(r.mode));
  ARROW_RETURN_NOT_OK(i64(r.computed));
  ARROW_RETURN_NOT_OK(i64(r.up_to_date));
  ARROW_RETURN_NOT_OK(i64(r.failed));
  ARROW_RETURN_NOT_OK(i64(r.skipped));
  ARROW_RETURN_NOT_OK(i64(r.rows_written));
  ARROW_RETURN_NOT_OK(str(r.error));
  ARROW_RETURN_NOT_OK(str(r.summary_json));
  auto table = arrow::Table::Make(schema, cols);
  ARROW_RETURN_NOT_OK(fs.CreateDir(layout.RunsDir(), /*recursive=*/true));
  return WriteFileAtomically(
      fs, layout.RunsDir() + "/run-" + r.run_id + ".parquet",
      [&](arrow::io::OutputStream* out) -> arrow::Status {
        auto props = parquet::WriterProperties::Builder().build();
        auto arrow_props = parquet::ArrowWriterProperties::Builder().store_schema()->build();
        // WriteTable needs a shared_ptr sink; wrap the borrowed stream without owning it.
        std::shared_ptr<arrow::io::OutputStream> sink(out, [](arrow::io::OutputStream*) {});
        return parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink, 1024, props,
                                          arrow_props);
      });
}

std::string RunHistoryGlob(const StorageLayout& layout) {
  return layout.Uri(layout.RunsDir() + "/*.parquet");
}

}  // namespace thund::engine::batch
