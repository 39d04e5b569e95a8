// Validate(): change data capture settings.
#include <gtest/gtest.h>

#include "ir/validate_test_util.h"

namespace thund {
namespace {

using testing::Contains;
using testing::Dump;
using testing::ExpectNo;
using testing::One;

// events (streaming table, declared schema) <- memory; changes <- CDC flow.
Pipeline CdcPipeline(Cdc cdc) {
  Pipeline p = testing::BasePipeline();
  p.Add(Dataset::StreamingTable("customers").WithSchema(testing::EventSchema()));
  p.Add(Flow("customers", "customers", "SELECT * FROM STREAM(events)").WithCdc(std::move(cdc)));
  return p;
}

Cdc GoodCdc() { return Cdc{{"id"}, "ts", "amount < 0", {"amount"}, 2, {}, {}, {}}; }

TEST(ValidateCdc, GoodCdcIsClean) {
  Diagnostics d = Validate(CdcPipeline(GoodCdc()));
  EXPECT_TRUE(d.empty()) << Dump(d);
}

TEST(ValidateCdc, NoKeys) {
  Cdc c = GoodCdc();
  c.keys.clear();
  Diagnostics d = Validate(CdcPipeline(c));
  Diagnostic x = One(d, "cdc-keys");
  EXPECT_EQ(x.flow, "customers");
  EXPECT_EQ(x.field_path, "flows[5].cdc.keys");
  EXPECT_TRUE(Contains(x.message, "no keys"));
  c.keys = {"id", ""};
  EXPECT_TRUE(Contains(One(Validate(CdcPipeline(c)), "cdc-keys").message, "empty column"));
}

TEST(ValidateCdc, NoSequenceBy) {
  Cdc c = GoodCdc();
  c.sequence_by.clear();
  Diagnostic x = One(Validate(CdcPipeline(c)), "cdc-sequence");
  EXPECT_TRUE(Contains(x.hint, "SEQUENCE BY"));
  ExpectNo(Validate(CdcPipeline(GoodCdc())), "cdc-sequence");
}

TEST(ValidateCdc, ScdType) {
  for (int bad : {0, 3, -1}) {
    Cdc c = GoodCdc();
    c.scd_type = bad;
    Diagnostic x = One(Validate(CdcPipeline(c)), "cdc-scd-type");
    EXPECT_TRUE(Contains(x.message, "got " + std::to_string(bad))) << x.message;
  }
  Cdc one = GoodCdc();
  one.scd_type = 1;
  ExpectNo(Validate(CdcPipeline(one)), "cdc-scd-type");
}

TEST(ValidateCdc, ExceptColumnsNamingAKey) {
  Cdc c = GoodCdc();
  c.except_columns = {"amount", "id"};
  Diagnostic x = One(Validate(CdcPipeline(c)), "cdc-except-key");
  EXPECT_TRUE(Contains(x.message, "'id'"));
  ExpectNo(Validate(CdcPipeline(GoodCdc())), "cdc-except-key");
}

TEST(ValidateCdc, ColumnListsAndTrackedHistory) {
  Cdc c = GoodCdc();
  c.except_columns.clear();
  c.columns = {"id", "amount"};
  ExpectNo(Validate(CdcPipeline(c)), "cdc-columns");
  c.track_history = {"amount"};
  ExpectNo(Validate(CdcPipeline(c)), "cdc-track-history");
  // A column list that leaves out a key, or both lists.
  Cdc no_key = c;
  no_key.columns = {"amount"};
  EXPECT_TRUE(Contains(One(Validate(CdcPipeline(no_key)), "cdc-columns-key").message, "'id'"));
  Cdc both = c;
  both.except_columns = {"ts"};
  EXPECT_TRUE(Contains(One(Validate(CdcPipeline(both)), "cdc-columns").hint, "column_list"));
  // Tracked history needs SCD type 2, and one of its two lists.
  Cdc scd1 = c;
  scd1.scd_type = 1;
  EXPECT_TRUE(Contains(One(Validate(CdcPipeline(scd1)), "cdc-track-history").message,
                       "SCD type 1"));
  Cdc two_lists = c;
  two_lists.track_history_except = {"ts"};
  EXPECT_TRUE(Contains(One(Validate(CdcPipeline(two_lists)), "cdc-track-history").message,
                       "both"));
}

TEST(ValidateCdc, KeyMissingFromDeclaredSchema) {
  Cdc c = GoodCdc();
  c.keys = {"idd"};
  Diagnostic x = One(Validate(CdcPipeline(c)), "cdc-column");
  EXPECT_TRUE(Contains(x.message, "did you mean 'id'")) << x.message;
  // Undeclared target schema: not checked.
  Pipeline p = CdcPipeline(c);
  testing::FindDatasetMut(p, "customers")->schema.arrow = nullptr;
  ExpectNo(Validate(p), "cdc-column");
}

}  // namespace
}  // namespace thund
