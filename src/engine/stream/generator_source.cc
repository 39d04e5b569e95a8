#include "engine/stream/generator_source.h"

#include <arrow/scalar.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "engine/stream/generator_keyed_events.h"
#include "engine/stream/nexmark.h"
#include "thund/json_text.h"

namespace thund::engine::stream {
namespace {

arrow::Status BadOption(const std::string& flow, const std::string& what) {
  return arrow::Status::Invalid("flow '", flow, "': generator ", what);
}

}  // namespace

arrow::Result<GeneratorParams> ParseGeneratorParams(const GeneratorSource& spec,
                                                    const std::string& flow) {
  GeneratorParams p;
  p.kind = spec.kind;
  p.seed = spec.seed;
  if (spec.rows_per_batch <= 0) {
    return BadOption(flow, "rows_per_batch = " + std::to_string(spec.rows_per_batch) +
                               ": must be positive (rows generated per trigger)");
  }
  if (spec.total_rows < 0) {
    return BadOption(
        flow, "total_rows = " + std::to_string(spec.total_rows) + ": must be >= 0 (0 = unbounded)");
  }
  if (spec.events_per_second < 0) {
    return BadOption(flow, "events_per_second = " + std::to_string(spec.events_per_second) +
                               ": must be >= 0 (0 = the default, 1000)");
  }
  if (spec.out_of_orderness_ms < 0) {
    return BadOption(flow, "out_of_orderness_ms = " + std::to_string(spec.out_of_orderness_ms) +
                               ": must be >= 0 (0 = event time in order)");
  }
  p.rows_per_batch = spec.rows_per_batch;
  p.total_rows = spec.total_rows;
  if (spec.events_per_second > 0) p.events_per_second = spec.events_per_second;
  p.out_of_orderness_ms = spec.out_of_orderness_ms;
  p.base_time_us = 1767225600LL * 1000000;  // 2026-01-01T00:00:00Z
  for (const auto& [key, value] : spec.options) {
    if (key == "base_time") {
      auto parsed = arrow::Scalar::Parse(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), value);
      if (!parsed.ok()) {
        return BadOption(flow, "option base_time = '" + value +
                                   "' is not a timestamp; write e.g. 2026-01-01T00:00:00Z");
      }
      p.base_time_us = static_cast<const arrow::TimestampScalar&>(**parsed).value;
    } else if (key == "keys" && p.kind == GeneratorKind::kKeyedEvents) {
      int64_t keys = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), keys);
      if (ec != std::errc() || end != value.data() + value.size() || keys <= 0) {
        return BadOption(flow, "option keys = '" + value +
                                   "': must be a positive integer (the number of distinct keys)");
      }
      p.keys = keys;
    } else {
      const char* valid = p.kind == GeneratorKind::kKeyedEvents ? "base_time, keys" : "base_time";
      return BadOption(flow, "option '" + key + "' is unknown for kind '" + Name(spec.kind) +
                                 "'; valid options: " + valid);
    }
  }
  return p;
}

uint64_t GeneratorHash(uint64_t seed, int64_t offset, uint64_t salt) {
  // Combine, then a 64-bit finalizer (xor-shift / multiply rounds).
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL;
  x ^= static_cast<uint64_t>(offset) + 0x632be59bd9b4e019ULL + (x << 6) + (x >> 2);
  x ^= salt * 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return x;
}

int64_t GeneratorEventTimeUs(const GeneratorParams& p, int64_t offset) {
  const auto steady =
      static_cast<int64_t>(static_cast<__int128>(offset) * 1000000 / p.events_per_second);
  int64_t shift = 0;
  if (p.out_of_orderness_ms > 0) {
    const auto span = static_cast<uint64_t>(p.out_of_orderness_ms) * 1000 + 1;
    shift = static_cast<int64_t>(GeneratorHash(p.seed, offset, /*salt=*/0x7131) % span);
  }
  return p.base_time_us + steady - shift;
}

std::shared_ptr<arrow::Schema> GeneratorSchema(GeneratorKind kind) {
  if (kind == GeneratorKind::kKeyedEvents) return KeyedEventsSchema();
  return NexmarkSchema(kind);
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> GenerateRows(const GeneratorParams& p,
                                                                int64_t begin, int64_t end) {
  if (p.kind == GeneratorKind::kKeyedEvents) return GenerateKeyedEvents(p, begin, end);
  return GenerateNexmark(p, begin, end);
}

arrow::Result<std::unique_ptr<StreamSource>> GeneratorStreamSource::Make(
    const GeneratorSource& spec, const StreamSourceContext& ctx) {
  const std::string flow = ctx.flow != nullptr ? ctx.flow->name : std::string("?");
  ARROW_ASSIGN_OR_RAISE(auto params, ParseGeneratorParams(spec, flow));
  return std::unique_ptr<StreamSource>(new GeneratorStreamSource(flow, params));
}

arrow::Result<std::optional<SourceBatch>> GeneratorStreamSource::Next(const TriggerLimit& limit) {
  if (Exhausted()) return std::nullopt;
  int64_t end = offset_ + params_.rows_per_batch;
  if (limit.take_all && params_.total_rows > 0) end = params_.total_rows;
  if (params_.total_rows > 0) end = std::min(end, params_.total_rows);
  ARROW_ASSIGN_OR_RAISE(auto batch, GenerateRows(params_, offset_, end));
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, {batch}));
  offset_ = end;
  SourceBatch out;
  out.rows = std::move(table);
  out.position_summary = "offset=" + std::to_string(offset_);
  return out;
}

std::string GeneratorStreamSource::Position() const {
  if (offset_ == 0) return "";
  return JsonText(nlohmann::json{{"offset", offset_}});
}

arrow::Status GeneratorStreamSource::Restore(const std::string& position) {
  if (position.empty()) {
    offset_ = 0;
    return arrow::Status::OK();
  }
  auto doc = nlohmann::json::parse(position, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("offset") ||
      !doc["offset"].is_number_unsigned()) {
    return arrow::Status::Invalid("flow '", flow_, "': '", position,
                                  "' is not a generator position (expected {\"offset\": N}); "
                                  "the checkpoint belongs to another kind of source");
  }
  offset_ = doc["offset"].get<int64_t>();
  return arrow::Status::OK();
}

}  // namespace thund::engine::stream
