// DatasetStatus names and the native part of an outcome in the summary text.
#include <gtest/gtest.h>

#include <string>

#include "thund/backend.h"

namespace thund {
namespace {

TEST(DatasetStatusTest, NamesRoundTrip) {
  for (DatasetStatus s : {DatasetStatus::kComputed, DatasetStatus::kUpToDate,
                          DatasetStatus::kFailed, DatasetStatus::kSkipped}) {
    ASSERT_EQ(ParseDatasetStatus(Name(s)), s) << Name(s);
  }
  EXPECT_EQ(std::string(Name(DatasetStatus::kUpToDate)), "up_to_date");
  EXPECT_EQ(ParseDatasetStatus("Computed"), std::nullopt);
  EXPECT_EQ(ParseDatasetStatus(""), std::nullopt);
}

TEST(DatasetStatusTest, SummaryPrintsTheStatusAndNativeBadRows) {
  RunSummary s;
  s.run_id = "r1";
  s.pipeline = "p";
  DatasetOutcome plain;
  plain.dataset = "a";
  plain.status = DatasetStatus::kSkipped;
  plain.reason = "not selected";
  DatasetOutcome native;
  native.dataset = "b";
  native.rows_written = 7;
  native.native.emplace().bad_rows = 2;
  s.datasets = {plain, native};
  const std::string text = s.ToString();
  EXPECT_NE(text.find("a        skipped              -  not selected"), std::string::npos)
      << text;
  EXPECT_NE(text.find("computed             7"), std::string::npos) << text;
  EXPECT_NE(text.find("2 malformed input rows skipped"), std::string::npos) << text;
  EXPECT_EQ(text.find("0 malformed"), std::string::npos) << text;
}

}  // namespace
}  // namespace thund
