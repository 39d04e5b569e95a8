#include "engine/stream/generator_keyed_events.h"

#include <arrow/builder.h>

#include <algorithm>
#include <string>

namespace thund::engine::stream {
namespace {

constexpr uint64_t kKeySalt = 0x4b31;
constexpr uint64_t kValueSalt = 0x5631;

int DigitsOf(int64_t n) {
  int digits = 1;
  while (n >= 10) {
    n /= 10;
    ++digits;
  }
  return digits;
}

}  // namespace

std::shared_ptr<arrow::Schema> KeyedEventsSchema() {
  return arrow::schema({
      arrow::field("event_time", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), false),
      arrow::field("key", arrow::utf8(), false),
      arrow::field("value", arrow::int64(), false),
      arrow::field("seq", arrow::int64(), false),
  });
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> GenerateKeyedEvents(const GeneratorParams& p,
                                                                       int64_t begin, int64_t end) {
  const int64_t n = end - begin;
  const int width = std::max(3, DigitsOf(p.keys - 1));
  arrow::TimestampBuilder times(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                                arrow::default_memory_pool());
  arrow::StringBuilder keys;
  arrow::Int64Builder values, seqs;
  ARROW_RETURN_NOT_OK(times.Reserve(n));
  ARROW_RETURN_NOT_OK(keys.Reserve(n));
  ARROW_RETURN_NOT_OK(keys.ReserveData(n * (width + 1)));
  ARROW_RETURN_NOT_OK(values.Reserve(n));
  ARROW_RETURN_NOT_OK(seqs.Reserve(n));
  std::string key;
  for (int64_t i = begin; i < end; ++i) {
    times.UnsafeAppend(GeneratorEventTimeUs(p, i));
    const auto k =
        static_cast<int64_t>(GeneratorHash(p.seed, i, kKeySalt) % static_cast<uint64_t>(p.keys));
    std::string digits = std::to_string(k);
    key.assign("k");
    key.append(static_cast<size_t>(std::max(0, width - static_cast<int>(digits.size()))), '0');
    key.append(digits);
    ARROW_RETURN_NOT_OK(keys.Append(key));
    values.UnsafeAppend(static_cast<int64_t>(GeneratorHash(p.seed, i, kValueSalt) % 1000));
    seqs.UnsafeAppend(i);
  }
  std::shared_ptr<arrow::Array> t, k, v, s;
  ARROW_RETURN_NOT_OK(times.Finish(&t));
  ARROW_RETURN_NOT_OK(keys.Finish(&k));
  ARROW_RETURN_NOT_OK(values.Finish(&v));
  ARROW_RETURN_NOT_OK(seqs.Finish(&s));
  return arrow::RecordBatch::Make(KeyedEventsSchema(), n, {t, k, v, s});
}

}  // namespace thund::engine::stream
