// Nexmark generator kinds: proportions, references to earlier entities, the
// per-entity kinds as projections of the combined stream, event-time bounds.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "engine/stream/stream_source.h"
#include "engine/table_compare.h"

namespace thund::engine::stream {
namespace {

using testing::TablesEqualOrdered;

std::shared_ptr<arrow::Table> Generate(const std::string& kind, uint64_t seed, int64_t total,
                                       int64_t rows_per_batch = 64,
                                       int64_t out_of_orderness_ms = 0) {
  Dataset target = Dataset::StreamingTable("events");
  GeneratorSource g;
  g.kind = ParseGeneratorKind(kind).value();
  g.seed = seed;
  g.total_rows = total;
  g.rows_per_batch = rows_per_batch;
  g.out_of_orderness_ms = out_of_orderness_ms;
  Flow flow = Flow::FromSource("nexmark_feed", "events", g);
  StreamSourceContext ctx;
  ctx.flow = &flow;
  ctx.target = &target;
  auto src = MakeStreamSource(*flow.source, ctx).ValueOrDie();
  std::vector<std::shared_ptr<arrow::Table>> parts;
  while (!src->Exhausted()) parts.push_back((*src->Next({}).ValueOrDie()).rows);
  return arrow::ConcatenateTables(parts).ValueOrDie()->CombineChunks().ValueOrDie();
}

// Row i of struct column `column`'s child `field` (REQUIRES int64/timestamp).
int64_t Int(const arrow::Table& t, const std::string& column, const std::string& field, int64_t i) {
  auto s = std::static_pointer_cast<arrow::StructArray>(t.GetColumnByName(column)->chunk(0));
  auto child = s->GetFieldByName(field);
  return std::static_pointer_cast<arrow::Int64Array>(child->View(arrow::int64()).ValueOrDie())
      ->Value(i);
}

bool Valid(const arrow::Table& t, const std::string& column, int64_t i) {
  return t.GetColumnByName(column)->chunk(0)->IsValid(i);
}

TEST(NexmarkSourceTest, EveryFiftyEventsAreOnePersonThreeAuctionsFortySixBids) {
  auto t = Generate("nexmark", 5, 1000);
  ASSERT_EQ(t->num_rows(), 1000);
  auto types =
      std::static_pointer_cast<arrow::Int32Array>(t->GetColumnByName("event_type")->chunk(0));
  const std::array<std::string, 3> structs = {"person", "auction", "bid"};
  for (int64_t block = 0; block < 20; ++block) {
    std::array<int, 3> counts = {0, 0, 0};
    for (int64_t i = block * 50; i < block * 50 + 50; ++i) {
      const int type = types->Value(i);
      ASSERT_GE(type, 0);
      ASSERT_LE(type, 2);
      ++counts[type];
      for (int k = 0; k < 3; ++k) EXPECT_EQ(Valid(*t, structs[k], i), k == type) << i;
    }
    EXPECT_EQ(counts, (std::array<int, 3>{1, 3, 46})) << "block " << block;
  }
}

TEST(NexmarkSourceTest, ReferencesPointToEntitiesGeneratedEarlier) {
  auto t = Generate("nexmark", 9, 5000);
  auto types =
      std::static_pointer_cast<arrow::Int32Array>(t->GetColumnByName("event_type")->chunk(0));
  std::vector<int64_t> persons, auctions;
  int64_t recent_auction_refs = 0, bids = 0;
  for (int64_t i = 0; i < t->num_rows(); ++i) {
    switch (types->Value(i)) {
      case 0: {
        const int64_t id = Int(*t, "person", "id", i);
        EXPECT_EQ(std::count(persons.begin(), persons.end(), id), 0) << "person id repeats";
        persons.push_back(id);
        break;
      }
      case 1: {
        const int64_t seller = Int(*t, "auction", "seller", i);
        EXPECT_EQ(std::count(persons.begin(), persons.end(), seller), 1) << "row " << i;
        const int64_t id = Int(*t, "auction", "id", i);
        EXPECT_EQ(std::count(auctions.begin(), auctions.end(), id), 0) << "auction id repeats";
        auctions.push_back(id);
        EXPECT_GT(Int(*t, "auction", "expires", i), Int(*t, "auction", "date_time", i));
        EXPECT_GE(Int(*t, "auction", "reserve", i), Int(*t, "auction", "initial_bid", i));
        break;
      }
      default: {
        const int64_t auction = Int(*t, "bid", "auction", i);
        auto at = std::find(auctions.begin(), auctions.end(), auction);
        ASSERT_NE(at, auctions.end()) << "bid at row " << i << " names unknown auction " << auction;
        if (auctions.end() - at <= 16) ++recent_auction_refs;
        ++bids;
        EXPECT_EQ(std::count(persons.begin(), persons.end(), Int(*t, "bid", "bidder", i)), 1);
        EXPECT_GT(Int(*t, "bid", "price", i), 0);
      }
    }
  }
  EXPECT_EQ(bids, 4600);
  // Mostly recent auctions (the generator aims at 8 in 10 among the last 16).
  EXPECT_GT(recent_auction_refs, bids * 7 / 10);
  EXPECT_LT(recent_auction_refs, bids);
}

// The struct column `column` flattened to top-level columns, rows of `type` only.
std::shared_ptr<arrow::Table> RowsOf(const arrow::Table& t, int type, const std::string& column) {
  auto types = t.GetColumnByName("event_type")->chunk(0);
  auto mask =
      arrow::compute::CallFunction("equal", {types, std::make_shared<arrow::Int32Scalar>(type)})
          .ValueOrDie();
  auto s = std::static_pointer_cast<arrow::StructArray>(t.GetColumnByName(column)->chunk(0));
  arrow::ArrayVector children = s->Flatten().ValueOrDie();
  arrow::ArrayVector kept;
  for (const auto& c : children) {
    kept.push_back(arrow::compute::Filter(c, mask).ValueOrDie().make_array());
  }
  auto fields = std::static_pointer_cast<arrow::StructType>(s->type())->fields();
  return arrow::Table::Make(arrow::schema(fields), kept);
}

TEST(NexmarkSourceTest, PerEntityKindsAreTheCombinedStreamsRows) {
  auto all = Generate("nexmark", 42, 2000, 100, 250);
  const std::vector<std::pair<std::string, int>> kinds = {
      {"person", 0}, {"auction", 1}, {"bid", 2}};
  for (const auto& [entity, type] : kinds) {
    SCOPED_TRACE(entity);
    // A different batch size: offsets count combined events, so rows match.
    auto only = Generate("nexmark_" + entity, 42, 2000, 37, 250);
    auto expected = RowsOf(*all, type, entity);
    EXPECT_TRUE(TablesEqualOrdered(*expected, *only));
  }
  EXPECT_EQ(Generate("nexmark_bid", 42, 2000)->num_rows(), 1840);
  // Another seed gives other bids.
  auto other = Generate("nexmark_bid", 43, 2000);
  EXPECT_FALSE(TablesEqualOrdered(*RowsOf(*all, 2, "bid"), *other));
}

TEST(NexmarkSourceTest, PerEntityBatchesCountCombinedEvents) {
  Dataset target = Dataset::StreamingTable("people");
  GeneratorSource g;
  g.kind = GeneratorKind::kNexmarkPerson;
  g.rows_per_batch = 10;
  g.total_rows = 100;
  Flow flow = Flow::FromSource("people_feed", "people", g);
  StreamSourceContext ctx;
  ctx.flow = &flow;
  ctx.target = &target;
  auto src = MakeStreamSource(*flow.source, ctx).ValueOrDie();
  std::vector<int64_t> sizes;
  while (!src->Exhausted()) sizes.push_back((*src->Next({}).ValueOrDie()).rows->num_rows());
  EXPECT_EQ(sizes, (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(src->Position(), R"({"offset":100})");
}

TEST(NexmarkSourceTest, StandardFieldNames) {
  auto t = Generate("nexmark", 1, 50);
  auto names = [&](const std::string& column) {
    return std::static_pointer_cast<arrow::StructType>(t->schema()->GetFieldByName(column)->type())
        ->fields();
  };
  std::vector<std::string> got;
  for (const auto& f : names("person")) got.push_back(f->name());
  EXPECT_EQ(got, (std::vector<std::string>{"id", "name", "email_address", "credit_card", "city",
                                           "state", "date_time", "extra"}));
  got.clear();
  for (const auto& f : names("auction")) got.push_back(f->name());
  EXPECT_EQ(got,
            (std::vector<std::string>{"id", "item_name", "description", "initial_bid", "reserve",
                                      "date_time", "expires", "seller", "category", "extra"}));
  got.clear();
  for (const auto& f : names("bid")) got.push_back(f->name());
  EXPECT_EQ(got, (std::vector<std::string>{"auction", "bidder", "price", "channel", "url",
                                           "date_time", "extra"}));
}

TEST(NexmarkSourceTest, EventTimeOutOfOrderByAtMostTheBound) {
  auto t = Generate("nexmark", 3, 3000, 500, 75);
  auto types =
      std::static_pointer_cast<arrow::Int32Array>(t->GetColumnByName("event_type")->chunk(0));
  const std::array<std::string, 3> structs = {"person", "auction", "bid"};
  int64_t max_seen = INT64_MIN, worst = 0;
  for (int64_t i = 0; i < t->num_rows(); ++i) {
    const int64_t time = Int(*t, structs[types->Value(i)], "date_time", i);
    if (i > 0) worst = std::max(worst, max_seen - time);
    max_seen = std::max(max_seen, time);
  }
  EXPECT_LE(worst, 75000);
  EXPECT_GT(worst, 50000);
}

}  // namespace
}  // namespace thund::engine::stream
