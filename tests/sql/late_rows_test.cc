// SQL: WITH (mode = ...) set or unset, and WITH (late_rows = '...') on CREATE
// <dataset> ... AS and CREATE FLOW: what they lower to, their errors, how
// FormatSql writes them back, and the late-rows checks of thund check on a SQL
// file.
#include <string>

#include <gtest/gtest.h>

#include "thund/pipeline_file.h"
#include "sql/parse_helpers.h"
#include "thund/sql_pipeline.h"
#include "thund/validate.h"

namespace thund {
namespace {

using testing::OnlyError;
using testing::Parse;
using testing::Render;

const Flow& FlowNamed(const Pipeline& p, const std::string& name) {
  const Flow* f = p.FindFlow(name);
  EXPECT_NE(f, nullptr) << name;
  static const Flow kNone;
  return f ? *f : kNone;
}

// Bids with a watermark; max_price and the flow more_bids send late rows to late_bids.
const char* kAuctions = R"sql(
CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid');
CREATE STREAMING TABLE late_bids;
CREATE STREAMING TABLE max_price
WITH (mode = 'incremental', late_rows = 'late_bids')
AS SELECT window.start, max(price) AS max_price
FROM STREAM bids WATERMARK date_time DELAY OF INTERVAL 5 SECONDS
GROUP BY window(date_time, '10 seconds');
CREATE STREAMING TABLE all_bids;
CREATE FLOW more_bids WITH (late_rows = late_bids, mode = 'recompute') AS
INSERT INTO all_bids BY NAME
SELECT * FROM STREAM bids WATERMARK date_time DELAY OF INTERVAL 5 SECONDS;
)sql";

TEST(SqlLateRows, WithOptionOnTheDatasetsQueryAndOnCreateFlow) {
  Pipeline p = Parse(kAuctions);
  const Flow& max_price = FlowNamed(p, "max_price");
  ASSERT_TRUE(max_price.streaming);
  EXPECT_EQ(max_price.streaming->late_rows, "late_bids");
  EXPECT_EQ(max_price.streaming->mode, StreamingMode::kIncremental);
  const Flow& more = FlowNamed(p, "more_bids");
  ASSERT_TRUE(more.streaming);
  EXPECT_EQ(more.streaming->late_rows, "late_bids");  // a bare word names it too
  EXPECT_EQ(more.streaming->mode, StreamingMode::kRecompute);  // explicit, so kept
  // A flow that says nothing has no mode: the run's default applies.
  Pipeline q = Parse(
      "CREATE STREAMING TABLE t WITH (trigger = '1s') AS SELECT * FROM STREAM read_memory('m')");
  ASSERT_TRUE(q.flows[0].streaming);
  EXPECT_FALSE(q.flows[0].streaming->mode.has_value());
  EXPECT_EQ(q.flows[0].streaming->late_rows, "");
}

TEST(SqlLateRows, NoneMeansNoTable) {
  Pipeline p = Parse("CREATE STREAMING TABLE t WITH (late_rows = NONE) AS SELECT * FROM STREAM "
                     "read_memory('m')");
  ASSERT_TRUE(p.flows[0].streaming);
  EXPECT_EQ(*p.flows[0].streaming, StreamingSpec{});
}

TEST(SqlLateRows, OptionErrors) {
  Diagnostic d = OnlyError(
      "CREATE STREAMING TABLE t WITH (late_rows = (a, b)) AS SELECT * FROM STREAM s");
  EXPECT_EQ(d.code, "sql-option");
  EXPECT_EQ(d.message, "option 'late_rows' takes a single value");
  d = OnlyError("CREATE STREAMING TABLE t WITH (late_rows = 'a', late_rows = 'b') AS SELECT 1");
  EXPECT_EQ(d.message, "option 'late_rows' is given twice");
  d = OnlyError("CREATE STREAMING TABLE t WITH (late_rows = 'a')");
  EXPECT_EQ(d.message,
            "option 'late_rows' belongs to a flow, and this statement defines no query");
  d = OnlyError("CREATE STREAMING TABLE t WITH (late_row = 'a') AS SELECT 1");
  EXPECT_EQ(d.hint, "did you mean 'late_rows'?");
  d = OnlyError("CREATE STREAMING TABLE t WITH (mode = 'fast') AS SELECT 1");
  EXPECT_EQ(d.message, "mode is 'recompute' or 'incremental', not 'fast'");
  EXPECT_EQ(d.code, "sql-option");
}

TEST(SqlLateRows, FormatWritesModeWhenSetAndLateRows) {
  Pipeline p = Parse(kAuctions);
  const std::string sql = FormatSql(p);
  EXPECT_NE(sql.find("mode = 'incremental'"), std::string::npos) << sql;
  EXPECT_NE(sql.find("mode = 'recompute'"), std::string::npos) << sql;
  EXPECT_NE(sql.find("late_rows = 'late_bids'"), std::string::npos) << sql;
  ParseResult back = ParseSql(sql, "again.sql");
  ASSERT_TRUE(back.ok()) << Render(back.diagnostics, sql);
  EXPECT_EQ(back.pipeline, p) << sql;
  EXPECT_EQ(FormatSql(back.pipeline), sql);
  // Through the pipeline file and back.
  ParseResult file = ParsePipelineFile(FormatPipelineFile(p), "p.yaml");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file.pipeline, p);
  // No mode set: none written.
  Pipeline q = Parse(
      "CREATE STREAMING TABLE t WITH (trigger = '1s') AS SELECT * FROM STREAM read_memory('m')");
  EXPECT_EQ(FormatSql(q).find("mode ="), std::string::npos) << FormatSql(q);
  // A dataset named like the NONE keyword is quoted, so it stays a name.
  Pipeline n = Parse("CREATE STREAMING TABLE t WITH (late_rows = 'none') AS SELECT * FROM STREAM "
                     "read_memory('m')");
  EXPECT_EQ(n.flows[0].streaming->late_rows, "none");
  EXPECT_EQ(Parse(FormatSql(n)), n) << FormatSql(n);
}

TEST(SqlLateRows, CheckedPipelineIsValid) {
  Pipeline p = Parse(kAuctions);
  Diagnostics d = Validate(p);
  EXPECT_FALSE(HasErrors(d)) << Render(d, kAuctions);
  for (const auto& x : d) EXPECT_NE(x.dataset, "late_bids") << x.ToString();
}

TEST(SqlLateRows, ProblemsPointAtTheStatement) {
  const std::string sql =
      R"sql(CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_memory('b');
CREATE MATERIALIZED VIEW late_bids AS SELECT 1 AS x;
CREATE STREAMING TABLE counts
WITH (late_rows = 'late_bid', output_mode = 'complete')
AS SELECT count(*) AS n FROM STREAM bids;
CREATE STREAMING TABLE others
WITH (late_rows = 'late_bids', watermark = 'date_time')
AS SELECT * FROM STREAM bids;
)sql";
  Pipeline p = Parse(sql);
  Diagnostics d = Validate(p);
  auto with = [&](const std::string& code) {
    for (const auto& x : d) {
      if (x.code == code) return x;
    }
    ADD_FAILURE() << "no " << code << " in\n" << Render(d, sql);
    return Diagnostic{};
  };
  Diagnostic unknown = with("late-rows-unknown");
  EXPECT_EQ(unknown.flow, "counts");
  EXPECT_EQ(unknown.location, (SourceLocation{"test.sql", 3, 24}));
  EXPECT_NE(unknown.message.find("did you mean 'late_bids'?"), std::string::npos)
      << unknown.message;
  EXPECT_EQ(with("late-rows-watermark").flow, "counts");
  Diagnostic kind = with("late-rows-kind");
  EXPECT_EQ(kind.flow, "others");
  EXPECT_NE(kind.message.find("materialized_view"), std::string::npos) << kind.message;
}

// A reader of a stream view without a mode of its own runs incremental (the
// view keeps no rows for Recompute to reread); the run's mode or its own wins;
// readers of stored streams keep the default. `thund plan`, `thund explain`
// and the run all ask FlowStreamingMode.
TEST(StreamingMode, AReaderOfAStreamViewIsIncrementalUnlessAModeIsSet) {
  Pipeline p = Parse(R"sql(
CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid');
CREATE STREAMING TABLE stored AS SELECT * FROM STREAM read_generator(kind => 'nexmark_bid');
CREATE STREAMING TABLE from_view AS SELECT auction FROM STREAM(v);
CREATE STREAMING TABLE set_recompute WITH (mode = 'recompute') AS SELECT auction FROM STREAM(v);
CREATE STREAMING TABLE from_stored AS SELECT auction FROM STREAM(stored);
)sql");
  const std::optional<StreamingMode> none, rec = StreamingMode::kRecompute;
  EXPECT_EQ(FlowStreamingMode(p, FlowNamed(p, "from_view"), none), StreamingMode::kIncremental);
  EXPECT_EQ(FlowStreamingMode(p, FlowNamed(p, "from_view"), rec), StreamingMode::kRecompute);
  EXPECT_EQ(FlowStreamingMode(p, FlowNamed(p, "set_recompute"), none),
            StreamingMode::kRecompute);
  EXPECT_EQ(FlowStreamingMode(p, FlowNamed(p, "from_stored"), none), StreamingMode::kRecompute);
}

}  // namespace
}  // namespace thund
