// Internal: RowConsumers that write a flow's rows to a dataset version, a
// sink file, or memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/native/flow_runner.h"
#include "engine/batch/parquet_part_writer.h"
#include "engine/batch/sink_writer.h"

namespace thund::native {

// Parquet part files "<prefix>-NNNNN.parquet" in an uncommitted version dir.
class PartConsumer : public RowConsumer {
 public:
  PartConsumer(std::shared_ptr<arrow::fs::FileSystem> fs, std::string dir, std::string prefix)
      : fs_(std::move(fs)), dir_(std::move(dir)), prefix_(std::move(prefix)) {}
  arrow::Status Open(const std::shared_ptr<arrow::Schema>& schema) override {
    ARROW_ASSIGN_OR_RAISE(writer_,
                          engine::batch::ParquetPartWriter::Open(fs_, dir_, prefix_, schema));
    return arrow::Status::OK();
  }
  arrow::Status Consume(const std::shared_ptr<arrow::RecordBatch>& batch) override {
    return writer_->Write(batch);
  }
  // REQUIRES: Open was called.
  arrow::Result<std::vector<engine::batch::PartFile>> Finish(const std::string& flow) {
    return writer_->Finish(flow);
  }
  bool opened() const { return writer_ != nullptr; }

 private:
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::string dir_, prefix_;
  std::unique_ptr<engine::batch::ParquetPartWriter> writer_;
};

// One sink file shared by all flows into the sink; opened by the first flow.
class SinkConsumer : public RowConsumer {
 public:
  SinkConsumer(std::shared_ptr<arrow::fs::FileSystem> fs, engine::batch::SinkTarget target,
               std::string run_id)
      : fs_(std::move(fs)), target_(std::move(target)), run_id_(std::move(run_id)) {}
  arrow::Status Open(const std::shared_ptr<arrow::Schema>& schema) override {
    if (writer_) return arrow::Status::OK();
    ARROW_ASSIGN_OR_RAISE(writer_,
                          engine::batch::SinkWriter::Open(fs_, target_, schema, run_id_));
    return arrow::Status::OK();
  }
  arrow::Status Consume(const std::shared_ptr<arrow::RecordBatch>& batch) override {
    return writer_->Write(batch);
  }
  engine::batch::SinkWriter* writer() { return writer_.get(); }

 private:
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  engine::batch::SinkTarget target_;
  std::string run_id_;
  std::unique_ptr<engine::batch::SinkWriter> writer_;
};

// Keeps the batches in memory (views with expectations).
class CollectConsumer : public RowConsumer {
 public:
  arrow::Status Open(const std::shared_ptr<arrow::Schema>& schema) override {
    schema_ = schema;
    return arrow::Status::OK();
  }
  arrow::Status Consume(const std::shared_ptr<arrow::RecordBatch>& batch) override {
    batches_.push_back(batch);
    return arrow::Status::OK();
  }
  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
  std::vector<std::shared_ptr<arrow::RecordBatch>>& batches() { return batches_; }

 private:
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
};

}  // namespace thund::native
