// Bad input: missing files, malformed CSV/JSON rows in each bad_rows mode,
// data that does not match a declared schema, and SQL errors — each with the
// message a user sees, and nothing already committed lost.
#include <gmock/gmock.h>

#include <arrow/type.h>

#include "batch_fixture.h"
#include "thund/type_names.h"

namespace thund::native::testing {
namespace {

using ::testing::HasSubstr;

class BadInputTest : public BatchFixture {
 protected:
  void SetUp() override {
    WriteFile("rows.csv", "id,name,amount\n1,a,10\n2,b,xx\n3,c,30\n4,d\n5,e,50\n");
    WriteFile("rows.json",
              "{\"id\": 1, \"amount\": 10}\n{\"id\": 2, bad json\n\n{\"id\": 3, \"amount\": 30}\n"
              "[1, 2]\n{\"id\": \"x\", \"amount\": 5}\n{\"id\": 6, \"amount\": 60}\n");
  }
  Pipeline Source(const std::string& file, const std::string& format, const std::string& mode,
                  bool declare) const {
    Pipeline p("bad");
    Dataset d = Dataset::Table("t");
    if (declare) {
      d.WithSchema(arrow::schema({arrow::field("id", arrow::int64()),
                                  arrow::field("name", arrow::utf8()),
                                  arrow::field("amount", arrow::int64())}));
      if (format == "json") {
        d.WithSchema(arrow::schema(
            {arrow::field("id", arrow::int64()), arrow::field("amount", arrow::int64())}));
      }
    }
    p.Add(d);
    StringMap options;
    if (format == "csv") options["header"] = "true";
    if (!mode.empty()) options["bad_rows"] = mode;
    p.Add(Flow::FromSource("load", "t",
                           FileSource{Path(file), ParseFileFormat(format), false, options}));
    p.AddQuery(Dataset::MaterializedView("total"), "SELECT sum(amount) AS s FROM t");
    return p;
  }
  const DatasetOutcome& Outcome(const RunSummary& s, const std::string& d) {
    static DatasetOutcome none;
    const DatasetOutcome* o = Find(s, d);
    return o ? *o : none;
  }
};

TEST_F(BadInputTest, MissingInputFileNamesFlowAndPath) {
  Pipeline p("missing");
  Flow f("load", "t", "SELECT * FROM read_csv('" + Path("nope/*.csv") + "')");
  f.location = {"pipe.yaml", 7, 5};
  p.Add(Dataset::Table("t"));
  p.Add(f);
  RunSummary s = Run(p);
  EXPECT_EQ(s.status, RunPhase::kFailed);
  EXPECT_THAT(Outcome(s, "t").reason, HasSubstr("flow 'load' (pipe.yaml:7:5)"));
  EXPECT_THAT(Outcome(s, "t").reason, HasSubstr("read_csv('" + Path("nope/*.csv") + "') matches no file"));
}

TEST_F(BadInputTest, EmptyDirectorySourceNamesFlowAndPath) {
  WriteFile("empty/_SUCCESS", "");
  Pipeline p("empty");
  p.Add(Dataset::Table("t"));
  p.Add(Flow::FromSource("load", "t", FileSource{Path("empty"), FileFormat::kParquet, false, {}}));
  RunSummary s = Run(p);
  EXPECT_EQ(s.status, RunPhase::kFailed);
  EXPECT_THAT(Outcome(s, "t").reason, HasSubstr("flow 'load'"));
  EXPECT_THAT(Outcome(s, "t").reason, HasSubstr("input path '" + Path("empty") + "' matches no file"));
}

TEST_F(BadInputTest, MalformedCsvFailsByDefaultWithFileAndLine) {
  RunSummary s = Run(Source("rows.csv", "csv", "", true));
  EXPECT_EQ(s.status, RunPhase::kFailed);
  const std::string& why = Outcome(s, "t").reason;
  EXPECT_THAT(why, HasSubstr("flow 'load'"));
  EXPECT_THAT(why, HasSubstr("malformed input row at " + Path("rows.csv") + ":3:"));
  EXPECT_THAT(why, HasSubstr("and 1 more bad rows"));
  EXPECT_THAT(why, HasSubstr("bad_rows"));
  EXPECT_EQ(ReadDataset("t"), nullptr);
  EXPECT_EQ(Outcome(s, "total").status, DatasetStatus::kSkipped);
}

TEST_F(BadInputTest, MalformedCsvRowsAreDroppedAndCounted) {
  RunSummary s = Run(Source("rows.csv", "csv", "drop", true));
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_EQ(Outcome(s, "t").native->bad_rows, 2);
  EXPECT_DATASET_MATCHES("t", "SELECT * FROM (VALUES (1, 'a', 10), (3, 'c', 30), (5, 'e', 50)) "
                              "v(id, name, amount)");
  EXPECT_EQ(ReadDataset("t__dead_letter"), nullptr);
}

TEST_F(BadInputTest, MalformedCsvRowsGoToTheDeadLetterDataset) {
  RunSummary s = Run(Source("rows.csv", "csv", "dead_letter", true));
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_DATASET_MATCHES("t", "SELECT * FROM (VALUES (1, 'a', 10), (3, 'c', 30), (5, 'e', 50)) "
                              "v(id, name, amount)");
  auto dead = Oracle("SELECT flow, file, line, raw FROM read_parquet('" + root() +
                     "/t__dead_letter/current/*.parquet') ORDER BY line");
  auto expected = Oracle("SELECT * FROM (VALUES ('load', '" + Path("rows.csv") +
                         "', 3::BIGINT, '2,b,xx'), ('load', '" + Path("rows.csv") +
                         "', 5::BIGINT, '4,d')) v(flow, file, line, raw)");
  EXPECT_TRUE(engine::testing::TablesEqualOrdered(*expected, *dead));
  auto reasons = Oracle("SELECT reason FROM read_parquet('" + root() +
                        "/t__dead_letter/current/*.parquet') ORDER BY line");
  EXPECT_THAT(engine::testing::RowStrings(*reasons)[0], HasSubstr("amount"));
  EXPECT_THAT(Outcome(s, "t").reason, HasSubstr("2 malformed rows kept in t__dead_letter"));
}

TEST_F(BadInputTest, MalformedJsonFailsWithFileAndLine) {
  RunSummary s = Run(Source("rows.json", "json", "fail", false));
  EXPECT_EQ(s.status, RunPhase::kFailed);
  EXPECT_THAT(Outcome(s, "t").reason,
              HasSubstr("malformed input row at " + Path("rows.json") + ":2: malformed JSON"));
}

TEST_F(BadInputTest, MalformedJsonDropAndDeadLetter) {
  RunSummary s = Run(Source("rows.json", "json", "drop", false));
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_EQ(Outcome(s, "t").native->bad_rows, 2);  // line 2 (syntax), line 5 (an array)
  // Exactly what read_json gives for a file holding only the good lines.
  WriteFile("only_good.json",
            "{\"id\": 1, \"amount\": 10}\n{\"id\": 3, \"amount\": 30}\n"
            "{\"id\": \"x\", \"amount\": 5}\n{\"id\": 6, \"amount\": 60}\n");
  EXPECT_DATASET_MATCHES("t", "SELECT * FROM read_json('" + Path("only_good.json") + "')");

  RunSummary typed = Run(Source("rows.json", "json", "dead_letter", true));
  ASSERT_EQ(typed.status, RunPhase::kCompleted) << typed.ToString();
  EXPECT_EQ(Outcome(typed, "t").native->bad_rows, 3);  // and line 6: "x" is not a bigint
  EXPECT_DATASET_MATCHES("t", "SELECT * FROM (VALUES (1, 10), (3, 30), (6, 60)) v(id, amount)");
  auto dead = Oracle("SELECT line, reason FROM read_parquet('" + root() +
                     "/t__dead_letter/current/*.parquet') ORDER BY line");
  auto rows = engine::testing::RowStrings(*dead);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_THAT(rows[0], HasSubstr("2 | malformed JSON"));
  EXPECT_THAT(rows[1], HasSubstr("5 | not a JSON object (found array)"));
  EXPECT_THAT(rows[2], HasSubstr("6 | column 'id' (BIGINT): cannot convert \"x\""));
}

TEST_F(BadInputTest, DeclaredSchemaMismatchNamesColumnsAndTypes) {
  Pipeline p("schema");
  Dataset d = Dataset::Table("t");
  d.WithSchema(arrow::schema({arrow::field("id", arrow::int64()),
                              arrow::field("when", arrow::date32())}));
  p.AddQuery(d, "SELECT 1 AS id, 'x' AS label");
  RunSummary s = Run(p);
  EXPECT_EQ(s.status, RunPhase::kFailed);
  const std::string& why = Outcome(s, "t").reason;
  EXPECT_THAT(why, HasSubstr("does not match the declared schema"));
  EXPECT_THAT(why, HasSubstr("missing column 'when' (date)"));
  EXPECT_THAT(why, HasSubstr("unexpected column 'label' (string)"));
}

TEST_F(BadInputTest, DeclaredTypeThatDoesNotConvertNamesTheColumn) {
  Pipeline p("schema");
  Dataset d = Dataset::Table("t");
  d.WithSchema(arrow::schema({arrow::field("id", arrow::int64())}));
  p.AddQuery(d, "SELECT * FROM (VALUES ('1'), ('two')) v(id)");
  RunSummary s = Run(p);
  EXPECT_EQ(s.status, RunPhase::kFailed);
  EXPECT_THAT(Outcome(s, "t").reason,
              HasSubstr("column 'id' is bigint (declared) but flow 't' produces string values "
                        "that do not convert"));
  // A convertible type is cast to the declared one.
  Pipeline q("cast");
  q.AddQuery(d, "SELECT * FROM (VALUES ('1'), ('2')) v(id)");
  ASSERT_EQ(Run(q).status, RunPhase::kCompleted);
  EXPECT_TRUE(ReadDataset("t")->schema()->field(0)->type()->Equals(arrow::int64()));
}

TEST_F(BadInputTest, SqlErrorsNameTheFlowAndItsLocation) {
  Pipeline p("sql");
  Flow f("broken", "t", "SELECT no_such_column FROM (SELECT 1 AS x)");
  f.location = {"pipe.sql", 12, 1};
  p.Add(Dataset::Table("t"));
  p.Add(f);
  p.AddQuery(Dataset::Table("fine"), "SELECT 1 AS x");
  RunSummary s = Run(p);
  EXPECT_EQ(s.status, RunPhase::kFailed);
  EXPECT_THAT(Outcome(s, "t").reason, HasSubstr("flow 'broken' (pipe.sql:12:1)"));
  EXPECT_THAT(Outcome(s, "t").reason, HasSubstr("no_such_column"));
  EXPECT_EQ(Outcome(s, "fine").status, DatasetStatus::kComputed);
}

TEST_F(BadInputTest, BadInputNeverLosesTheCommittedVersion) {
  WriteFile("good.csv", "id,name,amount\n1,a,10\n");
  Pipeline good = Source("good.csv", "csv", "", true);
  ASSERT_EQ(Run(good).status, RunPhase::kCompleted);
  WriteFile("good.csv", "id,name,amount\n1,a,10\n2,b,oops\n");
  RunSummary s = Run(good);
  EXPECT_EQ(s.status, RunPhase::kFailed);
  EXPECT_EQ(CurrentVersion("t"), "v-000001");
  EXPECT_DATASET_MATCHES("t", "SELECT 1::BIGINT AS id, 'a' AS name, 10::BIGINT AS amount");
}

}  // namespace
}  // namespace thund::native::testing
