// KeyedWriteFilter's set of keys written in this run when part of it is held
// as source row numbers (UseSourceRows): rows claimed with their numbers and
// rows written without them must see each other's keys, so no key is written
// twice whichever way it came first.
//
// ClaimRowsEncoded (keys encoded by the worker that looked them up, handed over
// with UnitRows::all_new_encoded) must claim exactly what ClaimRows claims from
// the key columns, and what a std::map of the keys (the oracle) says: first
// occurrences (duplicates=first) or keys seen once (duplicates=all), NULL keys
// never, the same errors and counts.
#include "engine/keyed/keyed_write_filter.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>

#include "engine/keyed/key_encoder.h"
#include "engine/keyed/source_scan.h"
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

using Keys = std::vector<std::optional<std::string>>;  // nullopt: a NULL key

std::shared_ptr<arrow::RecordBatch> NullableUrls(const Keys& keys) {
  arrow::StringBuilder b;
  for (const auto& k : keys) EXPECT_TRUE((k ? b.Append(*k) : b.AppendNull()).ok());
  return arrow::RecordBatch::Make(arrow::schema({arrow::field("url", arrow::utf8())}),
                                  static_cast<int64_t>(keys.size()), {b.Finish().ValueOrDie()});
}

// The batch's keys encoded as a worker hands them over: views encoded in chunks
// of `chunk` rows (EncodeViews), appended (AppendEncoded), then pointed at the
// batch's column (AttachKeyBytes).
arrow::Result<EncodedKeys> HandOver(const KeySpec& spec, const arrow::RecordBatch& batch,
                                    int64_t chunk) {
  const auto& column = static_cast<const arrow::StringArray&>(*batch.column(0));
  EncodedKeys all, part;
  for (int64_t at = 0; at < column.length(); at += chunk) {
    const int64_t n = std::min(chunk, column.length() - at);
    std::vector<std::string> page;  // stands for the scan's page: gone after the chunk
    std::vector<uint8_t> is_null;
    for (int64_t i = at; i < at + n; ++i) {
      is_null.push_back(column.IsNull(i) ? 1 : 0);
      page.push_back(column.IsNull(i) ? std::string() : column.GetString(i));
    }
    std::vector<std::string_view> views(page.begin(), page.end());
    ARROW_RETURN_NOT_OK(EncodeViews(spec, views.data(), is_null.data(), n, &part));
    AppendEncoded(part, &all);
  }
  ARROW_RETURN_NOT_OK(AttachKeyBytes(spec, batch.column(0), &all));
  return all;
}

struct ClaimCase {
  Duplicates duplicates;
  KeyMatch match;
};

class ClaimRowsEncodedTest : public ::testing::TestWithParam<ClaimCase> {
 protected:
  std::unique_ptr<KeyedWriteFilter> MakeFilter(NullKeys null_keys) {
    KeyedWriteOptions options;
    options.keys = {"url"};
    options.duplicates = GetParam().duplicates;
    options.match = GetParam().match;
    options.null_keys = null_keys;
    auto filter = KeyedWriteFilter::Make(options, *Urls({})->schema(), fs_, dir_ / "target");
    EXPECT_TRUE(filter.ok()) << filter.status().ToString();
    return filter.ok() ? std::move(filter).ValueUnsafe() : nullptr;
  }

  ScratchDir dir_;
  std::shared_ptr<arrow::fs::FileSystem> fs_ = std::make_shared<arrow::fs::LocalFileSystem>();
};

TEST_P(ClaimRowsEncodedTest, ClaimsWhatClaimRowsAndTheOracleClaim) {
  // Repeats within a batch and across batches, NULLs, an empty key, long keys.
  const std::string long_key(300, 'x');
  const std::vector<Keys> batches = {
      {"a", "b", std::nullopt, "a", "", "c", long_key, "b"},
      {"d", std::nullopt, std::nullopt, "a", "e", long_key + "y", "", "f"},
      {"g", "g", "g", "h", std::nullopt, "i", "d", "j", "k"},
  };
  auto plain = MakeFilter(NullKeys::kDrop);
  auto encoded = MakeFilter(NullKeys::kDrop);
  ASSERT_TRUE(plain && encoded);
  std::map<std::string, int> occurrences;  // the oracle
  for (const auto& keys : batches) {
    for (const auto& k : keys) {
      if (k) ++occurrences[*k];
    }
    if (GetParam().duplicates == Duplicates::kAll) {  // the pre-pass
      KEYED_ASSERT_OK(plain->NoteForAll(*NullableUrls(keys), "pre"));
      KEYED_ASSERT_OK(encoded->NoteForAll(*NullableUrls(keys), "pre"));
    }
  }
  std::set<std::string> claimed;
  int64_t row = 0, expected_duplicates = 0;
  for (const auto& keys : batches) {
    auto batch = NullableUrls(keys);
    EncodedKeys handed;
    KEYED_ASSERT_OK_AND_ASSIGN(handed, HandOver(encoded->spec(), *batch, /*chunk=*/3));
    std::vector<uint8_t> want, got_plain, got_encoded;
    int64_t want_n = 0, n_plain = 0, n_encoded = 0;
    for (const auto& k : keys) {
      bool w = false;
      if (k && GetParam().duplicates == Duplicates::kFirst) {
        w = claimed.insert(*k).second;
        expected_duplicates += !w;
      } else if (k) {
        w = occurrences[*k] == 1;
      }
      want.push_back(w ? 1 : 0);
      want_n += w;
    }
    KEYED_ASSERT_OK_AND_ASSIGN(n_plain, plain->ClaimRows(*batch, "b", &got_plain, row));
    KEYED_ASSERT_OK_AND_ASSIGN(n_encoded,
                               encoded->ClaimRowsEncoded(handed, "b", &got_encoded, row));
    EXPECT_EQ(got_plain, want);
    EXPECT_EQ(got_encoded, want);
    EXPECT_EQ(n_plain, want_n);
    EXPECT_EQ(n_encoded, want_n);
    row += batch->num_rows();
  }
  EXPECT_EQ(encoded->counts().rows_skipped_duplicate, expected_duplicates);
  EXPECT_EQ(encoded->counts().rows_skipped_duplicate, plain->counts().rows_skipped_duplicate);
  EXPECT_EQ(encoded->counts().rows_null_key, plain->counts().rows_null_key);
}

TEST_P(ClaimRowsEncodedTest, ANullKeyIsTheSameErrorAtTheSameRow) {
  auto plain = MakeFilter(NullKeys::kError);
  auto encoded = MakeFilter(NullKeys::kError);
  ASSERT_TRUE(plain && encoded);
  // Rows are counted over the calls: the NULL is row 3 + 2 of the claims.
  const std::vector<Keys> batches = {{"a", "b", "c"}, {"d", std::nullopt, "a", std::nullopt}};
  std::vector<arrow::Status> errors;
  for (auto* filter : {plain.get(), encoded.get()}) {
    if (GetParam().duplicates == Duplicates::kAll) {  // the pre-pass
      for (const auto& keys : batches)
        KEYED_ASSERT_OK(filter->NoteForAll(*NullableUrls(keys), "p"));
    }
    std::vector<uint8_t> writable;
    arrow::Status st;
    for (const auto& keys : batches) {
      auto batch = NullableUrls(keys);
      if (filter == plain.get()) {
        st = filter->ClaimRows(*batch, "b", &writable).status();
      } else {
        EncodedKeys handed;
        KEYED_ASSERT_OK_AND_ASSIGN(handed, HandOver(filter->spec(), *batch, /*chunk=*/2));
        st = filter->ClaimRowsEncoded(handed, "b", &writable).status();
      }
      if (!st.ok()) break;
    }
    errors.push_back(st);
  }
  ASSERT_TRUE(errors[0].IsInvalid()) << errors[0].ToString();
  EXPECT_NE(errors[0].message().find("b row 5: a key column (url) is NULL (2 such rows"),
            std::string::npos)
      << errors[0].message();
  EXPECT_EQ(errors[1].ToString(), errors[0].ToString());
}

TEST_P(ClaimRowsEncodedTest, KeysOfAnotherShapeAreRefused) {
  auto filter = MakeFilter(NullKeys::kDrop);
  ASSERT_TRUE(filter);
  auto batch = NullableUrls({"a", "b"});
  EncodedKeys handed;
  KEYED_ASSERT_OK_AND_ASSIGN(handed, HandOver(filter->spec(), *batch, 8));
  handed.hash.pop_back();
  std::vector<uint8_t> writable;
  auto n = filter->ClaimRowsEncoded(handed, "b", &writable);
  ASSERT_FALSE(n.ok());
  EXPECT_TRUE(n.status().IsInvalid());
  EXPECT_EQ(filter->counts().rows_skipped_duplicate, 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, ClaimRowsEncodedTest,
                         ::testing::Values(ClaimCase{Duplicates::kFirst, KeyMatch::kExact},
                                           ClaimCase{Duplicates::kFirst, KeyMatch::kHash},
                                           ClaimCase{Duplicates::kAll, KeyMatch::kExact},
                                           ClaimCase{Duplicates::kAll, KeyMatch::kHash}),
                         [](const auto& info) {
                           return std::string(info.param.duplicates == Duplicates::kFirst ? "First"
                                                                                          : "All") +
                                  (info.param.match == KeyMatch::kExact ? "Exact" : "Hash");
                         });

// A fully new unit read by the zero-copy scan (several scan chunks) comes back
// with its keys' encodings, equal to what EncodeKeys gives for all_new_keys;
// claimed with them (keys held as source rows, as `thund copy` does), it gives
// ClaimRows' answer and the oracle's.
TEST(ScanHandOverTest, AFullyNewUnitHandsOverItsEncodings) {
  ScratchDir dir;
  Oracle oracle;
  const int64_t rows = 3 * kKeyScanRows + 100;
  const int64_t distinct = 2 * kKeyScanRows;  // keys of rows past it repeat earlier ones
  oracle.Exec("COPY (SELECT 'https://site/' || (i % " + std::to_string(distinct) +
              ") AS url, i AS id FROM range(" + std::to_string(rows) + ") t(i)) TO '" +
              dir / "src.parquet" + "' (FORMAT parquet, ROW_GROUP_SIZE " + std::to_string(rows) +
              ")");
  auto fs = std::make_shared<arrow::fs::LocalFileSystem>();
  Source source;
  KEYED_ASSERT_OK_AND_ASSIGN(source, OpenSource(fs, "src", dir / "src.parquet", std::nullopt, 1));
  ASSERT_EQ(source.units.size(), 1u);
  KeyedWriteOptions options;
  options.keys = {"url"};
  std::unique_ptr<KeyedWriteFilter> plain, encoded;
  for (auto* f : {&plain, &encoded}) {
    KEYED_ASSERT_OK_AND_ASSIGN(*f,
                               KeyedWriteFilter::Make(options, *source.schema, fs, dir / "target"));
    KEYED_ASSERT_OK((*f)->UseSourceRows(fs, source.files, {0}, {{0, 0, 0, rows}}, rows));
    ASSERT_TRUE((*f)->uses_source_rows());
  }
  UnitRows unit;
  KEYED_ASSERT_OK_AND_ASSIGN(
      unit, ReadSourceUnit(fs, source, source.units[0], UnitFilter{encoded.get(), {"url"}},
                           /*batch_size=*/1 << 20, /*keys_only=*/false, /*defer_all_new=*/true));
  ASSERT_NE(unit.all_new_keys, nullptr);
  ASSERT_TRUE(unit.all_new_encoded.has_value());
  ASSERT_EQ(unit.all_new_keys->num_rows(), rows);
  // The keys are a string column, as in the file.
  EXPECT_TRUE(unit.all_new_keys->column(0)->type()->Equals(*arrow::utf8()));
  const EncodedKeys& handed = *unit.all_new_encoded;
  EncodedKeys fresh;
  KEYED_ASSERT_OK(EncodeKeys(encoded->spec(), {unit.all_new_keys->column(0)}, &fresh));
  ASSERT_EQ(handed.length, rows);
  EXPECT_EQ(handed.null_count, 0);
  EXPECT_EQ(handed.is_null, fresh.is_null);
  EXPECT_EQ(handed.hash, fresh.hash);
  EXPECT_EQ(handed.w0, fresh.w0);
  ASSERT_EQ(handed.bytes.size(), fresh.bytes.size());
  for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(handed.bytes[i], fresh.bytes[i]) << i;

  std::vector<uint8_t> got_plain, got_encoded, want;
  std::set<std::string> claimed;  // the oracle
  const auto& urls = static_cast<const arrow::StringArray&>(*unit.all_new_keys->column(0));
  for (int64_t i = 0; i < rows; ++i) want.push_back(claimed.insert(urls.GetString(i)).second);
  int64_t n_plain = 0, n_encoded = 0;
  KEYED_ASSERT_OK_AND_ASSIGN(n_plain, plain->ClaimRows(*unit.all_new_keys, "u", &got_plain, 0));
  KEYED_ASSERT_OK_AND_ASSIGN(n_encoded, encoded->ClaimRowsEncoded(handed, "u", &got_encoded, 0));
  EXPECT_EQ(n_encoded, distinct);
  EXPECT_EQ(n_plain, distinct);
  EXPECT_EQ(got_encoded, want);
  EXPECT_EQ(got_plain, want);
  EXPECT_EQ(encoded->counts().rows_skipped_duplicate, rows - distinct);
  EXPECT_EQ(plain->counts().rows_skipped_duplicate, rows - distinct);
}

// A unit with a key already in the target is not deferred: no encodings either.
TEST(ScanHandOverTest, APartlyNewUnitHandsOverNothing) {
  ScratchDir dir;
  Oracle oracle;
  oracle.Exec("COPY (SELECT 'k' || i AS url FROM range(20000) t(i)) TO '" + dir / "src.parquet" +
              "' (FORMAT parquet, ROW_GROUP_SIZE 20000)");
  std::filesystem::create_directories(dir / "target");
  oracle.Exec("COPY (SELECT 'k19999' AS url) TO '" + dir / "target/old.parquet" +
              "' (FORMAT parquet)");
  auto fs = std::make_shared<arrow::fs::LocalFileSystem>();
  Source source;
  KEYED_ASSERT_OK_AND_ASSIGN(source, OpenSource(fs, "src", dir / "src.parquet", std::nullopt, 1));
  KeyedWriteOptions options;
  options.keys = {"url"};
  std::unique_ptr<KeyedWriteFilter> filter;
  KEYED_ASSERT_OK_AND_ASSIGN(filter,
                             KeyedWriteFilter::Make(options, *source.schema, fs, dir / "target"));
  UnitRows unit;
  KEYED_ASSERT_OK_AND_ASSIGN(
      unit, ReadSourceUnit(fs, source, source.units[0], UnitFilter{filter.get(), {"url"}},
                           /*batch_size=*/1 << 20, /*keys_only=*/false, /*defer_all_new=*/true));
  EXPECT_EQ(unit.all_new_keys, nullptr);
  EXPECT_FALSE(unit.all_new_encoded.has_value());
  int64_t rows = 0;
  for (const auto& b : unit.batches) rows += b->num_rows();
  EXPECT_EQ(rows, 19999);
}

}  // namespace
}  // namespace thund::engine::keyed
