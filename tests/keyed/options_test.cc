// KeyedWriteOptions: validation of every knob, defaults, and the IR mapping.
#include <gtest/gtest.h>

#include "engine/keyed/keyed_copy.h"
#include "engine/keyed/keyed_options.h"

namespace thund::engine::keyed {
namespace {

KeyedWriteOptions Valid() {
  KeyedWriteOptions o;
  o.keys = {"id"};
  return o;
}

void ExpectInvalid(const KeyedWriteOptions& o, const std::string& fragment) {
  arrow::Status st = o.Validate();
  ASSERT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_NE(st.message().find(fragment), std::string::npos) << st.message();
}

TEST(KeyedOptionsTest, ValidOptionsPass) { EXPECT_TRUE(Valid().Validate().ok()); }

TEST(KeyedOptionsTest, EmptyKeyListIsRejected) {
  KeyedWriteOptions o;
  ExpectInvalid(o, "the key list is empty");
}

TEST(KeyedOptionsTest, EmptyAndRepeatedKeyNamesAreRejected) {
  KeyedWriteOptions o = Valid();
  o.keys = {"id", ""};
  ExpectInvalid(o, "key #2 is an empty column name");
  o.keys = {"id", "id"};
  ExpectInvalid(o, "'id' is listed twice");
}

TEST(KeyedOptionsTest, NonPositiveBucketsThreadsBatchSizeAreRejected) {
  for (int64_t bad : {0, -1, -100}) {
    KeyedWriteOptions o = Valid();
    o.buckets = bad;
    ExpectInvalid(o, "buckets must be > 0");
    o = Valid();
    o.threads = bad;
    ExpectInvalid(o, "threads must be > 0");
    o = Valid();
    o.batch_size = bad;
    ExpectInvalid(o, "batch_size must be > 0");
  }
}

TEST(KeyedOptionsTest, DefaultsDeriveFromThreads) {
  KeyedWriteOptions o = Valid();
  o.threads = 3;
  EXPECT_EQ(o.EffectiveThreads(), 3);
  EXPECT_EQ(o.EffectiveBuckets(), 4);  // smallest power of two >= 3 threads
  EXPECT_EQ(o.EffectiveBatchSize(), KeyedWriteOptions::kDefaultBatchSize);
  o.buckets = 5;
  o.batch_size = 7;
  EXPECT_EQ(o.EffectiveBuckets(), 5);
  EXPECT_EQ(o.EffectiveBatchSize(), 7);
  KeyedWriteOptions d = Valid();
  EXPECT_GE(d.EffectiveThreads(), 1);
}

TEST(KeyedOptionsTest, PoliciesParse) {
  EXPECT_EQ(*ParseDuplicates(""), Duplicates::kFirst);
  EXPECT_EQ(*ParseDuplicates("all"), Duplicates::kAll);
  EXPECT_TRUE(ParseDuplicates("last").status().IsInvalid());
  EXPECT_EQ(*ParseNullKeys("drop"), NullKeys::kDrop);
  EXPECT_TRUE(ParseNullKeys("keep").status().IsInvalid());
  EXPECT_EQ(*ParseKeyMatch("hash"), KeyMatch::kHash);
  EXPECT_TRUE(ParseKeyMatch("fuzzy").status().IsInvalid());
}

TEST(KeyedOptionsTest, FromIrMapsZeroToUnsetAndNamesTheDataset) {
  KeyedWrite ir;
  ir.keys = {"a", "b"};
  ir.tuning.buckets = 0;
  ir.tuning.threads = 2;
  ir.duplicates = DuplicateKeys::kAll;
  auto o = KeyedWriteOptions::FromIr(ir, "dataset 'events'");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_FALSE(o->buckets.has_value());
  EXPECT_EQ(*o->threads, 2);
  EXPECT_EQ(o->duplicates, Duplicates::kAll);

  ir.tuning.batch_size = -5;
  auto bad = KeyedWriteOptions::FromIr(ir, "dataset 'events'");
  ASSERT_TRUE(bad.status().IsInvalid());
  EXPECT_NE(bad.status().message().find("dataset 'events': batch_size must be > 0"),
            std::string::npos)
      << bad.status().message();
}

TEST(KeyedOptionsTest, PlainTurnsEveryFastPathOff) {
  EXPECT_EQ(ParseKeyIndex("rows"), KeyIndex::kRows);
  EXPECT_EQ(ParseKeyIndex("table"), KeyIndex::kTable);
  EXPECT_FALSE(ParseKeyIndex("btree").has_value());
  KeyedWriteOptions defaults;
  EXPECT_EQ(defaults.key_index, KeyIndex::kRows);
  EXPECT_TRUE(defaults.memory_pool);
  EXPECT_TRUE(defaults.huge_pages);
  KeyedCopyOptions copy;
  copy.SetPlain();
  EXPECT_FALSE(copy.tuning.settle);
  EXPECT_FALSE(copy.tuning.passthrough);
  EXPECT_FALSE(copy.output.join);
  EXPECT_FALSE(copy.output.direct_io);
  EXPECT_EQ(copy.keyed.key_index, KeyIndex::kTable);
  EXPECT_FALSE(copy.keyed.memory_pool);
  EXPECT_FALSE(copy.keyed.huge_pages);
}

}  // namespace
}  // namespace thund::engine::keyed
