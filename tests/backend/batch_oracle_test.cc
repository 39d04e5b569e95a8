// Every dataset a run stores equals the same SQL run directly by a fresh
// DuckDB over the same input files (the oracle).
#include <filesystem>
#include <fstream>

#include "batch_fixture.h"

namespace thund::native::testing {
namespace {

class BatchOracleTest : public BatchFixture {
 protected:
  void SetUp() override {
    WriteFile("customers.csv",
              "customer_id,name,country\n1,Ada,DE\n2,Bob,FR\n3,Cy,DE\n4,Dee,US\n");
    WriteFile("orders/2024-01-01.csv",
              "order_id,customer_id,amount,status\n10,1,12.50,placed\n11,2,8.00,cancelled\n"
              "12,3,99.90,shipped\n");
    WriteFile("orders/2024-01-02.csv",
              "order_id,customer_id,amount,status\n13,1,5.25,shipped\n14,4,-1.00,placed\n"
              "15,9,3.00,placed\n");
    WriteFile("payments.json",
              "{\"order_id\": 10, \"paid\": 12.5}\n{\"order_id\": 12, \"paid\": 50.0}\n"
              "{\"order_id\": 13, \"paid\": 5.25}\n");
  }

  std::string Orders() const { return "read_csv('" + Path("orders/*.csv") + "', header = true)"; }
  std::string Customers() const { return "read_csv('" + Path("customers.csv") + "', header = true)"; }

  Pipeline MakePipeline() const {
    Pipeline p("shop");
    p.Add(Dataset::Table("raw_orders"));
    p.Add(Flow("raw_orders", "raw_orders", "SELECT * FROM " + Orders()));
    p.Add(Dataset::Table("customers"));
    p.Add(Flow::FromSource("customers", "customers",
                           FileSource{Path("customers.csv"), FileFormat::kCsv, false,
                                      {{"header", "true"}}}));
    p.Add(Dataset::Table("payments"));
    p.Add(Flow::FromSource("payments", "payments",
                           FileSource{Path("payments.json"), FileFormat::kJson, false, {}}));
    p.AddQuery(Dataset::TemporaryView("live_orders"),
               "SELECT * FROM raw_orders WHERE status <> 'cancelled'");
    p.AddQuery(Dataset::MaterializedView("order_facts"),
               "SELECT o.order_id, c.name, c.country, o.amount, coalesce(p.paid, 0) AS paid\n"
               "FROM live_orders o JOIN customers c USING (customer_id)\n"
               "LEFT JOIN payments p USING (order_id)");
    p.AddQuery(Dataset::MaterializedView("by_country"),
               "SELECT country, count(*) AS orders, sum(amount) AS revenue, sum(paid) AS paid\n"
               "FROM order_facts GROUP BY country");
    // A table fed by two flows.
    p.Add(Dataset::Table("ids"));
    p.Add(Flow("order_ids", "ids", "SELECT order_id AS id, 'order' AS kind FROM raw_orders"));
    p.Add(Flow("customer_ids", "ids", "SELECT customer_id AS id, 'customer' AS kind FROM customers"));
    return p;
  }
};

TEST_F(BatchOracleTest, EveryStoredDatasetEqualsTheSameSqlRunDirectly) {
  RunSummary s = Run(MakePipeline());
  ASSERT_EQ(s.status, RunPhase::kCompleted) << s.ToString();
  EXPECT_DATASET_MATCHES("raw_orders", "SELECT * FROM " + Orders());
  EXPECT_DATASET_MATCHES("customers", "SELECT * FROM " + Customers());
  EXPECT_DATASET_MATCHES("payments", "SELECT * FROM read_json('" + Path("payments.json") + "')");
  const std::string facts =
      "SELECT o.order_id, c.name, c.country, o.amount, coalesce(p.paid, 0) AS paid "
      "FROM (SELECT * FROM " + Orders() + " WHERE status <> 'cancelled') o JOIN " + Customers() +
      " c USING (customer_id) LEFT JOIN read_json('" + Path("payments.json") +
      "') p USING (order_id)";
  EXPECT_DATASET_MATCHES("order_facts", facts);
  EXPECT_DATASET_MATCHES("by_country",
                         "SELECT country, count(*) AS orders, sum(amount) AS revenue, sum(paid) AS "
                         "paid FROM (" + facts + ") GROUP BY country");
  EXPECT_DATASET_MATCHES("ids", "SELECT order_id AS id, 'order' AS kind FROM " + Orders() +
                                    " UNION ALL SELECT customer_id, 'customer' FROM " +
                                    Customers());
  // Views are not stored.
  EXPECT_FALSE(std::filesystem::exists(root() + "/live_orders"));
  const DatasetOutcome* o = Find(s, "by_country");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->status, DatasetStatus::kComputed);
  EXPECT_EQ(o->rows_written, ReadDataset("by_country")->num_rows());
  EXPECT_EQ(o->rows_written, Oracle("SELECT DISTINCT country FROM (" + facts + ")")->num_rows());
}

TEST_F(BatchOracleTest, LayoutIsReadableThroughThePointerFileAndKeepsThePreviousVersion) {
  Pipeline p = MakePipeline();
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  EXPECT_EQ(CurrentVersion("by_country"), "v-000001");
  WriteFile("orders/2024-01-03.csv", "order_id,customer_id,amount,status\n16,2,7.00,placed\n");
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  EXPECT_EQ(CurrentVersion("by_country"), "v-000002");
  // The previous version stays (readers that started before the commit).
  EXPECT_TRUE(std::filesystem::exists(root() + "/by_country/v-000001/_manifest.json"));
  WriteFile("orders/2024-01-04.csv", "order_id,customer_id,amount,status\n17,3,1.00,placed\n");
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  EXPECT_EQ(CurrentVersion("by_country"), "v-000003");
  EXPECT_FALSE(std::filesystem::exists(root() + "/by_country/v-000001"));
  EXPECT_TRUE(std::filesystem::exists(root() + "/by_country/v-000002"));
  // The pointer file names the same version the symlink points at.
  EXPECT_EQ(std::filesystem::read_symlink(root() + "/by_country/current").string(), "v-000003");
  auto via_pointer = Oracle("SELECT * FROM read_parquet('" + root() + "/by_country/" +
                            CurrentVersion("by_country") + "/*.parquet')");
  EXPECT_TRUE(engine::testing::TablesEqualUnordered(*via_pointer, *ReadDataset("by_country")));
}

TEST_F(BatchOracleTest, SinksWriteCsvJsonAndParquetFiles) {
  Pipeline p = MakePipeline();
  Dataset csv = Dataset::Sink("csv_out");
  csv.storage = {FileFormat::kCsv, Path("out/by_country.csv"), WriteMode::kOverwrite, {}, {}, {}};
  p.Add(csv);
  p.Add(Flow("csv_out", "csv_out", "SELECT * FROM by_country"));
  Dataset json = Dataset::Sink("json_out");
  json.storage = {FileFormat::kJson, Path("out/json"), WriteMode::kAppend, {}, {}, {}};
  p.Add(json);
  p.Add(Flow("json_out", "json_out", "SELECT country, orders FROM by_country"));
  Dataset pq = Dataset::Sink("pq_out");
  pq.storage = {FileFormat::kParquet, Path("out/facts.parquet"), WriteMode::kOverwrite, {}, {}, {}};
  p.Add(pq);
  p.Add(Flow("pq_out", "pq_out", "SELECT * FROM order_facts"));
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  auto expected = Oracle("SELECT * FROM read_parquet('" + root() + "/by_country/current/*.parquet')");
  auto csv_rows = Oracle("SELECT * FROM read_csv('" + Path("out/by_country.csv") + "')");
  EXPECT_TRUE(engine::testing::TablesEqualUnordered(*expected, *csv_rows, false));
  auto json_rows = Oracle("SELECT * FROM read_json('" + Path("out/json/*.json") + "')");
  auto expected_json = Oracle("SELECT country, orders FROM read_parquet('" + root() +
                              "/by_country/current/*.parquet')");
  EXPECT_TRUE(engine::testing::TablesEqualUnordered(*expected_json, *json_rows, false));
  EXPECT_DATASET_MATCHES("order_facts", "SELECT * FROM read_parquet('" + Path("out/facts.parquet") + "')");

  // A changed input: the append sink gains a second file, the overwrite sink is replaced.
  WriteFile("orders/2024-01-05.csv", "order_id,customer_id,amount,status\n18,4,2.00,placed\n");
  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);
  int json_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(Path("out/json"))) {
    json_files += e.path().extension() == ".json";
  }
  EXPECT_EQ(json_files, 2);
  auto csv_again = Oracle("SELECT * FROM read_csv('" + Path("out/by_country.csv") + "')");
  auto expected_again =
      Oracle("SELECT * FROM read_parquet('" + root() + "/by_country/current/*.parquet')");
  EXPECT_TRUE(engine::testing::TablesEqualUnordered(*expected_again, *csv_again, false));
}

}  // namespace
}  // namespace thund::native::testing
