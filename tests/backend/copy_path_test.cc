// A stored dataset's flow written by DuckDB's COPY (the fast path) and the
// same flow streamed through Arrow into thund's Parquet writer (the path a
// run takes when expectations, a declared schema or the fault-injection seam
// must see the rows) store the same rows with the same types.
#include <arrow/filesystem/localfs.h>
#include <arrow/scalar.h>

#include "batch_fixture.h"
#include "engine/fs/fault_injection_fs.h"

namespace thund::native::testing {
namespace {

class CopyPathTest : public BatchFixture {
 protected:
  // Which writer wrote a dataset's files ("DuckDB ..." or "parquet-cpp-arrow ...").
  std::string Writer(const std::string& dataset) const {
    auto t = Oracle("SELECT DISTINCT created_by FROM parquet_file_metadata('" + root() + "/" +
                    dataset + "/current/*.parquet')");
    if (!t || t->num_rows() != 1) return "?";
    return t->column(0)->GetScalar(0).ValueOrDie()->ToString();
  }
};

TEST_F(CopyPathTest, CopyAndArrowPathsStoreTheSameRowsAndTypes) {
  WriteFile("in.csv",
            "id,name,amount,ts,flag\n1,Ada,12.50,2024-01-01 10:00:00,true\n"
            "2,Bob,,2024-01-02 11:30:00,false\n3,\"Cy, Jr\",99.90,,true\n");
  Pipeline p("copy");
  p.AddQuery(Dataset::MaterializedView("typed"),
             "SELECT id, name, amount, ts, flag, amount * 2 AS doubled, [id, id + 1] AS ids, "
             "{'n': name, 'i': id} AS rec, CAST(amount AS DECIMAL(10, 2)) AS money, "
             "DATE '2024-01-01' + CAST(id AS INTEGER) AS day FROM read_csv('" + Path("in.csv") +
             "', header = true)");
  p.AddQuery(Dataset::MaterializedView("agg"),
             "SELECT flag, count(*) AS n, sum(amount) AS total FROM typed GROUP BY flag");

  ASSERT_EQ(Run(p).status, RunPhase::kCompleted);  // local filesystem: COPY
  auto copy_typed = ReadDataset("typed"), copy_agg = ReadDataset("agg");
  ASSERT_TRUE(copy_typed && copy_agg);
  EXPECT_EQ(Writer("typed").rfind("DuckDB", 0), 0u) << Writer("typed");

  std::filesystem::remove_all(root());
  RunOptions arrow_path;  // a filesystem that is not the local one: the Arrow path
  arrow_path.native.filesystem = std::make_shared<engine::FaultInjectingFileSystem>(
      std::make_shared<arrow::fs::LocalFileSystem>());
  ASSERT_EQ(Run(p, arrow_path).status, RunPhase::kCompleted);
  auto arrow_typed = ReadDataset("typed"), arrow_agg = ReadDataset("agg");
  ASSERT_TRUE(arrow_typed && arrow_agg);
  EXPECT_EQ(Writer("typed").rfind("parquet-cpp-arrow", 0), 0u) << Writer("typed");

  EXPECT_TRUE(engine::testing::TablesEqualUnordered(*arrow_typed, *copy_typed));
  EXPECT_TRUE(engine::testing::TablesEqualUnordered(*arrow_agg, *copy_agg));
  EXPECT_DATASET_MATCHES("agg", "SELECT CAST(flag AS BOOLEAN) AS flag, count(*) AS n, "
                                "sum(amount) AS total FROM read_csv('" + Path("in.csv") +
                                    "', header = true) GROUP BY flag");
}

}  // namespace
}  // namespace thund::native::testing
