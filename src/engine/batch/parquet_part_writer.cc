#include "engine/batch/parquet_part_writer.h"

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

#include <arrow/memory_pool.h>
#include <arrow/table.h>
#include <arrow/type.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

namespace thund::engine::batch {

struct ParquetPartWriter::Worker {
  static constexpr size_t kMaxQueued = 32;

  // The encoder's buffers come from the system allocator: each writer runs on a
  // thread of its own, and Arrow's default pool (mimalloc) sets up per-thread
  // state on a thread's first allocation, which cost a small query's run
  // several milliseconds. The file written is the same.
  static arrow::MemoryPool* Pool() { return arrow::system_memory_pool(); }

  std::shared_ptr<arrow::fs::FileSystem> fs;
  std::string dir, prefix;
  std::shared_ptr<arrow::Schema> schema;
  PartWriterOptions options;

  std::mutex mu;
  std::condition_variable changed;
  std::deque<std::shared_ptr<arrow::RecordBatch>> queue;
  bool closing = false;
  arrow::Status error;  // first error of the worker thread
  std::thread thread;

  // Worker-thread state.
  std::shared_ptr<arrow::io::OutputStream> out;
  std::unique_ptr<parquet::arrow::FileWriter> writer;
  std::string current_file;
  int64_t file_rows = 0;
  std::vector<PartFile> parts;

  arrow::Status OpenNext() {
    char name[64];
    std::snprintf(name, sizeof(name), "-%05zu.parquet", parts.size());
    current_file = prefix + name;
    ARROW_ASSIGN_OR_RAISE(out, fs->OpenOutputStream(dir + "/" + current_file));
    parquet::WriterProperties::Builder builder;
    builder.memory_pool(Pool())
        ->compression(arrow::Compression::SNAPPY)
        ->max_row_group_length(options.row_group_rows)
        // Dictionary encoding pays off for strings; for numbers and timestamps (often
        // unique, like ids) it mostly burns CPU before falling back to plain pages.
        ->disable_dictionary();
    for (const auto& field : schema->fields()) {
      auto id = field->type()->id();
      if (id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING ||
          id == arrow::Type::BINARY || id == arrow::Type::DICTIONARY) {
        builder.enable_dictionary(field->name());
      }
    }
    auto props = builder.build();
    auto arrow_props = parquet::ArrowWriterProperties::Builder().store_schema()->build();
    ARROW_ASSIGN_OR_RAISE(writer, parquet::arrow::FileWriter::Open(
                                      *schema, Pool(), out, props,
                                      arrow_props));
    file_rows = 0;
    parts.push_back({"", current_file, 0});
    return arrow::Status::OK();
  }

  arrow::Status CloseCurrent() {
    if (!writer) return arrow::Status::OK();
    arrow::Status st = writer->Close();
    writer.reset();
    arrow::Status closed = out->Close();
    out.reset();
    parts.back().rows = file_rows;
    ARROW_RETURN_NOT_OK(st);
    return closed;
  }

  arrow::Status Consume(const std::shared_ptr<arrow::RecordBatch>& batch) {
    if (writer && options.max_rows_per_file > 0 && file_rows >= options.max_rows_per_file) {
      ARROW_RETURN_NOT_OK(CloseCurrent());
    }
    if (!writer) ARROW_RETURN_NOT_OK(OpenNext());
    ARROW_RETURN_NOT_OK(writer->WriteRecordBatch(*batch));
    file_rows += batch->num_rows();
    return arrow::Status::OK();
  }

  // `step`, with an exception (bad_alloc in the encoder, say) turned into the
  // writer's error: nothing may leave the worker thread (std::terminate).
  template <class Step>
  arrow::Status NoThrow(Step step) {
    try {
      return step();
    } catch (const std::exception& e) {
      return arrow::Status::UnknownError("writing part file '", current_file, "': ", e.what());
    }
  }

  void Run() {
    for (;;) {
      std::shared_ptr<arrow::RecordBatch> batch;
      {
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] { return !queue.empty() || closing; });
        if (queue.empty()) break;
        batch = std::move(queue.front());
        queue.pop_front();
        changed.notify_all();
        if (!error.ok()) continue;
      }
      arrow::Status st = NoThrow([&] { return Consume(batch); });
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        error = st;
      }
    }
    arrow::Status st = NoThrow([&] {
      return error.ok() && !writer ? (parts.empty() ? OpenNext() : arrow::Status::OK())
                                   : arrow::Status::OK();
    });
    if (st.ok() && error.ok()) st = NoThrow([&] { return CloseCurrent(); });
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      if (error.ok()) error = st;
    }
    if (writer) {  // failed mid-way: release the stream
      (void)NoThrow([&] {
        (void)writer->Close();
        return out->Close();
      });
    }
  }
};

arrow::Result<std::unique_ptr<ParquetPartWriter>> ParquetPartWriter::Open(
    std::shared_ptr<arrow::fs::FileSystem> fs, std::string dir, std::string prefix,
    std::shared_ptr<arrow::Schema> schema, PartWriterOptions options) {
  std::unique_ptr<ParquetPartWriter> w(new ParquetPartWriter());
  w->worker_ = std::make_unique<Worker>();
  Worker& k = *w->worker_;
  k.fs = std::move(fs);
  k.dir = std::move(dir);
  k.prefix = std::move(prefix);
  k.schema = std::move(schema);
  k.options = options;
  k.thread = std::thread([&k] { k.Run(); });
  return w;
}

ParquetPartWriter::~ParquetPartWriter() {
  if (worker_ && worker_->thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(worker_->mu);
      worker_->closing = true;
      if (worker_->error.ok()) worker_->error = arrow::Status::Cancelled("writer abandoned");
    }
    worker_->changed.notify_all();
    worker_->thread.join();
  }
}

arrow::Status ParquetPartWriter::Write(std::shared_ptr<arrow::RecordBatch> batch) {
  if (batch->num_rows() == 0) return arrow::Status::OK();
  Worker& k = *worker_;
  std::unique_lock<std::mutex> lock(k.mu);
  k.changed.wait(lock, [&] { return k.queue.size() < Worker::kMaxQueued || !k.error.ok(); });
  ARROW_RETURN_NOT_OK(k.error);
  rows_ += batch->num_rows();
  k.queue.push_back(std::move(batch));
  k.changed.notify_all();
  return arrow::Status::OK();
}

arrow::Status ParquetPartWriter::WriteTable(const arrow::Table& table) {
  arrow::TableBatchReader reader(table);
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) return arrow::Status::OK();
    ARROW_RETURN_NOT_OK(Write(std::move(batch)));
  }
}

arrow::Result<std::vector<PartFile>> ParquetPartWriter::Finish(const std::string& flow) {
  Worker& k = *worker_;
  {
    std::lock_guard<std::mutex> lock(k.mu);
    k.closing = true;
  }
  k.changed.notify_all();
  k.thread.join();
  ARROW_RETURN_NOT_OK(k.error);
  for (auto& p : k.parts) p.flow = flow;
  return k.parts;
}

}  // namespace thund::engine::batch
