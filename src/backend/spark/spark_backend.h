// SparkBackend: runs a pipeline on Apache Spark Declarative Pipelines through
// Spark Connect. The pipeline is lowered (spark_lowering.h) and checked first:
// what Spark cannot run is refused before any connection is made. Then the
// graph is defined on the server, a run is started, and Spark's pipeline
// events become thund RunEvents; report items are kFallback events and notes.
//
// A flow that fails on Spark fails the run (spark-pipelines itself exits 0
// and prints COMPLETED then); a server that cannot be reached is an error
// Status naming the address.
#pragma once

#include <memory>
#include <string>

#include "backend/spark/spark_lowering.h"
#include "thund/backend.h"

namespace thund::spark {

struct SparkBackendOptions {
  std::string remote = "sc://127.0.0.1:15002";
  SparkVersion version = kDefaultSparkVersion;
  std::string storage;  // checkpoints root on Spark; "" = SparkLowerOptions' default
  int64_t connect_timeout_ms = 10000;
};

class SparkBackend : public ExecBackend {
 public:
  static std::unique_ptr<SparkBackend> Make(SparkBackendOptions options = {});
  std::string name() const override { return "spark"; }
  Capabilities capabilities() const override { return SparkCapabilities(options_.version); }
  Diagnostics Check(const Pipeline& p) const override;
  // RunOptions: full_refresh, full_refresh_all, refresh and on_event are
  // honoured, and storage_root places Spark's checkpoints ("<root>/spark")
  // unless SparkBackendOptions::storage is set; the native-only fields and
  // `stop` are ignored (an SDP run ends when its input is processed).
  arrow::Result<RunSummary> Run(const Pipeline& p, const RunOptions& options) override;

 private:
  explicit SparkBackend(SparkBackendOptions o) : options_(std::move(o)) {}
  SparkBackendOptions options_;
};

// One pipeline event message of Spark ("Flow spark_catalog.default.x has
// COMPLETED.", "Flow 'x' has FAILED.\nError: ...", "Failed to resolve flow:
// 'x'.\nError: ..." = FAILED) as (flow, state); flow is the last part of
// Spark's qualified name. nullopt for other messages.
struct SparkFlowEvent {
  std::string flow;
  std::string state;  // QUEUED, PLANNING, STARTING, RUNNING, COMPLETED, FAILED, ...
};
std::optional<SparkFlowEvent> ParseSparkFlowEvent(const std::string& message);

}  // namespace thund::spark
