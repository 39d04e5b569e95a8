// Every IR enum: Name() and its Parse function are inverses, names are the
// documented lower_snake spellings, and anything else parses to nothing.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "thund/ir.h"

namespace thund {
namespace {

template <typename E>
void ExpectRoundTrip(std::initializer_list<E> all, std::optional<E> (*parse)(std::string_view),
                     std::initializer_list<const char*> names) {
  ASSERT_EQ(all.size(), names.size());
  std::set<std::string> seen;
  auto name = names.begin();
  for (E v : all) {
    EXPECT_EQ(std::string(Name(v)), *name);
    EXPECT_EQ(parse(Name(v)), v) << Name(v);
    EXPECT_TRUE(seen.insert(Name(v)).second) << "two values named " << Name(v);
    // Spellings are exact: no case folding, no padding.
    std::string upper = Name(v);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(parse(upper), std::nullopt) << upper;
    EXPECT_EQ(parse(std::string(" ") + Name(v)), std::nullopt);
    ++name;
  }
  EXPECT_EQ(parse(""), std::nullopt);
  EXPECT_EQ(parse("?"), std::nullopt);
}

TEST(EnumNames, NewEnumsRoundTrip) {
  ExpectRoundTrip({FileFormat::kParquet, FileFormat::kCsv, FileFormat::kJson, FileFormat::kNoop},
                  ParseFileFormat, {"parquet", "csv", "json", "noop"});
  ExpectRoundTrip({WriteMode::kAppend, WriteMode::kOverwrite, WriteMode::kMerge}, ParseWriteMode,
                  {"append", "overwrite", "merge"});
  ExpectRoundTrip({DuplicateKeys::kFirst, DuplicateKeys::kAll}, ParseDuplicateKeys,
                  {"first", "all"});
  ExpectRoundTrip({NullKeys::kError, NullKeys::kDrop}, ParseNullKeys, {"error", "drop"});
  ExpectRoundTrip({KeyMatch::kExact, KeyMatch::kHash}, ParseKeyMatch, {"exact", "hash"});
  ExpectRoundTrip({GeneratorKind::kKeyedEvents, GeneratorKind::kNexmarkPerson,
                   GeneratorKind::kNexmarkAuction, GeneratorKind::kNexmarkBid,
                   GeneratorKind::kNexmark},
                  ParseGeneratorKind,
                  {"keyed_events", "nexmark_person", "nexmark_auction", "nexmark_bid", "nexmark"});
  ExpectRoundTrip({StartingOffsets::kEarliest, StartingOffsets::kLatest}, ParseStartingOffsets,
                  {"earliest", "latest"});
}

TEST(EnumNames, ExistingEnumsRoundTrip) {
  ExpectRoundTrip({DatasetKind::kTable, DatasetKind::kStreamingTable,
                   DatasetKind::kMaterializedView, DatasetKind::kView,
                   DatasetKind::kTemporaryView, DatasetKind::kSink},
                  ParseDatasetKind,
                  {"table", "streaming_table", "materialized_view", "view", "temporary_view",
                   "sink"});
  ExpectRoundTrip({OutputMode::kAppend, OutputMode::kUpdate, OutputMode::kComplete},
                  ParseOutputMode, {"append", "update", "complete"});
  ExpectRoundTrip({TriggerKind::kOnce, TriggerKind::kAvailableNow, TriggerKind::kProcessingTime},
                  ParseTriggerKind, {"once", "available_now", "processing_time"});
}

TEST(EnumNames, DefaultsAreTheDocumentedOnes) {
  const KeyedWrite k;
  EXPECT_EQ(k.duplicates, DuplicateKeys::kFirst);
  EXPECT_EQ(k.null_keys, NullKeys::kError);
  EXPECT_EQ(k.key_match, KeyMatch::kExact);
  EXPECT_EQ(k.tuning, KeyedWriteTuning{});
  const StorageSpec s;
  EXPECT_FALSE(s.format.has_value());
  EXPECT_FALSE(s.mode.has_value());
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(GeneratorSource{}.kind, GeneratorKind::kKeyedEvents);
  EXPECT_EQ(KafkaSource{}.starting_offsets, StartingOffsets::kEarliest);
}

TEST(EnumNames, PrintFormsUseTheNames) {
  StorageSpec s;
  s.format = FileFormat::kCsv;
  s.mode = WriteMode::kOverwrite;
  EXPECT_EQ(s.ToString(), "storage{format=csv, mode=overwrite}");
  StorageSpec merge;
  merge.mode = WriteMode::kMerge;
  merge.merge_keys = {"region", "id"};
  EXPECT_FALSE(merge.empty());
  EXPECT_EQ(merge.ToString(), "storage{mode=merge, merge_keys=[region, id]}");
  StorageSpec keys_only;
  keys_only.merge_keys = {"id"};
  EXPECT_FALSE(keys_only.empty());
  EXPECT_FALSE(keys_only == StorageSpec{});
  KeyedWrite k;
  k.keys = {"id"};
  k.duplicates = DuplicateKeys::kAll;
  k.key_match = KeyMatch::kHash;
  k.tuning.buckets = 4;
  EXPECT_EQ(k.ToString(), "keyed_write{keys=[id], buckets=4, duplicates=all, key_match=hash}");
  GeneratorSource g;
  g.kind = GeneratorKind::kNexmarkBid;
  const std::string text = ToString(SourceSpec{g});
  EXPECT_EQ(text.rfind("generator(nexmark_bid, ", 0), 0u) << text;
}

}  // namespace
}  // namespace thund
