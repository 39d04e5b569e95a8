// Spark's file reads in SQL (csv.`path` WITH (...), json.`path`,
// parquet.`path`): translated for DuckDB, they read real files the way Spark
// does. Expected rows come from the data each test writes, not from the
// translation; DuckDB reading the files with its own options is the oracle
// where one is needed.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sql/duckdb_runner.h"
#include "thund/sql_dialect.h"
#include "thund/validate.h"

namespace thund {
namespace {

using testing::DuckDbRunner;
using Rows = std::vector<std::vector<std::string>>;

class FileReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("thund_sql_file_read_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // The translation of `spark`; also checks it is a fixed point.
  std::string Tr(const std::string& spark) {
    auto r = SparkToDuckDb(spark);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << "\nquery: " << spark;
    if (!r.ok()) return "";
    auto again = SparkToDuckDb(*r);
    EXPECT_TRUE(again.ok() && *again == *r) << "not idempotent: " << *r;
    return *r;
  }
  // The error the translation gives for `spark` (empty if it succeeds).
  std::string Error(const std::string& spark) {
    auto r = SparkToDuckDb(spark);
    return r.ok() ? std::string() : r.status().message();
  }
  Rows Run(const std::string& spark) { return db_.Rows(Tr(spark)); }
  std::vector<std::string> Types(const std::string& spark) {
    Rows rows = db_.Rows("SELECT column_type FROM (DESCRIBE " + Tr(spark) + ")");
    std::vector<std::string> out;
    for (const auto& r : rows) out.push_back(r[0]);
    return out;
  }

  std::filesystem::path dir_;
  DuckDbRunner db_;
};

const char kPeople[] = "id,name,score,code\n1,ann,1.5,007\n2,bob,2.5,010\n3,cy,3.5,100\n";

TEST_F(FileReadTest, CsvWithHeaderAndInferSchemaReadsTypedColumns) {
  const std::string f =
      Write("typed.csv", "id,name,score,n\n1,ann,1.5,7\n2,bob,2.5,10\n3,cy,,100\n");
  const std::string q = "SELECT * FROM csv.`" + f +
                        "` WITH ('header' = 'true', 'inferSchema' = 'true') ORDER BY id";
  EXPECT_EQ(db_.ColumnNames(Tr(q)), (std::vector<std::string>{"id", "name", "score", "n"}));
  EXPECT_EQ(Types(q), (std::vector<std::string>{"BIGINT", "VARCHAR", "DOUBLE", "BIGINT"}));
  EXPECT_EQ(Run(q), (Rows{{"1", "ann", "1.5", "7"}, {"2", "bob", "2.5", "10"},
                          {"3", "cy", "NULL", "100"}}));
  // The oracle: DuckDB reading the same file on its own.
  EXPECT_EQ(Run(q), db_.Rows("SELECT * FROM read_csv('" + f + "') ORDER BY id"));
  // A known difference (docs/sql.md): DuckDB keeps numbers with leading zeros
  // as strings where Spark infers integers (007 -> 7).
  const std::string z = Write("zeros.csv", kPeople);
  EXPECT_EQ(Types("SELECT code FROM csv.`" + z + "` WITH (header = true, inferSchema = true)"),
            (std::vector<std::string>{"VARCHAR"}));
}

TEST_F(FileReadTest, CsvWithoutInferSchemaReadsStringsAsSparkDoes) {
  const std::string f = Write("people.csv", kPeople);
  for (const std::string opts : {"WITH ('header' = 'true')",
                                 "WITH (header = true, inferSchema = false)",
                                 "WITH ('HEADER' 'TRUE')"}) {
    const std::string q = "SELECT * FROM csv.`" + f + "` " + opts + " ORDER BY id";
    EXPECT_EQ(Types(q), std::vector<std::string>(4, "VARCHAR")) << opts;
    // Strings as written: leading zeros survive.
    EXPECT_EQ(Run(q), (Rows{{"1", "ann", "1.5", "007"}, {"2", "bob", "2.5", "010"},
                            {"3", "cy", "3.5", "100"}}))
        << opts;
  }
}

TEST_F(FileReadTest, CsvWithoutHeaderNamesColumnsLikeSpark) {
  const std::string f = Write("people.csv", kPeople);
  const std::string q = "SELECT * FROM csv.`" + f + "`";
  EXPECT_EQ(db_.ColumnNames(Tr(q)), (std::vector<std::string>{"_c0", "_c1", "_c2", "_c3"}));
  // The header line is a row; everything is a string.
  EXPECT_EQ(Run(q + " ORDER BY _c0"), (Rows{{"1", "ann", "1.5", "007"}, {"2", "bob", "2.5", "010"},
                                            {"3", "cy", "3.5", "100"},
                                            {"id", "name", "score", "code"}}));
  // Twelve columns: still _c0 .. _c11 (DuckDB would say column00 .. column11).
  std::string wide;
  for (int i = 0; i < 12; ++i) wide += (i ? "," : "") + std::to_string(i * 10);
  const std::string w = Write("wide.csv", wide + "\n");
  Rows row = Run("SELECT _c0, _c9, _c10, _c11 FROM csv.`" + w + "` WITH ('inferSchema' = 'true')");
  EXPECT_EQ(row, (Rows{{"0", "90", "100", "110"}}));
}

TEST_F(FileReadTest, CsvOptionsMapToDuckDb) {
  const std::string f = Write("odd.csv",
                              "day|at|qty|note\n"
                              "03/02/2024|2024-02-03 10:11:12|NA|'a|b'\n"
                              "04/02/2024|2024-02-04 00:00:00|5|plain\n");
  const std::string q = "SELECT * FROM csv.`" + f +
                        "` WITH ('header' = 'true', 'inferSchema' = 'true', 'sep' = '|', "
                        "'nullValue' = 'NA', 'quote' = '\\'', 'dateFormat' = 'dd/MM/yyyy', "
                        "'timestampFormat' = 'yyyy-MM-dd HH:mm:ss') ORDER BY day";
  EXPECT_EQ(Types(q), (std::vector<std::string>{"DATE", "TIMESTAMP", "BIGINT", "VARCHAR"}));
  EXPECT_EQ(Run(q), (Rows{{"2024-02-03", "2024-02-03 10:11:12", "NULL", "a|b"},
                          {"2024-02-04", "2024-02-04 00:00:00", "5", "plain"}}));
  // `delimiter` is sep's other name; a tab written as Spark writes it.
  const std::string t = Write("tab.tsv", "a\tb\n1\t2\n");
  EXPECT_EQ(Run("SELECT b FROM csv.`" + t + "` WITH (header 'true', delimiter '\\t')"),
            (Rows{{"2"}}));
}

TEST_F(FileReadTest, JsonLinesAndMultiLine) {
  const std::string lines =
      Write("events.json", "{\"id\": 1, \"tag\": \"x\"}\n{\"id\": 2, \"tag\": \"y\"}\n");
  EXPECT_EQ(Run("SELECT id, tag FROM json.`" + lines + "` ORDER BY id"),
            (Rows{{"1", "x"}, {"2", "y"}}));
  const std::string array = Write("array.json", "[\n  {\"id\": 7},\n  {\"id\": 8}\n]\n");
  EXPECT_EQ(Run("SELECT id FROM json.`" + array + "` WITH ('multiLine' = 'true') ORDER BY id"),
            (Rows{{"7"}, {"8"}}));
  // Without multiLine a file is JSON Lines, as in Spark: an array spread over
  // lines does not read.
  std::string error;
  db_.Rows(Tr("SELECT * FROM json.`" + array + "`"), &error);
  EXPECT_FALSE(error.empty());
}

TEST_F(FileReadTest, ParquetDirectoriesAliasesJoinsAndCtes) {
  const std::string dir = Path("orders");
  std::filesystem::create_directories(dir + "/day=1");
  std::filesystem::create_directories(dir + "/day=2");
  for (int day : {1, 2}) {
    ASSERT_TRUE(db_.Exec("COPY (SELECT " + std::to_string(day) + " AS id, " +
                         std::to_string(day * 10) + " AS amount) TO '" + dir + "/day=" +
                         std::to_string(day) + "/part-0.parquet'"));
  }
  Write("orders/_SUCCESS", "");  // what Spark leaves next to its output
  const std::string people = Write("people.csv", kPeople);
  // The oracle: DuckDB reading every Parquet file below the directory.
  EXPECT_EQ(Run("SELECT id, amount, day FROM parquet.`" + dir + "` ORDER BY id"),
            db_.Rows("SELECT id, amount, day FROM read_parquet('" + dir +
                     "/**/*.parquet', hive_partitioning = true) ORDER BY id"));
  EXPECT_EQ(Run("SELECT o.amount FROM parquet.`" + dir + "` AS o WHERE o.id = 2"), (Rows{{"20"}}));
  EXPECT_EQ(Run("SELECT p.name, o.amount FROM csv.`" + people +
                "` WITH ('header' = 'true', 'inferSchema' = 'true') p JOIN parquet.`" + dir +
                "` o ON p.id = o.id ORDER BY o.amount"),
            (Rows{{"ann", "10"}, {"bob", "20"}}));
  EXPECT_EQ(Run("WITH o AS (SELECT * FROM parquet.`" + dir + "/`), p AS (SELECT * FROM csv.`" +
                people + "` WITH (header = true)) SELECT count(*) FROM o, p WHERE o.id = p.id"),
            (Rows{{"2"}}));
  // A file: URI names a local file too.
  EXPECT_EQ(Run("SELECT count(*) FROM parquet.`file://" + dir + "`"), (Rows{{"2"}}));
}

TEST_F(FileReadTest, FileReadsAreNotDatasetInputs) {
  const std::string q =
      "SELECT * FROM csv.`/data/a.csv` WITH ('header' = 'true') a JOIN orders o ON a.id = o.id "
      "JOIN parquet.`/data/p` ON true, json.`rel/x.json`";
  auto inputs = InferSqlInputs(q);
  ASSERT_TRUE(inputs.ok()) << inputs.status().ToString();
  EXPECT_EQ(*inputs, (std::vector<std::string>{"orders"}));
}

TEST_F(FileReadTest, TranslationShapes) {
  EXPECT_EQ(Tr("SELECT * FROM parquet.`d/`"), "SELECT * FROM read_parquet('d/')");
  EXPECT_EQ(Tr("SELECT * FROM parquet.`d` WITH ('mergeSchema' = 'true') t"),
            "SELECT * FROM read_parquet('d', union_by_name = true) t");
  EXPECT_EQ(Tr("SELECT * FROM json.`e.json`"),
            "SELECT * FROM read_json('e.json', format = 'newline_delimited')");
  EXPECT_EQ(Tr("SELECT * FROM csv.`x.csv` WITH ('header' = 'true', 'inferSchema' = 'true')"),
            "SELECT * FROM read_csv('x.csv', header = true, delim = ',', quote = '\"')");
  // Names that merely look alike are left alone.
  EXPECT_EQ(Tr("SELECT csv.x FROM csv"), "SELECT csv.x FROM csv");
  EXPECT_EQ(Tr("SELECT * FROM csv.t"), "SELECT * FROM csv.t");
}

TEST_F(FileReadTest, UnknownOrBadOptionsAreNamedErrors) {
  std::string e =
      Error("SELECT *\nFROM csv.`a.csv` WITH ('header' = 'true', 'samplingRatio' = '0.5')");
  EXPECT_NE(e.find("csv option 'samplingratio' is not supported"), std::string::npos) << e;
  EXPECT_NE(e.find("line 2, column 43"), std::string::npos) << e;
  EXPECT_NE(e.find("inferSchema"), std::string::npos) << e;  // lists what it reads
  e = Error("SELECT * FROM csv.`a.csv` WITH ('header' = 'yes')");
  EXPECT_NE(e.find("'header' is true or false, not 'yes'"), std::string::npos) << e;
  e = Error("SELECT * FROM parquet.`d` WITH ('compression' = 'zstd')");
  EXPECT_NE(e.find("parquet option 'compression' is not supported"), std::string::npos) << e;
  e = Error("SELECT * FROM json.`d` WITH ('mode' = 'LENIENT')");
  EXPECT_NE(e.find("PERMISSIVE, DROPMALFORMED or FAILFAST"), std::string::npos) << e;
  e = Error("SELECT * FROM orc.`/data/x.orc`");
  EXPECT_NE(e.find("orc files are not supported"), std::string::npos) << e;
}

}  // namespace
}  // namespace thund
