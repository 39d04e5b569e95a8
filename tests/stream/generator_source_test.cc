// Generator streams (keyed_events, and the splitting/option rules shared by
// every kind): rows are a pure function of (kind, seed, offset).
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "engine/stream/stream_source.h"
#include "engine/table_compare.h"

namespace thund::engine::stream {
namespace {

using testing::TablesEqualOrdered;

constexpr int64_t k2026Us = 1767225600LL * 1000000;  // 2026-01-01T00:00:00Z

arrow::Result<std::unique_ptr<StreamSource>> MakeGen(const GeneratorSource& g,
                                                     const std::string& flow_name = "gen") {
  static Dataset target = Dataset::StreamingTable("events");
  auto flow = std::make_shared<Flow>(Flow::FromSource(flow_name, "events", g));
  StreamSourceContext ctx;
  ctx.flow = flow.get();
  ctx.target = &target;
  return MakeStreamSource(*flow->source, ctx);
}

GeneratorSource Gen(std::string kind, uint64_t seed, int64_t rows_per_batch, int64_t total) {
  GeneratorSource g;
  g.kind = ParseGeneratorKind(kind).value();
  g.seed = seed;
  g.rows_per_batch = rows_per_batch;
  g.total_rows = total;
  return g;
}

// Every row of a bounded source, in order, with the sizes of the batches.
std::shared_ptr<arrow::Table> Drain(StreamSource& src, std::vector<int64_t>* sizes = nullptr,
                                    TriggerLimit limit = {}) {
  std::vector<std::shared_ptr<arrow::Table>> parts;
  for (int guard = 0; !src.Exhausted() && guard < 100000; ++guard) {
    auto next = src.Next(limit);
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    if (!next.ok() || !next->has_value()) break;
    if (sizes) sizes->push_back((*next)->rows->num_rows());
    parts.push_back((*next)->rows);
  }
  return arrow::ConcatenateTables(parts).ValueOrDie();
}

std::vector<int64_t> Int64s(const arrow::Table& t, const std::string& column) {
  std::vector<int64_t> out;
  for (const auto& chunk : t.GetColumnByName(column)->chunks()) {
    if (chunk->type_id() == arrow::Type::TIMESTAMP) {
      auto a = std::static_pointer_cast<arrow::TimestampArray>(chunk);
      for (int64_t i = 0; i < a->length(); ++i) out.push_back(a->Value(i));
    } else {
      auto a = std::static_pointer_cast<arrow::Int64Array>(chunk);
      for (int64_t i = 0; i < a->length(); ++i) out.push_back(a->Value(i));
    }
  }
  return out;
}

std::vector<std::string> Strings(const arrow::Table& t, const std::string& column) {
  std::vector<std::string> out;
  for (const auto& chunk : t.GetColumnByName(column)->chunks()) {
    auto a = std::static_pointer_cast<arrow::StringArray>(chunk);
    for (int64_t i = 0; i < a->length(); ++i) out.push_back(a->GetString(i));
  }
  return out;
}

TEST(GeneratorSourceTest, SameRowsWhateverTheBatchSplitting) {
  for (const char* kind : {"keyed_events", "nexmark", "nexmark_auction"}) {
    SCOPED_TRACE(kind);
    auto one = MakeGen(Gen(kind, 7, 1000, 1000)).ValueOrDie();
    auto many = MakeGen(Gen(kind, 7, 7, 1000)).ValueOrDie();
    auto all = MakeGen(Gen(kind, 7, 3, 1000)).ValueOrDie();
    std::vector<int64_t> sizes;
    auto t_one = Drain(*one, &sizes);
    EXPECT_EQ(sizes, std::vector<int64_t>{t_one->num_rows()});
    auto t_many = Drain(*many);
    auto t_all = Drain(*all, nullptr, TriggerLimit{true});
    EXPECT_TRUE(TablesEqualOrdered(*t_one, *t_many));
    EXPECT_TRUE(TablesEqualOrdered(*t_one, *t_all));
    // Uneven: 13 rows per batch, then a new source of 250 per batch resumes.
    auto first = MakeGen(Gen(kind, 7, 13, 1000)).ValueOrDie();
    std::vector<std::shared_ptr<arrow::Table>> parts;
    for (int i = 0; i < 5; ++i) parts.push_back((*first->Next({}))->rows);
    auto second = MakeGen(Gen(kind, 7, 250, 1000)).ValueOrDie();
    THUND_ASSERT_OK(second->Restore(first->Position()));
    parts.push_back(Drain(*second));
    EXPECT_TRUE(TablesEqualOrdered(*t_one, *arrow::ConcatenateTables(parts).ValueOrDie()));
  }
}

TEST(GeneratorSourceTest, KeyedEventsColumnsFollowTheirDefinition) {
  auto src = MakeGen(Gen("keyed_events", 3, 100, 500)).ValueOrDie();
  auto t = Drain(*src);
  EXPECT_EQ(
      t->schema()->ToString(),
      arrow::schema(
          {arrow::field("event_time", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), false),
           arrow::field("key", arrow::utf8(), false), arrow::field("value", arrow::int64(), false),
           arrow::field("seq", arrow::int64(), false)})
          ->ToString());
  ASSERT_EQ(t->num_rows(), 500);
  auto seq = Int64s(*t, "seq");
  auto time = Int64s(*t, "event_time");
  auto value = Int64s(*t, "value");
  std::set<std::string> keys;
  for (const auto& k : Strings(*t, "key")) keys.insert(k);
  for (int64_t i = 0; i < 500; ++i) {
    EXPECT_EQ(seq[i], i);
    EXPECT_EQ(time[i], k2026Us + i * 1000);  // 1000 events/s, in order by default
    EXPECT_GE(value[i], 0);
    EXPECT_LT(value[i], 1000);
  }
  // 100 keys by default, named k000..k099; 500 rows hit most of them.
  EXPECT_GT(keys.size(), 90u);
  EXPECT_LE(keys.size(), 100u);
  for (const auto& k : keys) {
    ASSERT_EQ(k.size(), 4u) << k;
    EXPECT_EQ(k[0], 'k');
    EXPECT_LT(std::stoi(k.substr(1)), 100);
  }
}

TEST(GeneratorSourceTest, KeysRateAndBaseTimeOptions) {
  auto g = Gen("keyed_events", 3, 100, 200);
  g.options = {{"keys", "5"}, {"base_time", "2030-05-01T12:00:00Z"}};
  g.events_per_second = 250;
  auto t = Drain(*MakeGen(g).ValueOrDie());
  std::set<std::string> keys;
  for (const auto& k : Strings(*t, "key")) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"k000", "k001", "k002", "k003", "k004"}));
  auto time = Int64s(*t, "event_time");
  const int64_t base = 1903867200LL * 1000000;  // 2030-05-01T12:00:00Z
  for (int64_t i = 0; i < 200; ++i) EXPECT_EQ(time[i], base + i * 4000);
}

TEST(GeneratorSourceTest, SeedChangesRowsButNotTheirNumberOrSeq) {
  auto a = Drain(*MakeGen(Gen("keyed_events", 1, 100, 300)).ValueOrDie());
  auto b = Drain(*MakeGen(Gen("keyed_events", 2, 100, 300)).ValueOrDie());
  auto a_again = Drain(*MakeGen(Gen("keyed_events", 1, 100, 300)).ValueOrDie());
  EXPECT_TRUE(TablesEqualOrdered(*a, *a_again));
  EXPECT_EQ(Int64s(*a, "seq"), Int64s(*b, "seq"));
  EXPECT_NE(Strings(*a, "key"), Strings(*b, "key"));
  EXPECT_NE(Int64s(*a, "value"), Int64s(*b, "value"));
}

TEST(GeneratorSourceTest, EventTimeIsOutOfOrderByAtMostTheBound) {
  auto g = Gen("keyed_events", 11, 500, 5000);
  g.out_of_orderness_ms = 40;
  auto time = Int64s(*Drain(*MakeGen(g).ValueOrDie()), "event_time");
  int64_t max_seen = time[0], worst = 0, inversions = 0;
  for (size_t i = 1; i < time.size(); ++i) {
    worst = std::max(worst, max_seen - time[i]);
    if (time[i] < max_seen) ++inversions;
    max_seen = std::max(max_seen, time[i]);
    const int64_t steady = k2026Us + static_cast<int64_t>(i) * 1000;
    EXPECT_LE(time[i], steady);
    EXPECT_GE(time[i], steady - 40000);
  }
  EXPECT_LE(worst, 40000);  // never later than the bound
  EXPECT_GT(worst, 30000);  // and the bound is actually used
  EXPECT_GT(inversions, 1000);
}

TEST(GeneratorSourceTest, BoundedStreamEndsAtTotalRows) {
  auto src = MakeGen(Gen("keyed_events", 0, 10, 25)).ValueOrDie();
  std::vector<int64_t> sizes;
  auto t = Drain(*src, &sizes);
  EXPECT_EQ(sizes, (std::vector<int64_t>{10, 10, 5}));
  EXPECT_TRUE(src->Exhausted());
  EXPECT_EQ(src->Position(), R"({"offset":25})");
  auto none = src->Next({true});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(GeneratorSourceTest, UnboundedTakeAllTakesOneBatch) {
  auto src = MakeGen(Gen("keyed_events", 0, 10, 0)).ValueOrDie();
  for (int i = 0; i < 3; ++i) {
    auto got = src->Next({true});
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_EQ((*got)->rows->num_rows(), 10);
    EXPECT_EQ((*got)->position_summary, "offset=" + std::to_string(10 * (i + 1)));
  }
  EXPECT_FALSE(src->Exhausted());
}

TEST(GeneratorSourceTest, RestoreRejectsForeignPositions) {
  auto src = MakeGen(Gen("keyed_events", 0, 10, 0)).ValueOrDie();
  for (const char* bad : {"{\"batch\":2}", "not json", "{\"offset\":-3}"}) {
    auto st = src->Restore(bad);
    EXPECT_TRUE(st.IsInvalid()) << bad;
    EXPECT_NE(st.message().find("flow 'gen'"), std::string::npos) << st.message();
  }
  THUND_ASSERT_OK(src->Restore(""));
  EXPECT_EQ(src->Position(), "");
}

struct BadCase {
  GeneratorSource spec;
  std::string expected;  // a piece of the message
};

TEST(GeneratorSourceTest, BadOptionsEachSayWhatIsWrong) {
  auto with = [](auto f) {
    GeneratorSource g;
    f(g);
    return g;
  };
  std::vector<BadCase> cases = {
      {with([](auto& g) { g.rows_per_batch = 0; }), "rows_per_batch = 0: must be positive"},
      {with([](auto& g) { g.total_rows = -1; }), "total_rows = -1: must be >= 0"},
      {with([](auto& g) { g.events_per_second = -5; }), "events_per_second = -5: must be >= 0"},
      {with([](auto& g) { g.out_of_orderness_ms = -1; }), "out_of_orderness_ms = -1"},
      {with([](auto& g) { g.options["rate"] = "3"; }),
       "option 'rate' is unknown for kind 'keyed_events'; valid options: base_time, keys"},
      {with([](auto& g) {
         g.kind = GeneratorKind::kNexmark;
         g.options["keys"] = "3";
       }),
       "option 'keys' is unknown for kind 'nexmark'; valid options: base_time"},
      {with([](auto& g) { g.options["keys"] = "0"; }), "option keys = '0': must be a positive"},
      {with([](auto& g) { g.options["base_time"] = "yesterday"; }),
       "option base_time = 'yesterday' is not a timestamp"},
  };
  for (const auto& c : cases) {
    auto src = MakeGen(c.spec, "clicks");
    ASSERT_FALSE(src.ok()) << c.expected;
    EXPECT_TRUE(src.status().IsInvalid());
    const std::string m = src.status().message();
    EXPECT_NE(m.find("flow 'clicks'"), std::string::npos) << m;
    EXPECT_NE(m.find(c.expected), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace thund::engine::stream
