// SDP projects (spark-pipeline.yml + library globs) and LoadPipeline's
// dispatch over every kind of PATH.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "thund/load.h"
#include "thund/pipeline_file.h"
#include "thund/sql_pipeline.h"

namespace thund {
namespace {

namespace fs = std::filesystem;

class ProjectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("thund_sql_project_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& rel, const std::string& text) {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  std::string Path(const std::string& rel = "") const { return (root_ / rel).string(); }

  fs::path root_;
};

std::string Codes(const Diagnostics& ds) {
  std::string out;
  for (const auto& d : ds) out += d.ToString() + "\n";
  return out;
}

TEST_F(ProjectTest, SpecFieldsAndLibrariesBecomeOnePipeline) {
  Write("spark-pipeline.yml",
        "name: shop\nstorage: ./st\ncatalog: main\nschema: sales\n"
        "configuration:\n  a.b: x\n  n: 4\n"
        "libraries:\n  - glob:\n      include: defs/**\n  - glob:\n      include: extra.sql\n");
  Write("defs/b.sql", "CREATE MATERIALIZED VIEW b AS SELECT * FROM a;");
  Write("defs/sub/a.sql", "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;\nSET from.file = y;");
  Write("extra.sql", "USE SCHEMA other;\nCREATE MATERIALIZED VIEW c AS SELECT 2 AS x;");
  Write("unlisted.sql", "this is not even SQL");
  ParseResult r = LoadSdpProject(Path("spark-pipeline.yml"));
  ASSERT_TRUE(r.ok()) << Codes(r.diagnostics);
  EXPECT_TRUE(r.diagnostics.empty()) << Codes(r.diagnostics);
  const Pipeline& p = r.pipeline;
  EXPECT_EQ(p.name, "shop");
  EXPECT_EQ(p.storage, "./st");
  EXPECT_EQ(p.catalog, "main");
  EXPECT_EQ(p.database, "sales");  // `schema` is an alias of `database`
  EXPECT_EQ(p.configuration, (StringMap{{"a.b", "x"}, {"n", "4"}, {"from.file", "y"}}));
  // Files in sorted path order per library: defs/b.sql, defs/sub/a.sql, extra.sql.
  ASSERT_EQ(p.datasets.size(), 3u);
  EXPECT_EQ(p.datasets[0].name, "b");
  EXPECT_EQ(p.datasets[1].name, "a");
  EXPECT_EQ(p.datasets[2].name, "other.c");  // USE SCHEMA inside a library qualifies
  EXPECT_EQ(p.datasets[0].location.file, Path("defs/b.sql"));
}

TEST_F(ProjectTest, FoundInParentDirectories) {
  Write("spark-pipeline.yaml",
        "name: up\nstorage: s\nlibraries:\n  - glob:\n      include: x/**\n");
  Write("x/y/z/q.sql", "CREATE MATERIALIZED VIEW q AS SELECT 1 AS a;");
  EXPECT_EQ(fs::path(FindSdpSpec(Path("x/y/z"))), fs::path(Path("spark-pipeline.yaml")));
  ParseResult r = LoadPipeline(Path("x/y/z"));
  ASSERT_TRUE(r.ok()) << Codes(r.diagnostics);
  EXPECT_EQ(r.pipeline.name, "up");
  ASSERT_EQ(r.pipeline.datasets.size(), 1u);
}

TEST_F(ProjectTest, TwoSpecFilesInOneDirectoryIsAnError) {
  Write("spark-pipeline.yml", "name: a\nstorage: s\n");
  Write("spark-pipeline.yaml", "name: b\nstorage: s\n");
  Diagnostics problem;
  EXPECT_EQ(FindSdpSpec(Path(), &problem), "");
  ASSERT_EQ(problem.size(), 1u);
  EXPECT_NE(problem[0].message.find("both spark-pipeline.yml and spark-pipeline.yaml"),
            std::string::npos);
  EXPECT_FALSE(LoadPipeline(Path()).ok());
}

TEST_F(ProjectTest, PythonRefusalsAndOtherLibrariesAreNamed) {
  Write("spark-pipeline.yml", "name: m\nstorage: s\nlibraries:\n  - glob:\n      include: t/**\n");
  Write("t/a.sql", "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;");
  Write("t/b.py",
        "from pyspark import pipelines as dp\n\n@dp.materialized_view\ndef b():\n"
        "    return spark.read.table('a').toPandas()\n");
  Write("t/notes.txt", "notes\n");
  Write("t/__pycache__/b.cpython-311.pyc", "x");
  ParseResult r = LoadPipeline(Path("spark-pipeline.yml"));
  ASSERT_EQ(r.diagnostics.size(), 2u) << Codes(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].code, "sdp-library");
  EXPECT_EQ(r.diagnostics[1].code, "python-definition");
  EXPECT_EQ(r.diagnostics[1].location.file, Path("t/b.py"));
  EXPECT_EQ(r.diagnostics[1].location.line, 5);
  EXPECT_NE(r.diagnostics[1].message.find("DataFrame.toPandas()"), std::string::npos);
  EXPECT_EQ(r.pipeline.datasets.size(), 2u);  // the SQL and b (without its flow) still load
}

TEST_F(ProjectTest, GlobsSparkWouldRefuseWarnAndEmptyGlobsWarn) {
  Write("spark-pipeline.yml",
        "name: g\nstorage: s\nlibraries:\n  - glob:\n      include: t/**/*.sql\n"
        "  - glob:\n      include: nothing/**\n");
  Write("t/a.sql", "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;");
  Write("t/deep/b.sql", "CREATE MATERIALIZED VIEW b AS SELECT 1 AS x;");
  Write("t/c.txt", "not matched by *.sql");
  ParseResult r = LoadPipeline(Path());
  ASSERT_TRUE(r.ok()) << Codes(r.diagnostics);
  ASSERT_EQ(r.diagnostics.size(), 2u) << Codes(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].severity, Severity::kWarning);
  EXPECT_NE(r.diagnostics[0].message.find("works in thund but not on Spark"), std::string::npos);
  EXPECT_NE(r.diagnostics[1].message.find("matches no files"), std::string::npos);
  EXPECT_EQ(r.pipeline.datasets.size(), 2u);
}

TEST_F(ProjectTest, SpecErrors) {
  Write("spark-pipeline.yml", "name: [not, a, string]\nconfiguration: 5\nlibraries: nope\n");
  ParseResult r = LoadPipeline(Path());
  std::string all = Codes(r.diagnostics);
  EXPECT_NE(all.find("'name' must be a string"), std::string::npos) << all;
  EXPECT_NE(all.find("needs 'storage'"), std::string::npos) << all;
  EXPECT_NE(all.find("configuration must map names to strings"), std::string::npos) << all;
  EXPECT_NE(all.find("libraries must be a list"), std::string::npos) << all;
  Write("spark-pipeline.yml", "name: x\nstorage: s\n  bad: [indent\n");
  r = LoadPipeline(Path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.diagnostics[0].message.find("not valid YAML"), std::string::npos);
  EXPECT_GT(r.diagnostics[0].location.line, 0);
}

TEST_F(ProjectTest, LoadPipelineDispatchesOnThePath) {
  Write("single.sql", "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;");
  ParseResult sql = LoadPipeline(Path("single.sql"));
  ASSERT_TRUE(sql.ok());
  EXPECT_EQ(sql.pipeline.name, "single");  // no CREATE PIPELINE: the file's stem

  Pipeline p("from_file");
  p.AddQuery(Dataset::MaterializedView("m"), "SELECT 1 AS x");
  Write("pipe.yaml", FormatPipelineFile(p));
  ParseResult file = LoadPipeline(Path("pipe.yaml"));
  ASSERT_TRUE(file.ok()) << Codes(file.diagnostics);
  EXPECT_EQ(file.pipeline, p);

  Write("project.yml",
        "name: sniffed\nstorage: s\nlibraries:\n  - glob:\n      include: single.sql\n");
  ParseResult spec = LoadPipeline(Path("project.yml"));
  ASSERT_TRUE(spec.ok()) << Codes(spec.diagnostics);
  EXPECT_EQ(spec.pipeline.name, "sniffed");

  ParseResult missing = LoadPipeline(Path("nope.sql"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.diagnostics[0].message.find("does not exist"), std::string::npos);
  Write("notes.txt", "x");
  ParseResult other = LoadPipeline(Path("notes.txt"));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.diagnostics[0].hint.find(".sql file"), std::string::npos);
  ParseResult empty_dir = LoadPipeline(fs::temp_directory_path().string());
  EXPECT_FALSE(empty_dir.ok());
}

TEST(CorpusProjects, RetailLowersAsSpecified) {
  const fs::path dir = fs::path(THUND_SOURCE_DIR) / "tests/data/sdp/positive/projects/retail";
  ParseResult r = LoadPipeline(dir.string());
  ASSERT_TRUE(r.ok()) << Codes(r.diagnostics);
  const Pipeline& p = r.pipeline;
  EXPECT_EQ(p.name, "retail");
  EXPECT_EQ(p.catalog, "main");
  EXPECT_EQ(p.database, "retail");
  EXPECT_EQ(p.configuration.at("spark.sql.shuffle.partitions"), "8");
  EXPECT_EQ(p.datasets.size(), 7u);
  const Flow* cdc = p.FindFlow("silver_customers_cdc");
  ASSERT_NE(cdc, nullptr);
  ASSERT_TRUE(cdc->cdc);
  EXPECT_EQ(cdc->cdc->keys, (std::vector<std::string>{"customer_id"}));
  const Flow* live = p.FindFlow("gold_revenue_5m");
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(live->streaming);
  EXPECT_EQ(live->streaming->trigger, Trigger::ProcessingTime(30000));
  EXPECT_EQ(live->streaming->mode, StreamingMode::kIncremental);
  EXPECT_EQ(live->streaming->window, WindowSpec::Tumbling("ordered_at", 300000));
  EXPECT_EQ(live->streaming->watermark, (Watermark{"ordered_at", 120000, std::nullopt}));
  const Flow* bronze = p.FindFlow("bronze_orders");
  ASSERT_NE(bronze, nullptr);
  EXPECT_EQ(bronze->source,
            SourceSpec{(FileSource{"landing/orders/", FileFormat::kJson, true, {}})});
}

TEST(CheckSqlFunctions, NamesEachUnknownFunctionAndItsFlow) {
  Pipeline p("p");
  p.AddQuery(Dataset::MaterializedView("a"), "SELECT initcap(x), soundex(y), upper(z) FROM t");
  Dataset d = Dataset::MaterializedView("b");
  d.expectations.push_back({"e", "bogus_fn(x) > 0", ExpectationAction::kWarn, {}});
  p.AddQuery(d, "SELECT nvl(x, 1) AS x FROM t");
  Diagnostics ds = CheckSqlFunctions(p);
  ASSERT_EQ(ds.size(), 3u) << Codes(ds);
  EXPECT_EQ(ds[0].flow, "a");
  EXPECT_NE(ds[0].message.find("'initcap'"), std::string::npos);
  EXPECT_NE(ds[1].message.find("'soundex'"), std::string::npos);
  EXPECT_EQ(ds[2].dataset, "b");
  EXPECT_NE(ds[2].message.find("'bogus_fn'"), std::string::npos);
  EXPECT_EQ(ds[0].code, "unknown-function");
}

}  // namespace
}  // namespace thund
