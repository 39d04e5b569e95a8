// GeneratorSource as a stream: deterministic, seedable rows.
//
// Every row is a pure function of (kind, seed, options, offset), so any way
// of splitting the stream into batches yields the same rows. Kinds:
//  * "keyed_events": event_time timestamp[us, UTC], key string ("k017"; one of
//    option `keys`, default 100), value int64 in [0, 1000), seq int64 = the
//    row's offset. See generator_keyed_events.h.
//  * "nexmark": the combined Nexmark event stream (nexmark.h);
//    "nexmark_person" / "nexmark_auction" / "nexmark_bid": only that stream's
//    rows, as flat columns, cut from the same combined sequence.
//
// Offsets, rows_per_batch and total_rows count *events of the combined
// sequence* for every kind: for nexmark_bid a batch of 50 events holds 46
// bids, and nexmark_bid with seed s holds exactly the bid rows of nexmark
// with seed s, batch for batch.
//
// Event time: event i is at base_time + i / events_per_second, then shifted
// back by a pseudo-random amount in [0, out_of_orderness_ms]; so a row is at
// most out_of_orderness_ms earlier than any row before it.
//
// Options (GeneratorSource fields and its options map):
//   rows_per_batch > 0 (events per Next); total_rows >= 0 (0 = unbounded);
//   events_per_second >= 0 (0 = 1000); out_of_orderness_ms >= 0;
//   options: base_time (ISO-8601, default 2026-01-01T00:00:00Z),
//            keys (keyed_events only, > 0, default 100).
// Next(take_all): every remaining row up to total_rows; with total_rows = 0
// one batch of rows_per_batch. Position(): {"offset": N} ("" at 0).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/stream/stream_source.h"

namespace thund::engine::stream {

// The IR's generator kinds (thund/ir.h).
using GeneratorKind = thund::GeneratorKind;

// Validated generator settings (defaults applied).
struct GeneratorParams {
  GeneratorKind kind = GeneratorKind::kKeyedEvents;
  uint64_t seed = 0;
  int64_t rows_per_batch = 1000;
  int64_t total_rows = 0;
  int64_t events_per_second = 1000;
  int64_t out_of_orderness_ms = 0;
  int64_t base_time_us = 0;  // microseconds since the Unix epoch, UTC
  int64_t keys = 100;
};

// Invalid, naming the flow and the option, for: rows_per_batch <= 0,
// total_rows < 0, events_per_second < 0, out_of_orderness_ms < 0, an unknown
// option key, a bad base_time or keys.
arrow::Result<GeneratorParams> ParseGeneratorParams(const GeneratorSource& spec,
                                                    const std::string& flow);

// A well-mixed 64-bit hash of (seed, offset, salt): the generators' only
// source of randomness.
uint64_t GeneratorHash(uint64_t seed, int64_t offset, uint64_t salt);

// The event time (µs since epoch, UTC) of the event at `offset`.
int64_t GeneratorEventTimeUs(const GeneratorParams& p, int64_t offset);

// The schema of `kind`'s rows.
std::shared_ptr<arrow::Schema> GeneratorSchema(GeneratorKind kind);

// The rows of events [begin, end). REQUIRES: 0 <= begin <= end.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> GenerateRows(const GeneratorParams& p,
                                                                int64_t begin, int64_t end);

class GeneratorStreamSource final : public StreamSource {
 public:
  static arrow::Result<std::unique_ptr<StreamSource>> Make(const GeneratorSource& spec,
                                                           const StreamSourceContext& ctx);

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Result<std::optional<SourceBatch>> Next(const TriggerLimit& limit) override;
  bool Exhausted() const override {
    return params_.total_rows > 0 && offset_ >= params_.total_rows;
  }
  std::string Position() const override;
  arrow::Status Restore(const std::string& position) override;

 private:
  GeneratorStreamSource(std::string flow, GeneratorParams params)
      : flow_(std::move(flow)), params_(params), schema_(GeneratorSchema(params.kind)) {}

  std::string flow_;
  GeneratorParams params_;
  std::shared_ptr<arrow::Schema> schema_;
  int64_t offset_ = 0;
};

}  // namespace thund::engine::stream
