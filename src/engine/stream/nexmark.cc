#include "engine/stream/nexmark.h"

#include <arrow/builder.h>
#include <arrow/table_builder.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace thund::engine::stream {
namespace {

constexpr int64_t kFirstId = 1000;
constexpr int64_t kBlock = 50;    // events per block: 1 person, 3 auctions, 46 bids
constexpr int64_t kAuctions = 3;  // auctions per block
constexpr int64_t kHotSet = 16;   // "recent" entities a reference mostly points to

// Salts: one per random choice, so choices of one event are independent.
enum Salt : uint64_t {
  kFirstName = 101,
  kLastName,
  kDomain,
  kCard1,
  kCard2,
  kPlace,
  kExtra,
  kAdjective,
  kNoun,
  kCondition,
  kInitialBid,
  kReserve,
  kExpires,
  kSellerHot,
  kSeller,
  kCategory,
  kAuctionHot,
  kAuction,
  kBidderHot,
  kBidder,
  kPrice,
  kChannel,
};

constexpr std::array kFirstNames = {"Alice", "Bruno",  "Chen",  "Dana",  "Emeka", "Farah", "Gustav",
                                    "Hana",  "Ivan",   "Jun",   "Kofi",  "Lena",  "Mateo", "Nadia",
                                    "Omar",  "Priya",  "Quinn", "Rosa",  "Sven",  "Tara",  "Uma",
                                    "Wen",   "Viktor", "Yara",  "Zoltan"};
constexpr std::array kLastNames = {
    "Abbott", "Baker",    "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito",
    "Jansen", "Kowalski", "Lopez", "Moreau", "Novak",   "Okafor",  "Petrov", "Quist",  "Rossi",
    "Sato",   "Tanaka",   "Ueda",  "Varga",  "Weber",   "Xu",      "Young"};
constexpr std::array<std::pair<const char*, const char*>, 12> kPlaces = {{{"Portland", "OR"},
                                                                          {"Boise", "ID"},
                                                                          {"Austin", "TX"},
                                                                          {"Denver", "CO"},
                                                                          {"Madison", "WI"},
                                                                          {"Raleigh", "NC"},
                                                                          {"Tucson", "AZ"},
                                                                          {"Albany", "NY"},
                                                                          {"Fresno", "CA"},
                                                                          {"Reno", "NV"},
                                                                          {"Omaha", "NE"},
                                                                          {"Salem", "MA"}}};
constexpr std::array kDomains = {"example.com", "mail.example", "post.example"};
constexpr std::array kAdjectives = {"antique", "rare", "vintage",  "hand-made",
                                    "signed",  "mint", "restored", "faded"};
constexpr std::array kNouns = {"clock",  "lamp",  "chair",  "vase",    "guitar",
                               "camera", "atlas", "teapot", "bicycle", "painting"};
constexpr std::array kConditions = {"good", "fair", "excellent", "used", "like-new"};
constexpr std::array kChannels = {"web", "mobile", "partner", "api"};

template <typename Array>
const char* Choose(const Array& a, uint64_t h) {
  return a[h % a.size()];
}

uint64_t H(const GeneratorParams& p, int64_t offset, Salt salt) {
  return GeneratorHash(p.seed, offset, salt);
}

// An index in [0, count): mostly one of the kHotSet highest, else any.
int64_t PickEarlier(const GeneratorParams& p, int64_t offset, Salt hot, Salt which, int64_t count) {
  const uint64_t h = H(p, offset, which);
  if (H(p, offset, hot) % 10 < 8) {
    const int64_t n = std::min(count, kHotSet);
    return count - 1 - static_cast<int64_t>(h % static_cast<uint64_t>(n));
  }
  return static_cast<int64_t>(h % static_cast<uint64_t>(count));
}

std::string Extra(const GeneratorParams& p, int64_t offset) {
  const uint64_t h = H(p, offset, kExtra);
  std::string out(h % 12, ' ');
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>('a' + (h >> (5 * i + 4)) % 26);
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::shared_ptr<arrow::DataType> Ts() { return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"); }

arrow::FieldVector PersonFields() {
  return {arrow::field("id", arrow::int64()),
          arrow::field("name", arrow::utf8()),
          arrow::field("email_address", arrow::utf8()),
          arrow::field("credit_card", arrow::utf8()),
          arrow::field("city", arrow::utf8()),
          arrow::field("state", arrow::utf8()),
          arrow::field("date_time", Ts()),
          arrow::field("extra", arrow::utf8())};
}

arrow::FieldVector AuctionFields() {
  return {arrow::field("id", arrow::int64()),
          arrow::field("item_name", arrow::utf8()),
          arrow::field("description", arrow::utf8()),
          arrow::field("initial_bid", arrow::int64()),
          arrow::field("reserve", arrow::int64()),
          arrow::field("date_time", Ts()),
          arrow::field("expires", Ts()),
          arrow::field("seller", arrow::int64()),
          arrow::field("category", arrow::int64()),
          arrow::field("extra", arrow::utf8())};
}

arrow::FieldVector BidFields() {
  return {arrow::field("auction", arrow::int64()), arrow::field("bidder", arrow::int64()),
          arrow::field("price", arrow::int64()),   arrow::field("channel", arrow::utf8()),
          arrow::field("url", arrow::utf8()),      arrow::field("date_time", Ts()),
          arrow::field("extra", arrow::utf8())};
}

// The builders of one entity's fields, in field order.
class Row {
 public:
  explicit Row(std::vector<arrow::ArrayBuilder*> cols) : cols_(std::move(cols)) {}
  Row& Int(int64_t v) { return Done(static_cast<arrow::Int64Builder*>(Next())->Append(v)); }
  Row& Time(int64_t v) { return Done(static_cast<arrow::TimestampBuilder*>(Next())->Append(v)); }
  Row& Str(const std::string& v) {
    return Done(static_cast<arrow::StringBuilder*>(Next())->Append(v));
  }
  arrow::Status Finish() {
    ARROW_RETURN_NOT_OK(status_);
    at_ = 0;
    return arrow::Status::OK();
  }

 private:
  arrow::ArrayBuilder* Next() { return cols_[at_++]; }
  Row& Done(arrow::Status st) {
    if (status_.ok()) status_ = std::move(st);
    return *this;
  }
  std::vector<arrow::ArrayBuilder*> cols_;
  size_t at_ = 0;
  arrow::Status status_;
};

arrow::Status AppendPerson(Row& row, const GeneratorParams& p, int64_t off) {
  const int64_t id = kFirstId + off / kBlock;
  const std::string first = Choose(kFirstNames, H(p, off, kFirstName));
  const std::string last = Choose(kLastNames, H(p, off, kLastName));
  char card[24];
  const uint64_t c1 = H(p, off, kCard1) % 100000000, c2 = H(p, off, kCard2) % 100000000;
  std::snprintf(card, sizeof(card), "%04u %04u %04u %04u", static_cast<unsigned>(c1 / 10000),
                static_cast<unsigned>(c1 % 10000), static_cast<unsigned>(c2 / 10000),
                static_cast<unsigned>(c2 % 10000));
  const auto& place = kPlaces[H(p, off, kPlace) % kPlaces.size()];
  row.Int(id)
      .Str(first + " " + last)
      .Str(Lower(first) + "." + Lower(last) + std::to_string(id) + "@" +
           Choose(kDomains, H(p, off, kDomain)))
      .Str(card)
      .Str(place.first)
      .Str(place.second)
      .Time(GeneratorEventTimeUs(p, off))
      .Str(Extra(p, off));
  return row.Finish();
}

arrow::Status AppendAuction(Row& row, const GeneratorParams& p, int64_t off) {
  const int64_t block = off / kBlock;
  const int64_t id = kFirstId + block * kAuctions + (off % kBlock - 1);
  const std::string item = std::string(Choose(kAdjectives, H(p, off, kAdjective))) + " " +
                           Choose(kNouns, H(p, off, kNoun));
  const auto initial = static_cast<int64_t>(100 + H(p, off, kInitialBid) % 9900);
  const int64_t time = GeneratorEventTimeUs(p, off);
  const auto lifetime_s = static_cast<int64_t>(10 + H(p, off, kExpires) % 110);
  const int64_t persons = block + 1;  // this block's person comes first
  row.Int(id)
      .Str(item)
      .Str("A " + item + " in " + Choose(kConditions, H(p, off, kCondition)) + " condition")
      .Int(initial)
      .Int(initial + static_cast<int64_t>(H(p, off, kReserve) % 5000))
      .Time(time)
      .Time(time + lifetime_s * 1000000)
      .Int(kFirstId + PickEarlier(p, off, kSellerHot, kSeller, persons))
      .Int(static_cast<int64_t>(10 + H(p, off, kCategory) % 5))
      .Str(Extra(p, off));
  return row.Finish();
}

arrow::Status AppendBid(Row& row, const GeneratorParams& p, int64_t off) {
  const int64_t block = off / kBlock;
  const int64_t auction =
      kFirstId + PickEarlier(p, off, kAuctionHot, kAuction, (block + 1) * kAuctions);
  const std::string channel = Choose(kChannels, H(p, off, kChannel));
  row.Int(auction)
      .Int(kFirstId + PickEarlier(p, off, kBidderHot, kBidder, block + 1))
      .Int(static_cast<int64_t>(1 + H(p, off, kPrice) % 100000))
      .Str(channel)
      .Str("https://auctions.example/item/" + std::to_string(auction) + "?via=" + channel)
      .Time(GeneratorEventTimeUs(p, off))
      .Str(Extra(p, off));
  return row.Finish();
}

arrow::Status AppendEntity(NexmarkEventType type, Row& row, const GeneratorParams& p, int64_t off) {
  switch (type) {
    case NexmarkEventType::kPerson:
      return AppendPerson(row, p, off);
    case NexmarkEventType::kAuction:
      return AppendAuction(row, p, off);
    case NexmarkEventType::kBid:
      return AppendBid(row, p, off);
  }
  return arrow::Status::OK();
}

std::vector<arrow::ArrayBuilder*> Children(arrow::StructBuilder* b) {
  std::vector<arrow::ArrayBuilder*> out;
  for (int i = 0; i < b->num_fields(); ++i) out.push_back(b->field_builder(i));
  return out;
}

}  // namespace

NexmarkEventType NexmarkTypeOf(int64_t offset) {
  const int64_t r = offset % kBlock;
  if (r == 0) return NexmarkEventType::kPerson;
  if (r <= kAuctions) return NexmarkEventType::kAuction;
  return NexmarkEventType::kBid;
}

std::shared_ptr<arrow::Schema> NexmarkSchema(GeneratorKind kind) {
  switch (kind) {
    case GeneratorKind::kNexmarkPerson:
      return arrow::schema(PersonFields());
    case GeneratorKind::kNexmarkAuction:
      return arrow::schema(AuctionFields());
    case GeneratorKind::kNexmarkBid:
      return arrow::schema(BidFields());
    default:
      return arrow::schema({arrow::field("event_type", arrow::int32(), false),
                            arrow::field("person", arrow::struct_(PersonFields())),
                            arrow::field("auction", arrow::struct_(AuctionFields())),
                            arrow::field("bid", arrow::struct_(BidFields()))});
  }
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> GenerateNexmark(const GeneratorParams& p,
                                                                   int64_t begin, int64_t end) {
  auto schema = NexmarkSchema(p.kind);
  ARROW_ASSIGN_OR_RAISE(
      auto rb, arrow::RecordBatchBuilder::Make(schema, arrow::default_memory_pool(), end - begin));
  if (p.kind == GeneratorKind::kNexmark) {
    auto* types = rb->GetFieldAs<arrow::Int32Builder>(0);
    std::array<arrow::StructBuilder*, 3> structs;
    std::vector<Row> rows;
    for (int k = 0; k < 3; ++k) {
      structs[k] = rb->GetFieldAs<arrow::StructBuilder>(k + 1);
      rows.emplace_back(Children(structs[k]));
    }
    for (int64_t off = begin; off < end; ++off) {
      const NexmarkEventType type = NexmarkTypeOf(off);
      const int t = static_cast<int>(type);
      ARROW_RETURN_NOT_OK(types->Append(t));
      for (int k = 0; k < 3; ++k) {
        if (k != t) {
          ARROW_RETURN_NOT_OK(structs[k]->AppendNull());
          continue;
        }
        ARROW_RETURN_NOT_OK(structs[k]->Append());
        ARROW_RETURN_NOT_OK(AppendEntity(type, rows[k], p, off));
      }
    }
    return rb->Flush();
  }
  const auto only = p.kind == GeneratorKind::kNexmarkPerson    ? NexmarkEventType::kPerson
                    : p.kind == GeneratorKind::kNexmarkAuction ? NexmarkEventType::kAuction
                                                               : NexmarkEventType::kBid;
  std::vector<arrow::ArrayBuilder*> cols;
  for (int i = 0; i < rb->num_fields(); ++i) cols.push_back(rb->GetField(i));
  Row row(std::move(cols));
  for (int64_t off = begin; off < end; ++off) {
    if (NexmarkTypeOf(off) == only) ARROW_RETURN_NOT_OK(AppendEntity(only, row, p, off));
  }
  return rb->Flush();
}

}  // namespace thund::engine::stream
