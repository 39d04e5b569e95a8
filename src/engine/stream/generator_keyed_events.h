// The "keyed_events" generator kind: one row per event.
//   event_time timestamp[us, UTC] (GeneratorEventTimeUs), key string
//   "k" + zero-padded index in [0, keys) (at least 3 digits: "k017"),
//   value int64 in [0, 1000), seq int64 = the row's offset.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/stream/generator_source.h"

namespace thund::engine::stream {

std::shared_ptr<arrow::Schema> KeyedEventsSchema();

// Rows for offsets [begin, end). REQUIRES: 0 <= begin <= end.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> GenerateKeyedEvents(const GeneratorParams& p,
                                                                       int64_t begin, int64_t end);

}  // namespace thund::engine::stream
