// MemorySource as a stream: the batches handed in through the C++ API
// (RunOptions::memory_streams[name]), one batch per trigger.
//
//  * Next(): the next batch (take_all: every remaining batch, concatenated);
//    nullopt once all were taken. Exhausted() then is true.
//  * Position(): {"batch": N}, N = batches taken so far ("" before the first).
//    Restore() to an index past the batches given is allowed: there is
//    nothing more to take (a rerun handed fewer batches than a former run
//    took), and the source is exhausted.
//  * Every batch must have the first batch's schema (checked at Make).
//    schema() is that schema, or the declared target schema when no batch
//    was given.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/stream/stream_source.h"

namespace thund::engine::stream {

class MemoryStreamSource final : public StreamSource {
 public:
  // Fails (Invalid) when ctx.memory_batches is null (naming the flow and the
  // memory source, and RunOptions::memory_streams), a batch is null, or the
  // batches' schemas differ.
  static arrow::Result<std::unique_ptr<StreamSource>> Make(const MemorySource& spec,
                                                           const StreamSourceContext& ctx);

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Result<std::optional<SourceBatch>> Next(const TriggerLimit& limit) override;
  bool Exhausted() const override { return next_ >= batches_.size(); }
  bool PerRun() const override { return true; }
  std::string Position() const override;
  arrow::Status Restore(const std::string& position) override;

 private:
  MemoryStreamSource(std::string flow, std::shared_ptr<arrow::Schema> schema,
                     std::vector<std::shared_ptr<arrow::RecordBatch>> batches)
      : flow_(std::move(flow)), schema_(std::move(schema)), batches_(std::move(batches)) {}

  std::string flow_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  size_t next_ = 0;  // may exceed batches_.size() after Restore
};

}  // namespace thund::engine::stream
