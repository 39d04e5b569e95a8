// KeyedWriteFilter's set of keys written in this run when part of it is held
// as source row numbers (UseSourceRows): rows claimed with their numbers and
// rows written without them must see each other's keys, so no key is written
// twice whichever way it came first.
#include "engine/keyed/keyed_write_filter.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "keyed/keyed_test_util.h"

namespace thund::engine::keyed {
namespace {

using testing::Oracle;
using testing::ScratchDir;

std::shared_ptr<arrow::RecordBatch> Urls(const std::vector<std::string>& urls) {
  arrow::StringBuilder b;
  EXPECT_TRUE(b.AppendValues(urls).ok());
  return arrow::RecordBatch::Make(arrow::schema({arrow::field("url", arrow::utf8())}),
                                  static_cast<int64_t>(urls.size()), {b.Finish().ValueOrDie()});
}

std::vector<std::string> Column(const std::shared_ptr<arrow::RecordBatch>& b) {
  std::vector<std::string> out;
  if (b == nullptr) return out;
  const auto& a = static_cast<const arrow::StringArray&>(*b->column(0));
  for (int64_t i = 0; i < a.length(); ++i) out.push_back(a.GetString(i));
  return out;
}

TEST(KeyedWriteFilterTest, NumberedAndUnnumberedWritesSeeEachOthersKeys) {
  ScratchDir dir;
  Oracle oracle;
  // Two source files of 4 rows: k0..k3 and k4..k7 (row numbers 0..7).
  for (int f = 0; f < 2; ++f) {
    oracle.Exec("COPY (SELECT 'k' || (" + std::to_string(4 * f) +
                " + i) AS url FROM range(4) t(i)) TO '" + dir / ("s" + std::to_string(f)) +
                ".parquet' (FORMAT parquet)");
  }
  auto fs = std::make_shared<arrow::fs::LocalFileSystem>();
  KeyedWriteOptions options;
  options.keys = {"url"};
  std::unique_ptr<KeyedWriteFilter> filter;
  KEYED_ASSERT_OK_AND_ASSIGN(
      filter, KeyedWriteFilter::Make(options, *Urls({})->schema(), fs, dir / "target"));
  std::vector<DataFile> files = {{dir / "s0.parquet", FileFormat::kParquet, 0},
                                 {dir / "s1.parquet", FileFormat::kParquet, 0}};
  KEYED_ASSERT_OK(filter->UseSourceRows(fs, files, {0, 0}, {{0, 0, 0, 4}, {1, 0, 4, 4}}, 16));
  ASSERT_TRUE(filter->uses_source_rows());

  // Unit 0 claimed with its numbers: all four keys are new.
  std::vector<uint8_t> writable;
  int64_t n = 0;
  KEYED_ASSERT_OK_AND_ASSIGN(
      n, filter->ClaimRows(*Urls({"k0", "k1", "k2", "k3"}), "s0", &writable, /*first_row=*/0));
  EXPECT_EQ(n, 4);
  // Rows without numbers (say, out of a transform): k1 was claimed above, k4 is
  // new, and its repeat in the same batch is not.
  KeyedWriteFilter::WriteSplit split;
  KEYED_ASSERT_OK_AND_ASSIGN(
      split, filter->FilterForWrite(*Urls({"k1", "k4", "k4", "x"}), /*target_checked=*/true, "t"));
  EXPECT_EQ(Column(split.now), (std::vector<std::string>{"k4", "x"}));
  // Unit 1 claimed with its numbers: k4 was written without numbers above.
  KEYED_ASSERT_OK_AND_ASSIGN(
      n, filter->ClaimRows(*Urls({"k4", "k5", "k6", "k7"}), "s1", &writable, /*first_row=*/4));
  EXPECT_EQ(writable, (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(n, 3);
  EXPECT_EQ(filter->counts().rows_skipped_duplicate, 3);  // k1, the second k4, k4 again
}

}  // namespace
}  // namespace thund::engine::keyed
