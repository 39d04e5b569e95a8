// keyed_write's null_keys / key_match and the fast-path switches (settle,
// passthrough, join, direct_io, key_index, memory_pool, huge_pages, plain)
// through every surface: the pipeline
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

// ---------------------------------------------- fast-path switches (issue 21)

// Every switch away from its default, as a pipeline file and as SQL.
KeyedWrite AllSwitchesOff() {
  KeyedWrite kw;
  kw.keys = {"id"};
  KeyedWriteTuning& t = kw.tuning;
  t.settle = t.passthrough = t.join = t.direct_io = false;
  t.key_index = KeyIndex::kTable;
  t.memory_pool = t.huge_pages = false;
  t.plain = true;
  return kw;
}

TEST(KeyedSwitchesTest, PipelineFileParsesEverySwitchAndRoundTripsExactly) {
  const std::string text =
      "name: k\n"
      "datasets:\n"
      "  - name: out\n"
      "    kind: table\n"
      "    keyed_write:\n"
      "      keys: [id]\n"
      "      settle: false\n"
      "      passthrough: false\n"
      "      join: false\n"
      "      direct_io: false\n"
      "      key_index: table\n"
      "      memory_pool: false\n"
      "      huge_pages: false\n"
      "      plain: true\n"
      "    query: SELECT 1 AS id\n";
  ParseResult r = ParsePipelineFile(text, "k.yaml");
  ASSERT_TRUE(r.ok());
  const KeyedWrite& kw = r.pipeline.datasets[0].keyed_write;
  EXPECT_EQ(kw, AllSwitchesOff());
  EXPECT_EQ(kw.ToString(),
            "keyed_write{keys=[id], settle=false, passthrough=false, join=false, "
            "direct_io=false, key_index=table, memory_pool=false, huge_pages=false, plain=true}");
  // fmt writes every switch back, and reading that gives the same IR; a
  // second fmt gives the same text (a fixed point).
  const std::string out = FormatPipelineFile(r.pipeline);
  for (const char* line : {"settle: false", "passthrough: false", "join: false",
                           "direct_io: false", "key_index: table", "memory_pool: false",
                           "huge_pages: false", "plain: true"}) {
    EXPECT_THAT(out, HasSubstr(line));
  }
  ParseResult again = ParsePipelineFile(out, "again.yaml");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.pipeline.datasets[0].keyed_write, kw);
  EXPECT_EQ(FormatPipelineFile(again.pipeline), out);
  // One switch alone stays alone; the defaults stay unwritten.
  KeyedWrite one;
  one.keys = {"id"};
  one.tuning.join = false;
  const std::string one_text = FormatPipelineFile(OneDataset(DatasetKind::kTable, one));
  EXPECT_THAT(one_text, HasSubstr("join: false"));
  for (const char* other : {"settle", "passthrough", "direct_io", "key_index", "memory_pool",
                            "huge_pages", "plain"}) {
    EXPECT_THAT(one_text, ::testing::Not(HasSubstr(other)));
  }
  ParseResult one_back = ParsePipelineFile(one_text, "one.yaml");
  ASSERT_TRUE(one_back.ok());
  EXPECT_EQ(one_back.pipeline.datasets[0].keyed_write, one);
  // JSON is read by the same reader.
  ParseResult json = ParsePipelineFile(
      R"({"name": "k", "datasets": [{"name": "out", "kind": "table", "query": "SELECT 1 AS id",
          "keyed_write": {"keys": ["id"], "key_index": "table", "huge_pages": false}}]})",
      "k.json");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json.pipeline.datasets[0].keyed_write.tuning.key_index, KeyIndex::kTable);
  EXPECT_FALSE(json.pipeline.datasets[0].keyed_write.tuning.huge_pages);
  EXPECT_TRUE(json.pipeline.datasets[0].keyed_write.tuning.memory_pool);
}

TEST(KeyedSwitchesTest, SqlOptionsParseEverySwitchAndRoundTripExactly) {
  ParseResult r = ParseSql(
      "CREATE TABLE out WITH (keyed_write.keys = (id), keyed_write.settle = false,\n"
      "  keyed_write.passthrough = false, keyed_write.join = FALSE, keyed_write.direct_io = "
      "false,\n"
      "  keyed_write.key_index = 'table', keyed_write.memory_pool = false,\n"
      "  keyed_write.huge_pages = false, keyed_write.plain = true) AS SELECT 1 AS id;",
      "k.sql");
  ASSERT_TRUE(r.ok());
  const KeyedWrite& kw = r.pipeline.datasets[0].keyed_write;
  EXPECT_EQ(kw, AllSwitchesOff());
  const std::string sql = FormatSql(r.pipeline);
  for (const char* option :
       {"keyed_write.settle = false", "keyed_write.passthrough = false",
        "keyed_write.join = false", "keyed_write.direct_io = false",
        "keyed_write.key_index = 'table'", "keyed_write.memory_pool = false",
        "keyed_write.huge_pages = false", "keyed_write.plain = true"}) {
    EXPECT_THAT(sql, HasSubstr(option));
  }
  ParseResult again = ParseSql(sql, "again.sql");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.pipeline.datasets[0].keyed_write, kw);
  EXPECT_EQ(FormatSql(again.pipeline), sql);
  // SQL -> pipeline file -> SQL keeps them too.
  ParseResult via_yaml = ParsePipelineFile(FormatPipelineFile(r.pipeline), "via.yaml");
  ASSERT_TRUE(via_yaml.ok());
  EXPECT_EQ(via_yaml.pipeline.datasets[0].keyed_write, kw);
  EXPECT_EQ(FormatSql(via_yaml.pipeline), sql);
  // Defaults are not written.
  ParseResult defaults = ParseSql(
      "CREATE TABLE out WITH (keyed_write.keys = (id), keyed_write.plain = false) AS "
      "SELECT 1 AS id;",
      "d.sql");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults.pipeline.datasets[0].keyed_write.tuning, KeyedWriteTuning{});
  EXPECT_THAT(FormatSql(defaults.pipeline), ::testing::Not(HasSubstr("plain")));
}

// The first error diagnostic of `r`, rendered, with its line.
std::pair<std::string, int> FirstError(const ParseResult& r) {
  for (const auto& d : r.diagnostics) {
    if (d.severity == Severity::kError) {
      return {d.ToString() + " [at " + d.field_path + "]", d.location.line};
    }
  }
  return {"", 0};
}

TEST(KeyedSwitchesTest, BadSwitchValuesAreLocatedErrors) {
  // Pipeline file: an unknown key_index, a switch that is not a boolean, and
  // an unknown switch name (with a suggestion).
  auto yaml = [](const std::string& line) {
    return ParsePipelineFile("name: k\n"
                             "datasets:\n"
                             "  - name: out\n"
                             "    kind: table\n"
                             "    keyed_write:\n"
                             "      keys: [id]\n" +
                                 line +
                                 "\n"
                                 "    query: SELECT 1 AS id\n",
                             "k.yaml");
  };
  // SQL: the same three kinds of mistakes, located at the option.
  auto sql = [](const std::string& option) {
    return ParseSql("CREATE TABLE out\n  WITH (keyed_write.keys = (id),\n  " + option +
                        ") AS SELECT 1 AS id;",
                    "k.sql");
  };
  struct Case {
    ParseResult parsed;
    std::vector<std::string> says;
    int line;
  };
  const Case cases[] = {
      {yaml("      key_index: btree"), {"keyed_write key_index 'btree' is not supported", "use rows"}, 7},
      {yaml("      join: sometimes"), {"join"}, 7},
      {yaml("      plain: [true]"), {"plain"}, 7},
      {yaml("      direct_ios: false"), {"direct_ios", "direct_io"}, 7},
      {sql("keyed_write.key_index = 'btree'"), {"keyed_write key_index 'btree' is not supported"}, 3},
      {sql("keyed_write.settle = 'maybe'"), {"option 'keyed_write.settle' is true or false, not 'maybe'"}, 3},
      {sql("keyed_write.plain = (true, false)"), {"takes a single value"}, 3},
      {sql("keyed_write.plane = true"), {"unknown option 'keyed_write.plane'", "keyed_write.plain"}, 3},
  };
  for (const Case& c : cases) {
    auto [text, line] = FirstError(c.parsed);
    SCOPED_TRACE(text);
    for (const std::string& part : c.says) EXPECT_THAT(text, HasSubstr(part));
    EXPECT_EQ(line, c.line);
  }
}

TEST(KeyedSwitchesTest, CheckRefusesSwitchesWithoutKeys) {
  KeyedWrite no_keys;
  no_keys.tuning.plain = true;
  EXPECT_THAT(Errors(OneDataset(DatasetKind::kTable, no_keys), "keys"),
              ::testing::Contains(HasSubstr("keys are empty")));
  KeyedWrite table_only;
  table_only.tuning.key_index = KeyIndex::kTable;
  EXPECT_THAT(Errors(OneDataset(DatasetKind::kSink, table_only), "keys"),
              ::testing::Contains(HasSubstr("keys are empty")));
  KeyedWrite with_keys = AllSwitchesOff();
  EXPECT_TRUE(Errors(OneDataset(DatasetKind::kTable, with_keys), "").empty());
}

TEST(KeyedSwitchesTest, FromIrCarriesEachSwitchAndPlainTurnsAllOff) {
  using engine::keyed::FileSwitchesFromIr;
  using engine::keyed::KeyedWriteOptions;
  KeyedWrite kw;
  kw.keys = {"id"};
  auto on = KeyedWriteOptions::FromIr(kw, "table 'out'");
  ASSERT_TRUE(on.ok());
  EXPECT_EQ(on->key_index, KeyIndex::kRows);
  EXPECT_TRUE(on->memory_pool);
  EXPECT_TRUE(on->huge_pages);
  auto files = FileSwitchesFromIr(kw.tuning);
  EXPECT_TRUE(files.settle && files.passthrough && files.join && files.direct_io);

  // One at a time: only that one changes.
  KeyedWrite table = kw;
  table.tuning.key_index = KeyIndex::kTable;
  auto t = KeyedWriteOptions::FromIr(table, "table 'out'");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->key_index, KeyIndex::kTable);
  EXPECT_TRUE(t->memory_pool && t->huge_pages);
  KeyedWrite pool = kw;
  pool.tuning.memory_pool = false;
  auto m = KeyedWriteOptions::FromIr(pool, "table 'out'");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->memory_pool);
  EXPECT_TRUE(m->huge_pages);
  EXPECT_EQ(m->key_index, KeyIndex::kRows);
  KeyedWrite pages = kw;
  pages.tuning.huge_pages = false;
  EXPECT_FALSE(KeyedWriteOptions::FromIr(pages, "t")->huge_pages);
  KeyedWrite no_join = kw;
  no_join.tuning.join = false;
  files = FileSwitchesFromIr(no_join.tuning);
  EXPECT_FALSE(files.join);
  EXPECT_TRUE(files.settle && files.passthrough && files.direct_io);
  KeyedWrite no_direct = kw;
  no_direct.tuning.direct_io = false;
  EXPECT_FALSE(FileSwitchesFromIr(no_direct.tuning).direct_io);
  KeyedWrite no_settle = kw;
  no_settle.tuning.settle = false;
  EXPECT_FALSE(FileSwitchesFromIr(no_settle.tuning).settle);
  KeyedWrite no_pass = kw;
  no_pass.tuning.passthrough = false;
  EXPECT_FALSE(FileSwitchesFromIr(no_pass.tuning).passthrough);

  // plain wins over switches left on.
  KeyedWrite plain = kw;
  plain.tuning.plain = true;
  auto p = KeyedWriteOptions::FromIr(plain, "table 'out'");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->key_index, KeyIndex::kTable);
  EXPECT_FALSE(p->memory_pool);
  EXPECT_FALSE(p->huge_pages);
  files = FileSwitchesFromIr(plain.tuning);
  EXPECT_FALSE(files.settle || files.passthrough || files.join || files.direct_io);
}

}  // namespace
}  // namespace thund
