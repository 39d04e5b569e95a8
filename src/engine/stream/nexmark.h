// The Nexmark auction benchmark's event streams, generated deterministically.
//
// One combined sequence of events; within every block of 50 consecutive
// offsets, offset % 50 == 0 is a person, 1..3 are auctions, 4..49 are bids
// (the standard 1 : 3 : 46 proportions). Ids start at 1000: the person of
// block b has id 1000 + b, its auctions 1000 + 3b .. 1000 + 3b + 2.
// References point to entities already generated (offset before the
// referring event): an auction's seller and a bid's bidder are persons, a
// bid's auction an auction; mostly (8 in 10) one of the 16 most recent, else
// any earlier one.
//
// Row shapes (all timestamps timestamp[us, UTC], ids and money int64):
//   person  {id, name, email_address, credit_card, city, state, date_time, extra}
//   auction {id, item_name, description, initial_bid, reserve, date_time,
//            expires, seller, category, extra}
//   bid     {auction, bidder, price, channel, url, date_time, extra}
// Kind nexmark: event_type int32 (0 person, 1 auction, 2 bid) and nullable
// struct columns person, auction, bid (exactly the one of event_type set).
// Kinds nexmark_person / _auction / _bid: that entity's fields as flat
// columns, one row per event of that type.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/stream/generator_source.h"

namespace thund::engine::stream {

enum class NexmarkEventType : int32_t { kPerson = 0, kAuction = 1, kBid = 2 };

NexmarkEventType NexmarkTypeOf(int64_t offset);

// REQUIRES: kind is one of the nexmark kinds.
std::shared_ptr<arrow::Schema> NexmarkSchema(GeneratorKind kind);

// Rows for the events [begin, end) of the combined sequence (only the kind's
// own events for the per-entity kinds). REQUIRES: 0 <= begin <= end.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> GenerateNexmark(const GeneratorParams& p,
                                                                   int64_t begin, int64_t end);

}  // namespace thund::engine::stream
