// KeySpec: resolving key columns, refusing non-keyable types, choosing storage.
#include "engine/keyed/key_spec.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

namespace thund::engine::keyed {
namespace {

std::shared_ptr<arrow::Schema> Schema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("Day", arrow::date32()),
                        arrow::field("url", arrow::utf8()), arrow::field("score", arrow::float64()),
                        arrow::field("tags", arrow::list(arrow::utf8())),
                        arrow::field("small", arrow::int16()),
                        arrow::field("amount", arrow::decimal128(20, 2))});
}

KeySpec Make(std::vector<std::string> keys, KeyMatch match = KeyMatch::kExact) {
  auto spec = KeySpec::Make(*Schema(), keys, match, "test");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec.ok() ? *spec : KeySpec{};
}

TEST(KeySpecTest, StorageFollowsKeyWidth) {
  EXPECT_EQ(Make({"id"}).storage, KeyStorage::kFixed64);
  EXPECT_EQ(Make({"small", "Day"}).storage, KeyStorage::kFixed64);  // 2 + 4 bytes
  EXPECT_EQ(Make({"id", "Day"}).storage, KeyStorage::kFixed128);    // 12 bytes
  EXPECT_EQ(Make({"amount"}).storage, KeyStorage::kFixed128);       // 16 bytes
  EXPECT_EQ(Make({"id", "amount"}).storage, KeyStorage::kBytes);    // 24 bytes
  EXPECT_EQ(Make({"url"}).storage, KeyStorage::kBytes);
  EXPECT_EQ(Make({"url"}, KeyMatch::kHash).storage, KeyStorage::kFixed128);
  // Hashing never replaces a key that fits 16 bytes exactly.
  EXPECT_EQ(Make({"id"}, KeyMatch::kHash).storage, KeyStorage::kFixed64);
}

TEST(KeySpecTest, NamesResolveCaseInsensitivelyAndKeepTheSchemaSpelling) {
  KeySpec spec = Make({"ID", "day"});
  EXPECT_EQ(spec.names, (std::vector<std::string>{"id", "Day"}));
}

TEST(KeySpecTest, UnknownColumnListsTheAvailableOnes) {
  auto spec = KeySpec::Make(*Schema(), {"user_id"}, KeyMatch::kExact, "copy to 'out'");
  ASSERT_TRUE(spec.status().IsInvalid());
  EXPECT_NE(spec.status().message().find("copy to 'out': key column 'user_id' is not a column"),
            std::string::npos)
      << spec.status().message();
  EXPECT_NE(spec.status().message().find("id, Day, url"), std::string::npos);
}

TEST(KeySpecTest, NonKeyableTypesAreRefusedWithAReason) {
  auto f = KeySpec::Make(*Schema(), {"score"}, KeyMatch::kExact, "t");
  ASSERT_TRUE(f.status().IsInvalid());
  EXPECT_NE(f.status().message().find("floating-point"), std::string::npos);
  auto l = KeySpec::Make(*Schema(), {"tags"}, KeyMatch::kExact, "t");
  ASSERT_TRUE(l.status().IsInvalid());
  EXPECT_NE(l.status().message().find("cannot be keys"), std::string::npos);
  EXPECT_TRUE(KeySpec::Make(*Schema(), {}, KeyMatch::kExact, "t").status().IsInvalid());
}

TEST(KeySpecTest, AmbiguousNamesAreRefused) {
  auto s = arrow::schema({arrow::field("ID", arrow::int64()), arrow::field("id2", arrow::int64()),
                          arrow::field("Id", arrow::int64())});
  auto spec = KeySpec::Make(*s, {"iD"}, KeyMatch::kExact, "t");
  ASSERT_TRUE(spec.status().IsInvalid());
  EXPECT_NE(spec.status().message().find("matches several columns"), std::string::npos);
}

TEST(KeySpecTest, ResolveReportsAMissingKeyColumn) {
  KeySpec spec = Make({"id", "url"});
  auto other =
      arrow::schema({arrow::field("url", arrow::utf8()), arrow::field("x", arrow::int8())});
  auto r = spec.Resolve(*other, "target file 'a.parquet'");
  ASSERT_TRUE(r.status().IsInvalid());
  EXPECT_NE(r.status().message().find("target file 'a.parquet': key column 'id' is missing"),
            std::string::npos)
      << r.status().message();
  auto good = spec.Resolve(*Schema(), "x");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, (std::vector<int>{0, 2}));
}

TEST(KeySpecTest, CastKeyColumnsConvertsOrExplains) {
  KeySpec spec = Make({"id"});
  arrow::Int32Builder ib;
  ASSERT_TRUE(ib.AppendValues({1, 2, 3}).ok());
  auto ints = *ib.Finish();
  auto batch =
      arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int32())}), 3, {ints});
  auto cast = CastKeyColumns(spec, *batch, {0}, "w");
  ASSERT_TRUE(cast.ok()) << cast.status().ToString();
  EXPECT_TRUE((*cast)[0]->type()->Equals(*arrow::int64()));

  arrow::StringBuilder sb;
  ASSERT_TRUE(sb.AppendValues({"7", "x"}).ok());
  auto strings = *sb.Finish();
  auto bad =
      arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::utf8())}), 2, {strings});
  auto failed = CastKeyColumns(spec, *bad, {0}, "target file 'f.csv'");
  ASSERT_TRUE(failed.status().IsInvalid());
  EXPECT_NE(failed.status().message().find("target file 'f.csv': key column 'id' has type string"),
            std::string::npos)
      << failed.status().message();
}

}  // namespace
}  // namespace thund::engine::keyed
