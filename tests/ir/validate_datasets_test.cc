// Validate(): expectations, keyed writes, storage, datasets nobody writes.
#include <gtest/gtest.h>

#include "ir/validate_test_util.h"

namespace thund {
namespace {

using testing::BasePipeline;
using testing::Contains;
using testing::Dump;
using testing::ExpectNo;
using testing::FindDatasetMut;
using testing::One;
using testing::WithCode;

TEST(ValidateExpectations, EmptyName) {
  Pipeline p = BasePipeline();
  FindDatasetMut(p, "clean")->WithExpectation({"", "id > 0", ExpectationAction::kWarn, {}});
  Diagnostic x = One(Validate(p), "expectation-name");
  EXPECT_EQ(x.dataset, "clean");
  EXPECT_EQ(x.field_path, "datasets[1].expectations[1].name");
  ExpectNo(Validate(BasePipeline()), "expectation-name");
}

TEST(ValidateExpectations, EmptyPredicate) {
  Pipeline p = BasePipeline();
  Expectation e{"has_id", "  ", ExpectationAction::kFail, {"p.yaml", 9, 5}};
  FindDatasetMut(p, "clean")->WithExpectation(e);
  Diagnostic x = One(Validate(p), "expectation-predicate");
  EXPECT_TRUE(Contains(x.message, "'has_id'"));
  EXPECT_TRUE(Contains(x.message, "empty predicate"));
  EXPECT_EQ(x.location.line, 9);  // the expectation's own location
  ExpectNo(Validate(BasePipeline()), "expectation-predicate");
}

TEST(ValidateExpectations, PredicateThatDoesNotParse) {
  Pipeline p = BasePipeline();
  FindDatasetMut(p, "clean")->WithExpectation({"bad", "amount >", ExpectationAction::kDrop, {}});
  FindDatasetMut(p, "clean")
      ->WithExpectation({"sneaky", "1) ; DROP TABLE x; --", ExpectationAction::kDrop, {}});
  auto found = WithCode(Validate(p), "expectation-predicate");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_TRUE(Contains(found[0].message, "does not parse")) << found[0].message;
  Pipeline ok = BasePipeline();
  FindDatasetMut(ok, "clean")
      ->WithExpectation({"complex",
                         "amount BETWEEN 0 AND 100 AND customer IN ('a', 'b') OR id IS NULL",
                         ExpectationAction::kWarn,
                         {}});
  ExpectNo(Validate(ok), "expectation-predicate");
}

TEST(ValidateExpectations, DuplicateNames) {
  Pipeline p = BasePipeline();
  FindDatasetMut(p, "clean")->WithExpectation({"positive", "id > 0", ExpectationAction::kWarn, {}});
  Diagnostic x = One(Validate(p), "duplicate-expectation");
  EXPECT_TRUE(Contains(x.message, "'positive'"));
  // The same name on two datasets is fine.
  Pipeline ok = BasePipeline();
  FindDatasetMut(ok, "per_user")
      ->WithExpectation({"positive", "total >= 0", ExpectationAction::kWarn, {}});
  ExpectNo(Validate(ok), "duplicate-expectation");
}

// A bad duplicates mode can no longer reach Validate (an enum): the decoders
// report it (tests/file/enum_values_test.cc).
TEST(ValidateKeyedWrite, NegativeNumbersAndDuplicatesMode) {
  Pipeline p = BasePipeline();
  KeyedWrite kw;
  kw.keys = {"id"};
  kw.tuning.buckets = -1;
  kw.tuning.threads = -2;
  kw.tuning.batch_size = -3;
  FindDatasetMut(p, "events")->WithKeyedWrite(kw);
  Diagnostics d = Validate(p);
  auto found = WithCode(d, "keyed-write-value");
  ASSERT_EQ(found.size(), 3u) << Dump(d);
  EXPECT_EQ(found[0].field_path, "datasets[0].keyed_write.buckets");
  EXPECT_EQ(found[2].field_path, "datasets[0].keyed_write.batch_size");

  for (DuplicateKeys mode : {DuplicateKeys::kFirst, DuplicateKeys::kAll}) {
    Pipeline ok = BasePipeline();
    KeyedWrite good;
    good.keys = {"id"};
    good.duplicates = mode;
    good.tuning.buckets = 8;
    FindDatasetMut(ok, "events")->WithKeyedWrite(good);
    Diagnostics dok = Validate(ok);
    EXPECT_TRUE(dok.empty()) << Name(mode) << "\n" << Dump(dok);
  }
}

TEST(ValidateKeyedWrite, KeyMissingFromDeclaredSchema) {
  Pipeline p = BasePipeline();
  KeyedWrite kw;
  kw.keys = {"id", "customr"};
  FindDatasetMut(p, "events")->WithKeyedWrite(kw);
  Diagnostic x = One(Validate(p), "keyed-write-key");
  EXPECT_TRUE(Contains(x.message, "'customr'"));
  EXPECT_TRUE(Contains(x.message, "did you mean 'customer'")) << x.message;
}

TEST(ValidateKeyedWrite, OnAView) {
  Pipeline p = BasePipeline();
  p.AddQuery(Dataset::View("v").WithKeyedWrite(KeyedWrite{{"id"}}),
             "SELECT * FROM clean");
  Diagnostic x = One(Validate(p), "keyed-write-on-view");
  EXPECT_EQ(x.dataset, "v");
  // A sink may have keyed writes.
  Pipeline ok = BasePipeline();
  FindDatasetMut(ok, "out")->WithKeyedWrite(KeyedWrite{{"customer"}});
  ExpectNo(Validate(ok), "keyed-write-on-view");
}

// Bad storage formats and modes are reported by the decoders
// (tests/file/enum_values_test.cc): every value Validate sees is valid.
TEST(ValidateStorage, FormatAndMode) {
  Pipeline p = BasePipeline();
  FindDatasetMut(p, "out")->storage.format = FileFormat::kJson;
  FindDatasetMut(p, "out")->storage.mode = WriteMode::kOverwrite;
  Diagnostics ok = Validate(p);
  ExpectNo(ok, "storage-format");
  ExpectNo(ok, "storage-mode");
}

// A merge sink: `out` as a Parquet table upserted by `customer`.
Pipeline MergePipeline() {
  Pipeline p = BasePipeline();
  Dataset* out = FindDatasetMut(p, "out");
  out->storage = StorageSpec{};
  out->storage.location = "/tmp/out/per_user";
  out->storage.mode = WriteMode::kMerge;
  out->storage.merge_keys = {"customer"};
  return p;
}

TEST(ValidateMerge, AParquetSinkWithKeysIsValid) {
  Diagnostics d = Validate(MergePipeline());
  EXPECT_FALSE(HasErrors(d)) << Dump(d);
  Pipeline explicit_format = MergePipeline();
  FindDatasetMut(explicit_format, "out")->storage.format = FileFormat::kParquet;
  FindDatasetMut(explicit_format, "out")->WithSchema(
      arrow::schema({arrow::field("customer", arrow::utf8()),
                     arrow::field("total", arrow::float64())}));
  d = Validate(explicit_format);
  EXPECT_FALSE(HasErrors(d)) << Dump(d);
}

TEST(ValidateMerge, OnlyOnSinks) {
  Pipeline p = MergePipeline();
  FindDatasetMut(p, "per_user")->storage.mode = WriteMode::kMerge;
  FindDatasetMut(p, "per_user")->storage.merge_keys = {"customer"};
  Diagnostic x = One(Validate(p), "merge-sink");
  EXPECT_EQ(x.dataset, "per_user");
  EXPECT_EQ(x.field_path, "datasets[2].storage.mode");
  EXPECT_TRUE(Contains(x.message, "materialized_view 'per_user'")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "make 'per_user' a sink")) << x.hint;
}

TEST(ValidateMerge, ParquetOnlyAndADirectory) {
  Pipeline p = MergePipeline();
  FindDatasetMut(p, "out")->storage.format = FileFormat::kCsv;
  Diagnostic x = One(Validate(p), "merge-sink");
  EXPECT_EQ(x.field_path, "datasets[4].storage.format");
  EXPECT_TRUE(Contains(x.message, "format csv; a merge sink is a Parquet table")) << x.message;
  Pipeline file = MergePipeline();
  FindDatasetMut(file, "out")->storage.location = "out/per_user.parquet";
  x = One(Validate(file), "merge-sink");
  EXPECT_EQ(x.field_path, "datasets[4].storage.location");
  EXPECT_TRUE(Contains(x.message, "names one file")) << x.message;
}

TEST(ValidateMerge, KeysAreRequiredDistinctAndDeclared) {
  Pipeline none = MergePipeline();
  FindDatasetMut(none, "out")->storage.merge_keys.clear();
  Diagnostic x = One(Validate(none), "merge-keys");
  EXPECT_EQ(x.dataset, "out");
  EXPECT_EQ(x.field_path, "datasets[4].storage.merge_keys");
  EXPECT_TRUE(Contains(x.message, "has mode merge but no merge_keys")) << x.message;
  EXPECT_TRUE(Contains(x.hint, "merge_keys: [id]")) << x.hint;

  Pipeline twice = MergePipeline();
  FindDatasetMut(twice, "out")->storage.merge_keys = {"customer", "", "customer"};
  auto found = WithCode(Validate(twice), "merge-keys");
  ASSERT_EQ(found.size(), 2u) << Dump(Validate(twice));
  EXPECT_TRUE(Contains(found[0].message, "contain an empty name")) << found[0].message;
  EXPECT_TRUE(Contains(found[1].message, "'customer' is listed twice")) << found[1].message;

  Pipeline declared = MergePipeline();
  FindDatasetMut(declared, "out")
      ->WithSchema(arrow::schema({arrow::field("customer", arrow::utf8()),
                                  arrow::field("total", arrow::float64())}))
      .storage.merge_keys = {"custmer", "total"};
  x = One(Validate(declared), "merge-keys");
  EXPECT_TRUE(Contains(x.message, "merge key 'custmer' is not in the declared schema of 'out'"))
      << x.message;
  EXPECT_TRUE(Contains(x.message, "did you mean 'customer'")) << x.message;
  // Without a declared schema the keys are checked when the sink is written.
  ExpectNo(Validate(MergePipeline()), "merge-keys");
}

TEST(ValidateMerge, KeysWithoutMergeModeAndKeyedWrites) {
  Pipeline keys_only = BasePipeline();
  FindDatasetMut(keys_only, "out")->storage.merge_keys = {"customer"};
  Diagnostic x = One(Validate(keys_only), "merge-keys");
  EXPECT_TRUE(Contains(x.message, "whose mode is not merge")) << x.message;

  Pipeline keyed = MergePipeline();
  FindDatasetMut(keyed, "out")->WithKeyedWrite(KeyedWrite{{"customer"}});
  x = One(Validate(keyed), "keyed-write-sink");
  EXPECT_TRUE(Contains(x.message, "with mode merge, which upserts by its merge_keys already"))
      << x.message;
  EXPECT_TRUE(Contains(x.hint, "remove keyed_write")) << x.hint;
}

TEST(ValidateDatasets, NoWriter) {
  Pipeline p = BasePipeline();
  p.Add(Dataset::Table("orphan"));
  p.Add(Dataset::View("lonely_view"));
  Diagnostics d = Validate(p);
  auto found = WithCode(d, "no-writer");
  ASSERT_EQ(found.size(), 2u) << Dump(d);
  // The view is an error (listed first), the table a warning.
  EXPECT_EQ(found[0].dataset, "lonely_view");
  EXPECT_EQ(found[0].severity, Severity::kError);
  EXPECT_EQ(found[1].dataset, "orphan");
  EXPECT_EQ(found[1].severity, Severity::kWarning);
  EXPECT_TRUE(Contains(found[1].message, "stays empty"));
  EXPECT_TRUE(Contains(found[1].hint, "target 'orphan'"));
  ExpectNo(Validate(BasePipeline()), "no-writer");
}

}  // namespace
}  // namespace thund
