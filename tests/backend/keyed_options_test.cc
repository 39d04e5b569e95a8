// keyed_write's null_keys / key_match through every surface: the pipeline
// file and SQL (parse + write, round trip), validation errors, and the mapping
// onto the engine options (KeyedWriteOptions::FromIr).
#include <gmock/gmock.h>

#include "engine/keyed/keyed_options.h"
#include "thund/pipeline_file.h"
#include "thund/sql_pipeline.h"
#include "thund/validate.h"

namespace thund {
namespace {

using ::testing::HasSubstr;

Pipeline OneDataset(DatasetKind kind, KeyedWrite kw, StorageSpec storage = {}) {
  Pipeline p;
  p.name = "k";
  Dataset d("out", kind);
  d.keyed_write = std::move(kw);
  d.storage = std::move(storage);
  p.datasets.push_back(d);
  Flow f;
  f.name = "out";
  f.target = "out";
  f.sql = "SELECT 1 AS id";
  p.flows.push_back(f);
  return p;
}

// Errors of Validate on field keyed_write.<field>.
std::vector<std::string> Errors(const Pipeline& p, const std::string& field) {
  std::vector<std::string> out;
  for (const auto& d : Validate(p)) {
    if (d.severity == Severity::kError && d.field_path.find("keyed_write." + field) !=
                                              std::string::npos) {
      out.push_back(d.message + " (" + d.hint + ")");
    }
  }
  return out;
}

// The same, for the diagnostics of reading a pipeline file whose one dataset
// has `keyed_write: {<keyed_write>}` (bad enum values are reported there now).
std::vector<std::string> FileErrors(const std::string& keyed_write, const std::string& field) {
  ParseResult r = ParsePipelineFile(
      "name: k\n"
      "datasets:\n"
      "  - name: out\n"
      "    kind: table\n"
      "    keyed_write: {" + keyed_write + "}\n"
      "    query: SELECT 1 AS id\n",
      "k.yaml");
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) {
    if (d.severity == Severity::kError && d.field_path.find("keyed_write." + field) !=
                                              std::string::npos) {
      out.push_back(d.message + " (" + d.hint + ")");
    }
  }
  return out;
}

TEST(KeyedOptionsTest, PipelineFileParsesWritesAndRoundTripsTheNewFields) {
  ParseResult r = ParsePipelineFile(
      "name: k\n"
      "datasets:\n"
      "  - name: out\n"
      "    kind: table\n"
      "    keyed_write: {keys: [a, b], null_keys: drop, key_match: hash}\n"
      "    query: SELECT 1 AS a, 2 AS b\n",
      "k.yaml");
  ASSERT_TRUE(r.ok());
  const KeyedWrite& kw = r.pipeline.datasets[0].keyed_write;
  EXPECT_EQ(kw.null_keys, NullKeys::kDrop);
  EXPECT_EQ(kw.key_match, KeyMatch::kHash);
  const std::string text = FormatPipelineFile(r.pipeline);
  EXPECT_THAT(text, HasSubstr("null_keys: drop"));
  EXPECT_THAT(text, HasSubstr("key_match: hash"));
  ParseResult again = ParsePipelineFile(text, "again.yaml");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.pipeline.datasets[0].keyed_write, kw);
  // Defaults stay unwritten.
  KeyedWrite plain;
  plain.keys = {"id"};
  EXPECT_THAT(FormatPipelineFile(OneDataset(DatasetKind::kTable, plain)),
              ::testing::Not(HasSubstr("null_keys")));
}

TEST(KeyedOptionsTest, SqlTablePropertiesParseFormatAndRoundTrip) {
  ParseResult r = ParseSql(
      "CREATE TABLE out WITH (keyed_write.keys = (a), keyed_write.null_keys = 'drop', "
      "keyed_write.key_match = 'hash') AS SELECT 1 AS a;",
      "k.sql");
  ASSERT_TRUE(r.ok());
  const KeyedWrite& kw = r.pipeline.datasets[0].keyed_write;
  EXPECT_EQ(kw.keys, std::vector<std::string>{"a"});
  EXPECT_EQ(kw.null_keys, NullKeys::kDrop);
  EXPECT_EQ(kw.key_match, KeyMatch::kHash);
  const std::string sql = FormatSql(r.pipeline);
  EXPECT_THAT(sql, HasSubstr("keyed_write.null_keys = 'drop'"));
  EXPECT_THAT(sql, HasSubstr("keyed_write.key_match = 'hash'"));
  ParseResult again = ParseSql(sql, "again.sql");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.pipeline.datasets[0].keyed_write, kw);
}

TEST(KeyedOptionsTest, ValidationNamesTheFieldAndTheChoices) {
  const std::string p = "keys: [id], null_keys: skip, key_match: fuzzy";
  ASSERT_EQ(FileErrors(p, "null_keys").size(), 1u);
  EXPECT_THAT(FileErrors(p, "null_keys")[0], HasSubstr("'skip' is not supported"));
  EXPECT_THAT(FileErrors(p, "null_keys")[0], HasSubstr("error"));
  ASSERT_EQ(FileErrors(p, "key_match").size(), 1u);
  EXPECT_THAT(FileErrors(p, "key_match")[0], HasSubstr("use exact"));

  KeyedWrite good;
  good.keys = {"id"};
  good.null_keys = NullKeys::kDrop;
  good.key_match = KeyMatch::kHash;
  EXPECT_TRUE(Errors(OneDataset(DatasetKind::kTable, good), "").empty());

  KeyedWrite twice;
  twice.keys = {"id", "id"};
  EXPECT_THAT(Errors(OneDataset(DatasetKind::kTable, twice), "keys"),
              ::testing::Contains(HasSubstr("listed twice")));

  KeyedWrite no_keys;
  no_keys.null_keys = NullKeys::kDrop;
  EXPECT_THAT(Errors(OneDataset(DatasetKind::kTable, no_keys), "keys"),
              ::testing::Contains(HasSubstr("keys are empty")));
}

TEST(KeyedOptionsTest, SinksMustBeAppendDirectories) {
  KeyedWrite kw;
  kw.keys = {"id"};
  StorageSpec overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  EXPECT_THAT(Errors(OneDataset(DatasetKind::kSink, kw, overwrite), "keys"),
              ::testing::Contains(HasSubstr("mode overwrite")));
  StorageSpec one_file;
  one_file.location = "out/result.parquet";
  EXPECT_THAT(Errors(OneDataset(DatasetKind::kSink, kw, one_file), "keys"),
              ::testing::Contains(HasSubstr("is one file")));
  StorageSpec dir;
  dir.location = "out/results/";
  EXPECT_TRUE(Errors(OneDataset(DatasetKind::kSink, kw, dir), "").empty());
}

TEST(KeyedOptionsTest, FromIrMapsEveryFieldAndKeepsDefaults) {
  KeyedWrite kw;
  kw.keys = {"a", "b"};
  kw.tuning.buckets = 8;
  kw.duplicates = DuplicateKeys::kAll;
  kw.null_keys = NullKeys::kDrop;
  kw.key_match = KeyMatch::kHash;
  auto o = engine::keyed::KeyedWriteOptions::FromIr(kw, "table 'out'");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->keys, kw.keys);
  EXPECT_EQ(o->buckets, 8);
  EXPECT_FALSE(o->threads.has_value());
  EXPECT_EQ(o->duplicates, engine::keyed::Duplicates::kAll);
  EXPECT_EQ(o->null_keys, engine::keyed::NullKeys::kDrop);
  EXPECT_EQ(o->match, engine::keyed::KeyMatch::kHash);

  KeyedWrite plain;
  plain.keys = {"a"};
  auto d = engine::keyed::KeyedWriteOptions::FromIr(plain, "table 'out'");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->null_keys, engine::keyed::NullKeys::kError);
  EXPECT_EQ(d->match, engine::keyed::KeyMatch::kExact);
}

}  // namespace
}  // namespace thund
