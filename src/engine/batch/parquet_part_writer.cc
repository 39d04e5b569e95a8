#include "engine/batch/parquet_part_writer.h"

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>

#include <arrow/memory_pool.h>
#include <arrow/table.h>
#include <arrow/type.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include "engine/exec/catch_all.h"
#include "engine/exec/thread_pool.h"

namespace thund::engine::batch {

struct ParquetPartWriter::Worker {
  static constexpr size_t kMaxQueued = 32;

  // The encoder's buffers come from the system allocator: a writer's batches
  // are encoded by whichever thread drains it (a pool thread or the caller), and Arrow's default pool (mimalloc) sets up per-thread
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
  bool closing = false;     // Finish or the destructor began: pool tasks do nothing
  bool active = false;      // some thread is consuming the queue (owns the state below)
  bool scheduled = false;   // a pool task to drain the queue is waiting to start
  arrow::Status error;      // first error

  // State of the thread that is `active` (one at a time, handed over under mu).
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

  // Consumes queued batches while more than `keep` are queued. REQUIRES: the
  // caller set `active` (under mu); clears it on return.
  void DrainTo(size_t keep) {
    for (;;) {
      std::shared_ptr<arrow::RecordBatch> batch;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (queue.size() <= keep) {
          active = false;
          changed.notify_all();
          return;
        }
        batch = std::move(queue.front());
        queue.pop_front();
        changed.notify_all();
        if (!error.ok()) continue;
      }
      arrow::Status st = CatchAll("writing Parquet part file '" + current_file + "'",
                                  [&] { return Consume(batch); });
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (error.ok()) error = st;
      }
    }
  }

  // The caller's share (Write when the queue is full, Finish): consumes until
  // at most `keep` batches are queued, taking turns with a pool task.
  void HelpTo(size_t keep) {
    std::unique_lock<std::mutex> lock(mu);
    while (queue.size() > keep) {
      if (!active) {
        active = true;
        lock.unlock();
        DrainTo(keep);
        lock.lock();
      } else {
        changed.wait(lock);
      }
    }
    if (keep == 0) changed.wait(lock, [&] { return !active; });  // the last batch is written
  }

  // The pool task's body.
  static void PoolDrain(const std::shared_ptr<Worker>& k) {
    {
      std::lock_guard<std::mutex> lock(k->mu);
      k->scheduled = false;
      if (k->closing || k->active) return;
      k->active = true;
    }
    k->DrainTo(0);
  }

  // After the last batch (on the caller, nothing active): closes the file.
  void Close() {
    arrow::Status st = CatchAll("opening Parquet part file", [&] {
      return error.ok() && !writer ? (parts.empty() ? OpenNext() : arrow::Status::OK())
                                   : arrow::Status::OK();
    });
    if (st.ok() && error.ok()) {
      st = CatchAll("closing Parquet part file '" + current_file + "'",
                    [&] { return CloseCurrent(); });
    }
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      if (error.ok()) error = st;
    }
    if (writer) {  // failed mid-way: release the stream
      (void)CatchAll("releasing Parquet part file '" + current_file + "'", [&] {
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
  w->worker_ = std::make_shared<Worker>();
  Worker& k = *w->worker_;
  k.fs = std::move(fs);
  k.dir = std::move(dir);
  k.prefix = std::move(prefix);
  k.schema = std::move(schema);
  k.options = options;
  return w;
}

ParquetPartWriter::~ParquetPartWriter() {
  if (!worker_) return;
  Worker& k = *worker_;
  {
    std::lock_guard<std::mutex> lock(k.mu);
    if (k.closing) return;  // Finish ran
    k.closing = true;
    if (k.error.ok()) k.error = arrow::Status::Cancelled("writer abandoned");
  }
  k.HelpTo(0);  // drops what is queued (error set), waits for a running drain
  k.Close();
}

arrow::Status ParquetPartWriter::Write(std::shared_ptr<arrow::RecordBatch> batch) {
  if (batch->num_rows() == 0) return arrow::Status::OK();
  Worker& k = *worker_;
  bool spawn = false, full = false;
  {
    std::lock_guard<std::mutex> lock(k.mu);
    ARROW_RETURN_NOT_OK(k.error);
    rows_ += batch->num_rows();
    k.queue.push_back(std::move(batch));
    if (!k.active && !k.scheduled) spawn = k.scheduled = true;
    full = k.queue.size() >= Worker::kMaxQueued;
  }
  if (spawn) {
    std::shared_ptr<Worker> shared = worker_;
    ThreadPool::Engine().Spawn([shared] { Worker::PoolDrain(shared); });
  }
  // Too much queued (no pool thread free, or encoding is behind): encode here.
  if (full) k.HelpTo(Worker::kMaxQueued / 2);
  std::lock_guard<std::mutex> lock(k.mu);
  return k.error;
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
  k.HelpTo(0);
  k.Close();
  std::lock_guard<std::mutex> lock(k.mu);
  ARROW_RETURN_NOT_OK(k.error);
  for (auto& p : k.parts) p.flow = flow;
  return k.parts;
}

}  // namespace thund::engine::batch
