// The comparison helpers must themselves be able to fail.

#include "engine/table_compare.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

namespace thund::engine::testing {
namespace {

std::shared_ptr<arrow::Table> T(const std::string& ids, const std::string& names,
                                std::shared_ptr<arrow::DataType> id_type = arrow::int64()) {
  auto schema = arrow::schema({arrow::field("id", id_type), arrow::field("name", arrow::utf8())});
  return arrow::Table::Make(schema, {*arrow::json::ArrayFromJSONString(id_type, ids),
                                     *arrow::json::ArrayFromJSONString(arrow::utf8(), names)});
}

TEST(TableCompareTest, UnorderedAcceptsAPermutation) {
  EXPECT_TRUE(TablesEqualUnordered(*T("[1, 2, null]", R"(["a", "b", "c"])"),
                                   *T("[null, 2, 1]", R"(["c", "b", "a"])")));
}

TEST(TableCompareTest, UnorderedRejectsAChangedValueAndShowsIt) {
  auto r = TablesEqualUnordered(*T("[1, 2]", R"(["a", "b"])"), *T("[1, 2]", R"(["a", "x"])"));
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("only in expected (1):\n    2 | b"), std::string::npos)
      << r.message();
}

TEST(TableCompareTest, UnorderedCountsDuplicates) {
  EXPECT_FALSE(TablesEqualUnordered(*T("[1, 1]", R"(["a", "a"])"), *T("[1]", R"(["a"])")));
}

TEST(TableCompareTest, TypesMustMatchUnlessToldOtherwise) {
  auto a = T("[1]", R"(["a"])");
  auto b = T("[1]", R"(["a"])", arrow::int32());
  EXPECT_FALSE(TablesEqualUnordered(*a, *b));
  EXPECT_TRUE(TablesEqualUnordered(*a, *b, /*check_types=*/false));
}

TEST(TableCompareTest, OrderedRejectsAPermutationNamingTheCell) {
  auto r = TablesEqualOrdered(*T("[1, 2]", R"(["a", "b"])"), *T("[2, 1]", R"(["b", "a"])"));
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("row 0, column 'id': expected 1, actual 2"),
            std::string::npos)
      << r.message();
}

}  // namespace
}  // namespace thund::engine::testing
