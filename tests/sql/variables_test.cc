// ${key} in the SQL files of an SDP project: substituted from the spec's
// configuration as Spark does, with better errors than Spark's for a key the
// configuration lacks.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "thund/sql_pipeline.h"

namespace thund {
namespace {

namespace fs = std::filesystem;

class VariablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("thund_sql_variables_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "transformations");
  }
  void TearDown() override { fs::remove_all(root_); }

  // A project as `spark-pipelines init` lays it out, with `configuration`
  // (YAML lines, already indented) and one SQL file.
  ParseResult Load(const std::string& configuration, const std::string& sql) {
    std::ofstream(root_ / "spark-pipeline.yml")
        << "name: vars\nstorage: file://" << (root_ / "pipeline-storage").string() << "\n"
        << (configuration.empty() ? "" : "configuration:\n" + configuration)
        << "libraries:\n  - glob:\n      include: transformations/**\n";
    std::ofstream(root_ / "transformations" / "t.sql") << sql;
    return LoadSdpProject((root_ / "spark-pipeline.yml").string());
  }
  std::string SqlFile() const { return (root_ / "transformations" / "t.sql").string(); }

  fs::path root_;
};

std::string All(const Diagnostics& ds) {
  std::string out;
  for (const auto& d : ds) out += d.ToString() + "\n";
  return out;
}

TEST_F(VariablesTest, KeysAreSubstitutedEverywhereSparkDoes) {
  ParseResult r = Load(
      "  src: /data/in\n  min_amount: \"10\"\n  schema_name: sales\n  tag: \"${schema_name}-v1\"\n",
      "-- reads ${src}\n"
      "CREATE MATERIALIZED VIEW big_orders AS\n"
      "SELECT *, '${tag}' AS tag FROM csv.`${src}/orders.csv` WITH ('header' = 'true')\n"
      "WHERE amount > ${min_amount};\n"
      "CREATE MATERIALIZED VIEW ${schema_name}_total AS SELECT count(*) AS n FROM big_orders;\n");
  ASSERT_TRUE(r.ok()) << All(r.diagnostics);
  EXPECT_TRUE(r.diagnostics.empty()) << All(r.diagnostics);
  const Pipeline& p = r.pipeline;
  ASSERT_EQ(p.datasets.size(), 2u);
  EXPECT_EQ(p.datasets[1].name, "sales_total");  // in names too
  // The IR holds the SQL as it runs: values substituted (a value's own
  // ${...} too), everything else as written.
  EXPECT_EQ(p.flows[0].sql,
            "SELECT *, 'sales-v1' AS tag FROM csv.`/data/in/orders.csv` WITH ('header' = 'true')\n"
            "WHERE amount > 10");
  // The configuration stays in the pipeline.
  EXPECT_EQ(p.configuration.at("min_amount"), "10");
}

TEST_F(VariablesTest, PrefixedFormsReadTheConfiguration) {
  ParseResult r = Load("  k: \"3\"\n",
                       "CREATE MATERIALIZED VIEW a AS SELECT ${spark:k} + ${sparkconf:k} + "
                       "${hiveconf:k} + ${hivevar:k} AS x;\n");
  ASSERT_TRUE(r.ok()) << All(r.diagnostics);
  EXPECT_EQ(r.pipeline.flows[0].sql, "SELECT 3 + 3 + 3 + 3 AS x");
}

TEST_F(VariablesTest, AnUndefinedKeyIsAnErrorAtItsPosition) {
  ParseResult r = Load("  src: /data\n  env_name: dev\n",
                       "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;\n"
                       "CREATE MATERIALIZED VIEW b AS\n"
                       "SELECT * FROM a WHERE x > ${min_x};\n");
  ASSERT_FALSE(r.ok());
  const Diagnostic* d = nullptr;
  for (const auto& x : r.diagnostics) {
    if (x.code == "sql-variable") d = &x;
  }
  ASSERT_NE(d, nullptr) << All(r.diagnostics);
  EXPECT_EQ(d->severity, Severity::kError);
  EXPECT_EQ(d->location.file, SqlFile());
  EXPECT_EQ(d->location.line, 3);
  EXPECT_EQ(d->location.column, 27);
  EXPECT_NE(d->message.find("${min_x} is not defined"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("defines env_name, src"), std::string::npos) << d->message;
  EXPECT_NE(d->hint.find("configuration"), std::string::npos) << d->hint;
}

TEST_F(VariablesTest, WithoutConfigurationTheErrorSaysSo) {
  ParseResult r = Load("", "CREATE MATERIALIZED VIEW a AS SELECT ${x} AS x;\n");
  ASSERT_FALSE(r.ok());
  const std::string all = All(r.diagnostics);
  EXPECT_NE(all.find("${x} is not defined: the spec's configuration defines no keys"),
            std::string::npos)
      << all;
}

TEST_F(VariablesTest, UndefinedInStringsWarnsAndInCommentsIsLeftAlone) {
  ParseResult r = Load("  k: v\n",
                       "/* ${undefined_in_comment} */\n"
                       "CREATE MATERIALIZED VIEW a AS SELECT '${not_a_key}' AS s "
                       "-- ${nor_this}\n;\n");
  ASSERT_TRUE(r.ok()) << All(r.diagnostics);
  ASSERT_EQ(r.diagnostics.size(), 1u) << All(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].severity, Severity::kWarning);
  EXPECT_EQ(r.diagnostics[0].location.line, 2);
  EXPECT_EQ(r.diagnostics[0].location.column, 39);
  EXPECT_NE(r.diagnostics[0].message.find("${not_a_key}"), std::string::npos);
  EXPECT_EQ(r.pipeline.flows[0].sql, "SELECT '${not_a_key}' AS s");
}

TEST_F(VariablesTest, CyclesAndEnvironmentReferencesAreErrors) {
  ParseResult r = Load("  a: \"${b}\"\n  b: \"${a}\"\n",
                       "CREATE MATERIALIZED VIEW v AS SELECT ${a} AS x, '${env:HOME}' AS h;\n");
  ASSERT_FALSE(r.ok());
  const std::string all = All(r.diagnostics);
  EXPECT_NE(all.find("refers to itself"), std::string::npos) << all;
  EXPECT_NE(all.find("${env:HOME}: thund does not substitute environment"), std::string::npos)
      << all;
}

TEST_F(VariablesTest, LaterErrorsPointIntoTheFileAsWritten) {
  // The value is longer than its reference: a syntax error after it on the
  // same line still points at the right column of the file.
  ParseResult r = Load("  table_name: a_rather_long_table_name\n",
                       "CREATE MATERIALIZED VIEW v AS SELECT * FROM ${table_name};\n"
                       "CREATE MATERIALIZED VIEW w AS SELECT * FROM ${table_name} WATERMARK;\n");
  ASSERT_FALSE(r.ok());
  ASSERT_FALSE(r.diagnostics.empty());
  const Diagnostic& d = r.diagnostics[0];
  EXPECT_EQ(d.location.line, 2) << All(r.diagnostics);
  EXPECT_EQ(d.location.column, 59) << All(r.diagnostics);  // WATERMARK in the file
  // Datasets point at their names in the file as written.
  EXPECT_EQ(r.pipeline.datasets[0].location.line, 1);
  EXPECT_EQ(r.pipeline.datasets[0].location.column, 26);
}

}  // namespace
}  // namespace thund
