// Test helpers: comparing arrow::Tables with a readable diff, and a scratch directory.
#pragma once

#include <arrow/table.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

// gtest assertions for arrow::Status / arrow::Result (the wheel ships no arrow_testing).
#define THUND_ASSERT_OK(expr)                            \
  do {                                                   \
    const ::arrow::Status _thund_st = (expr);            \
    ASSERT_TRUE(_thund_st.ok()) << _thund_st.ToString(); \
  } while (0)
#define THUND_CONCAT_INNER_(a, b) a##b
#define THUND_CONCAT_(a, b) THUND_CONCAT_INNER_(a, b)
#define THUND_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();      \
  lhs = std::move(tmp).ValueUnsafe()
#define THUND_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  THUND_ASSERT_OK_AND_ASSIGN_IMPL_(THUND_CONCAT_(_thund_result_, __LINE__), lhs, expr)

namespace thund::engine::testing {

// One string per row: each cell rendered with arrow::Scalar::ToString (nested types
// included), NULL as "∅", cells joined by " | ".
std::vector<std::string> RowStrings(const arrow::Table& table);

// Same column names and (unless check_types is false) types, and the same multiset of
// rows in any order. On failure the message lists the rows present on only one side.
::testing::AssertionResult TablesEqualUnordered(const arrow::Table& expected,
                                                const arrow::Table& actual,
                                                bool check_types = true);

// Same names, types and rows in the same order (chunk layout does not matter).
::testing::AssertionResult TablesEqualOrdered(const arrow::Table& expected,
                                              const arrow::Table& actual);

// Casts every column of `table` to the type of the same-position field of `schema`
// (and takes its names), e.g. to compare DuckDB's utf8 output with a large_utf8 input.
std::shared_ptr<arrow::Table> CastTo(const std::shared_ptr<arrow::Table>& table,
                                     const std::shared_ptr<arrow::Schema>& schema);

// A fresh directory under the system temp dir, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace thund::engine::testing
