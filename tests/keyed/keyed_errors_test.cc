// Bad options and bad targets: each is refused with an error that says where
// and what to do, and nothing is written.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include <fstream>
#include <optional>

#include "keyed/keyed_test_util.h"

namespace thund::engine::keyed {
namespace {

using testing::Copy;
using testing::CopyRun;
using testing::Options;
using testing::Oracle;
using testing::ScratchDir;

// Writes a Parquet file of one string column `url` holding `keys` as they are
// (no UTF-8 check: Arrow writes what it is given), `row_group_rows` per row group.
arrow::Status WriteUrlKeys(const std::string& path,
                           const std::vector<std::optional<std::string>>& keys,
                           int64_t row_group_rows) {
  arrow::BinaryBuilder b;
  for (const auto& k : keys) ARROW_RETURN_NOT_OK(k ? b.Append(*k) : b.AppendNull());
  std::shared_ptr<arrow::Array> bytes;
  ARROW_RETURN_NOT_OK(b.Finish(&bytes));
  ARROW_ASSIGN_OR_RAISE(auto urls, bytes->View(arrow::utf8()));
  auto table = arrow::Table::Make(arrow::schema({arrow::field("url", arrow::utf8())}), {urls});
  ARROW_ASSIGN_OR_RAISE(auto out, arrow::io::FileOutputStream::Open(path));
  ARROW_RETURN_NOT_OK(
      parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, row_group_rows));
  return out->Close();
}

class KeyedErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = dir_ / "src.parquet";
    dst_ = dir_ / "dst";
    std::filesystem::create_directories(dst_);
    oracle_.Exec("COPY (SELECT i AS id, 'v' || i AS v, i / 2.0 AS score FROM range(50) t(i)) TO '" +
                 src_ + "' (FORMAT parquet)");
  }
  // Runs and expects an Invalid error containing every fragment; checks that no
  // data file appeared in the target.
  void ExpectError(const KeyedCopyOptions& o, std::vector<std::string> fragments) {
    const auto before = Files();
    CopyRun run = Copy(o);
    ASSERT_FALSE(run.result.ok());
    EXPECT_TRUE(run.result.status().IsInvalid()) << run.result.status().ToString();
    for (const auto& f : fragments) {
      EXPECT_NE(run.result.status().message().find(f), std::string::npos)
          << "missing '" << f << "' in: " << run.result.status().message();
    }
    EXPECT_EQ(Files(), before);
  }
  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    if (!std::filesystem::exists(dst_)) return out;
    for (const auto& e : std::filesystem::directory_iterator(dst_))
      out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  ScratchDir dir_;
  Oracle oracle_;
  std::string src_, dst_;
};

TEST_F(KeyedErrorsTest, EmptyKeyList) {
  ExpectError(Options(src_, dst_, {}), {"the key list is empty"});
}

TEST_F(KeyedErrorsTest, NonPositiveKnobs) {
  auto o = Options(src_, dst_, {"id"});
  o.keyed.buckets = 0;
  ExpectError(o, {"buckets must be > 0"});
  o = Options(src_, dst_, {"id"});
  o.keyed.threads = -2;
  ExpectError(o, {"threads must be > 0"});
  o = Options(src_, dst_, {"id"});
  o.keyed.batch_size = 0;
  ExpectError(o, {"batch_size must be > 0"});
}

TEST_F(KeyedErrorsTest, UnknownKeyColumn) {
  ExpectError(Options(src_, dst_, {"user_id"}),
              {"key column 'user_id' is not a column of the rows being written", "id, v, score"});
}

TEST_F(KeyedErrorsTest, NonKeyableColumn) {
  ExpectError(Options(src_, dst_, {"score"}),
              {"key column 'score' (double) cannot be a key", "cast the column to DECIMAL"});
}

TEST_F(KeyedErrorsTest, KeyColumnMissingFromATargetFile) {
  oracle_.Exec("COPY (SELECT 1 AS other) TO '" + dst_ + "/old.parquet' (FORMAT parquet)");
  ExpectError(Options(src_, dst_, {"id"}),
              {"old.parquet", "key column 'id' is missing", "every file of the target"});
}

TEST_F(KeyedErrorsTest, KeyColumnMissingFromACsvTargetFile) {
  std::ofstream(dst_ + "/old.csv") << "other\n1\n";
  ExpectError(Options(src_, dst_, {"id"}), {"old.csv", "column 'id' is missing"});
}

TEST_F(KeyedErrorsTest, TargetKeyValuesOfAnotherType) {
  oracle_.Exec("COPY (SELECT 'abc' AS id) TO '" + dst_ + "/old.parquet' (FORMAT parquet)");
  ExpectError(Options(src_, dst_, {"id"}),
              {"old.parquet", "key column 'id' has type string here but int64"});
}

TEST_F(KeyedErrorsTest, UnreadableTargetFile) {
  std::ofstream(dst_ + "/notes.txt") << "hello";
  ExpectError(Options(src_, dst_, {"id"}), {"notes.txt", "no known data extension"});
}

TEST_F(KeyedErrorsTest, TargetIsAFile) { ExpectError(Options(src_, src_, {"id"}), {"is a file"}); }

TEST_F(KeyedErrorsTest, MissingSource) {
  ExpectError(Options(dir_ / "nope/*.parquet", dst_, {"id"}), {"matches no data files"});
}

// A string key that is not valid UTF-8 (a Parquet writer need not check) is
// refused when the run would write it, whether its row group is all new or
// partly new. (Arrow writes such a file; DuckDB would refuse to.)
TEST_F(KeyedErrorsTest, StringKeyThatIsNotUtf8) {
  const std::string bad = dir_ / "bad.parquet";
  KEYED_ASSERT_OK(WriteUrlKeys(bad, {"ok1", "\xff\xfe", "ok3"}, 1024));
  const std::vector<std::string> fragments = {"bad.parquet", "row 2",
                                              "key column 'url' is a string column",
                                              "holds a value that is not valid UTF-8"};
  ExpectError(Options(bad, dst_, {"url"}), fragments);  // all new
  oracle_.Exec("COPY (SELECT 'ok1' AS url) TO '" + dst_ + "/old.parquet' (FORMAT parquet)");
  ExpectError(Options(bad, dst_, {"url"}), fragments);  // partly new
}

// Errors about one row name its row group and count rows within it: here the
// fourth row of the file is the second of row group 1.
TEST_F(KeyedErrorsTest, ARowInAnErrorIsCountedWithinItsRowGroup) {
  const std::string nulls = dir_ / "nulls.parquet", bad = dir_ / "bad.parquet";
  KEYED_ASSERT_OK(WriteUrlKeys(nulls, {"ok1", "ok2", "ok3", std::nullopt}, 2));
  KEYED_ASSERT_OK(WriteUrlKeys(bad, {"ok1", "ok2", "ok3", "\xff"}, 2));
  ExpectError(Options(nulls, dst_, {"url"}),
              {"nulls.parquet' row group 1 row 2: a key column (url) is NULL"});
  ExpectError(Options(bad, dst_, {"url"}),
              {"bad.parquet' row group 1 row 2: key column 'url'", "not valid UTF-8"});
}

TEST_F(KeyedErrorsTest, SeveralSourcesNeedATransform) {
  auto o = Options(src_, dst_, {"id"});
  o.sources.push_back(CopySource{"other", src_, std::nullopt});
  ExpectError(o, {"several sources need a transform"});
}

TEST_F(KeyedErrorsTest, BadTransformSql) {
  auto o = Options(src_, dst_, {"id"});
  o.transform_sql = "SELECT nope FROM src";
  ExpectError(o, {"transform:", "nope"});
}

}  // namespace
}  // namespace thund::engine::keyed
