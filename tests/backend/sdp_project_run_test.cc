// A Spark Declarative Pipelines project as users write it runs unchanged with
// `thund run`: the spec `spark-pipelines init` writes (storage: file:///abs),
// a `transformations/**` library glob, Spark's csv.`path` / json.`path` /
// parquet.`path` reads and ${key} from the spec's configuration. Every
// dataset is checked against a separate DuckDB reading the same files.
#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>

#include "batch_fixture.h"
#include "testing/run_command.h"

namespace thund::native::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using thund::testing::RunCommand;
using thund::testing::ShellQuote;

class SdpProjectRunTest : public BatchFixture {
 protected:
  void SetUp() override {
    WriteFile("data/customers.csv",
              "id,name,since\n1,ann,2020-01-05\n2,bob,2021-03-07\n3,cy,2022-11-30\n");
    WriteFile("data/events.json",
              "{\"id\": 1, \"kind\": \"click\"}\n{\"id\": 2, \"kind\": \"view\"}\n"
              "{\"id\": 3, \"kind\": \"click\"}\n");
    WriteFile("project/data/codes.csv", "007,seven\n010,ten\n");  // relative to the project
    std::filesystem::create_directories(Path("data/orders"));
    Oracle("SELECT 1");  // opens the oracle's session
    ASSERT_TRUE(oracle_
                    ->Execute("COPY (SELECT * FROM (VALUES (1, 10), (2, 20), (1, 30), (3, 5)) "
                              "v(customer_id, amount)) TO '" +
                              Path("data/orders/part-00000.parquet") + "'")
                    .ok());
    WriteFile("data/orders/_SUCCESS", "");
    WriteSpec("file://" + root());
    WriteFile("project/transformations/example_sql_materialized_view.sql",
              "-- Spark's own file reads, paths from the spec's configuration.\n"
              "CREATE MATERIALIZED VIEW customers AS\n"
              "SELECT * FROM csv.`${data_dir}/customers.csv` WITH ('header' = 'true', "
              "'inferSchema' = 'true');\n\n"
              "CREATE MATERIALIZED VIEW raw_customers AS\n"
              "SELECT * FROM csv.`${data_dir}/customers.csv` WITH ('header' = 'true');\n\n"
              "CREATE MATERIALIZED VIEW codes AS SELECT _c0 AS code, _c1 AS label FROM "
              "csv.`data/codes.csv`;\n\n"
              "CREATE MATERIALIZED VIEW events AS SELECT * FROM json.`${data_dir}/events.json`;\n");
    WriteFile("project/transformations/reports/big_orders.sql",
              "CREATE MATERIALIZED VIEW big_orders AS\n"
              "WITH o AS (SELECT * FROM parquet.`${data_dir}/orders`)\n"
              "SELECT c.name, o.amount, e.kind\n"
              "FROM o JOIN customers c ON o.customer_id = c.id\n"
              "LEFT JOIN json.`${data_dir}/events.json` AS e ON e.id = c.id\n"
              "WHERE o.amount > ${min_amount};\n");
  }

  // The spec as `spark-pipelines init` writes it, plus a configuration.
  void WriteSpec(const std::string& storage) {
    WriteFile("project/spark-pipeline.yml",
              "name: sdp_compat\n"
              "storage: " + storage + "\n"
              "configuration:\n"
              "  data_dir: " + Path("data") + "\n"
              "  min_amount: \"8\"\n"
              "libraries:\n"
              "  - glob:\n"
              "      include: transformations/**\n");
  }
  // `thund <args>` run from the project directory, as a user would.
  thund::testing::CommandResult ThundInProject(const std::string& args) const {
    return RunCommand("cd " + ShellQuote(Path("project")) + " && " + THUND_BINARY + " " + args);
  }
  std::string Csv(const std::string& name) const { return "'" + Path("data/" + name) + "'"; }
};

TEST_F(SdpProjectRunTest, InitShapedProjectRunsAndMatchesDuckDb) {
  auto r = ThundInProject("run .");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("storage " + root()));
  EXPECT_THAT(r.out, HasSubstr("of pipeline 'sdp_compat': completed"));
  EXPECT_TRUE(std::filesystem::exists(root() + "/customers/_current"));

  EXPECT_DATASET_MATCHES("customers",
                         "SELECT * FROM read_csv(" + Csv("customers.csv") + ", header = true)");
  // inferSchema off: every column a string, as Spark reads it.
  EXPECT_DATASET_MATCHES("raw_customers",
                         "SELECT * FROM read_csv(" + Csv("customers.csv") +
                             ", header = true, all_varchar = true)");
  auto raw = ReadDataset("raw_customers");
  ASSERT_NE(raw, nullptr);
  for (const auto& f : raw->schema()->fields()) EXPECT_EQ(f->type()->id(), arrow::Type::STRING);
  // No header: Spark's _c0, _c1 names, strings (leading zeros kept); the
  // relative path resolved from the working directory.
  EXPECT_DATASET_MATCHES("codes", "SELECT * FROM (VALUES ('007', 'seven'), ('010', 'ten')) "
                                  "v(code, label)");
  EXPECT_DATASET_MATCHES("events", "SELECT * FROM read_json(" + Csv("events.json") + ")");
  EXPECT_DATASET_MATCHES(
      "big_orders",
      "SELECT c.name, o.amount, e.kind FROM read_parquet('" + Path("data/orders") +
          "/*.parquet') o JOIN read_csv(" + Csv("customers.csv") +
          ") c ON o.customer_id = c.id LEFT JOIN read_json(" + Csv("events.json") +
          ") e ON e.id = c.id WHERE o.amount > 8");

  // The file reads are inputs: unchanged files leave everything up to date,
  // a changed file recomputes what reads it (and what depends on that).
  auto again = ThundInProject("run .");
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_THAT(again.out, Not(HasSubstr("computed ")));
  WriteFile("data/customers.csv", "id,name,since\n1,ann,2020-01-05\n2,bo,2021-03-07\n");
  auto changed = ThundInProject("run .");
  ASSERT_EQ(changed.exit_code, 0) << changed.out << changed.err;
  EXPECT_THAT(changed.out, HasSubstr("input file " + Path("data/customers.csv") + " changed"));
  EXPECT_THAT(changed.out, HasSubstr("input 'customers' changed"));
  EXPECT_DATASET_MATCHES("big_orders", "SELECT * FROM (VALUES ('ann', 10, 'click'), ('bo', 20, "
                                       "'view'), ('ann', 30, 'click')) v(name, amount, kind)");

  // show and query read the same file:// storage root.
  auto show = ThundInProject("show codes . --format csv");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.out, "\"code\",\"label\"\n\"007\",\"seven\"\n\"010\",\"ten\"\n");
  auto runs = ThundInProject("runs .");
  EXPECT_EQ(runs.exit_code, 0) << runs.err;
}

TEST_F(SdpProjectRunTest, StorageUrisOfEveryLocalSpellingWork) {
  for (const std::string& storage : {"file:" + root(), "file://localhost" + root()}) {
    WriteSpec(storage);
    auto r = ThundInProject("run . --full-refresh-all");
    ASSERT_EQ(r.exit_code, 0) << storage << "\n" << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("storage " + root())) << storage;
  }
}

TEST_F(SdpProjectRunTest, OtherStorageSchemesAreStillRefused) {
  WriteSpec("gs://bucket/pipelines/sdp");  // s3:// roots work (object_storage_test.cc)
  auto gs = ThundInProject("run .");
  EXPECT_EQ(gs.exit_code, 1);
  EXPECT_THAT(gs.err, HasSubstr("datasets are stored on local disk or S3"));
  WriteSpec("file://fileserver/share/sdp");
  auto remote = ThundInProject("run .");
  EXPECT_EQ(remote.exit_code, 1);
  EXPECT_THAT(remote.err, HasSubstr("names host 'fileserver'"));
}

TEST_F(SdpProjectRunTest, AnUndefinedKeyStopsTheRunBeforeItStarts) {
  WriteFile("project/transformations/reports/big_orders.sql",
            "CREATE MATERIALIZED VIEW big_orders AS\n"
            "SELECT * FROM parquet.`${data_dir}/orders` WHERE amount > ${min_amt};\n");
  auto r = ThundInProject("run .");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("transformations/reports/big_orders.sql:2:59: error: ${min_amt} "
                               "is not defined: the spec's configuration defines data_dir, "
                               "min_amount"));
  EXPECT_FALSE(std::filesystem::exists(root() + "/customers"));
}

}  // namespace
}  // namespace thund::native::testing
