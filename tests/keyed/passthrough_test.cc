// Whole-file pass-through (unit_writer.h): a source Parquet file whose rows are
// all new is committed unchanged; any file with an old row, a repeated key, or
// a transform in the way is written row by row. Results checked against DuckDB.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "keyed/keyed_test_util.h"

namespace thund::engine::keyed {
namespace {

using testing::Copy;
using testing::CopyRun;
using testing::Options;
using testing::Oracle;
using testing::ReadBytes;
using testing::ReadTarget;
using testing::ScratchDir;

// A Parquet file's bytes between its leading magic and its footer.
std::string PagesOf(const std::string& path) {
  const std::string bytes = ReadBytes(path);
  uint32_t footer = 0;
  std::memcpy(&footer, bytes.data() + bytes.size() - 8, 4);
  return bytes.substr(4, bytes.size() - 12 - footer);
}

class PassthroughTest : public ::testing::Test {
 protected:
  // Six files of 3 row groups (300 rows each): file f holds ids f*300 .. f*300+299
  // unless `repeat_in_file` >= 0, whose rows repeat the ids of file 0.
  std::string MakeSource(int repeat_in_file = -1) {
    const std::string src = dir_ / "src";
    std::filesystem::create_directories(src);
    for (int f = 0; f < 6; ++f) {
      const int base = f == repeat_in_file ? 0 : f * 300;
      oracle_.Exec("COPY (SELECT " + std::to_string(base) + " + i AS id, 'u' || (" +
                   std::to_string(base) + " + i) AS url, 'f" + std::to_string(f) +
                   "' AS origin FROM range(300) t(i)) TO '" + src + "/part-" + std::to_string(f) +
                   ".parquet' (FORMAT parquet, ROW_GROUP_SIZE 100)");
    }
    return src;
  }
  std::string Target(const std::string& where) {
    const std::string dst = dir_ / "dst";
    std::filesystem::create_directories(dst);
    oracle_.Exec("COPY (SELECT * FROM read_parquet('" + dir_ / "src" + "/*.parquet') WHERE " +
                 where + ") TO '" + dst + "/old.parquet' (FORMAT parquet)");
    return dst;
  }

  ScratchDir dir_;
  Oracle oracle_;
};

TEST_F(PassthroughTest, ResumeCopiesTheUnstartedFilesWhole) {
  const std::string src = MakeSource();
  const std::string dst = Target("id < 750");  // files 0, 1 done; file 2 half done
  auto o = Options(src, dst, {"url"});
  o.keyed.batch_size = 64;
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->files_passed_through, 3);  // files 3, 4, 5
  EXPECT_EQ(run.result->counts.rows_written, 1800 - 750);
  EXPECT_EQ(run.result->counts.rows_skipped_existing, 750);
  EXPECT_EQ(oracle_.Diff("SELECT * FROM read_parquet('" + src + "/*.parquet')", ReadTarget(dst)),
            "");
  // Files 3 to 5 are joined into one output file holding their pages byte
  // for byte.
  const std::string pages = PagesOf(src + "/part-3.parquet") + PagesOf(src + "/part-4.parquet") +
                            PagesOf(src + "/part-5.parquet");
  int joined = 0;
  for (const auto& e : std::filesystem::directory_iterator(dst)) {
    joined += ReadBytes(e.path()).compare(4, pages.size(), pages) == 0 ? 1 : 0;
  }
  EXPECT_EQ(joined, 1);
}

TEST_F(PassthroughTest, SmallFilesAreJoinedWithTheirPagesAndStatisticsUnchanged) {
  const std::string src = MakeSource();
  const std::string dst = dir_ / "dst";
  auto o = Options(src, dst, {"url"});
  o.output.rows_per_file = 1000;  // three 300-row files per output file
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->files_passed_through, 6);
  EXPECT_EQ(run.result->files_written, 2);
  EXPECT_EQ(oracle_.Diff("SELECT * FROM read_parquet('" + src + "/*.parquet')", ReadTarget(dst)),
            "");
  std::vector<std::string> outputs;
  for (const auto& e : std::filesystem::directory_iterator(dst)) outputs.push_back(e.path());
  std::sort(outputs.begin(), outputs.end());
  ASSERT_EQ(outputs.size(), 2u);
  for (int j = 0; j < 2; ++j) {
    std::string pages, sources;
    for (int f = 3 * j; f < 3 * j + 3; ++f) {
      const std::string part = src + "/part-" + std::to_string(f) + ".parquet";
      pages += PagesOf(part);
      sources += (f > 3 * j ? ", '" : "'") + part + "'";
    }
    EXPECT_EQ(ReadBytes(outputs[j]).compare(4, pages.size(), pages), 0) << outputs[j];
    // Every row group and column chunk as it was: rows, sizes, codecs, statistics.
    const std::string chunks =
        "SELECT row_group_num_rows, path_in_schema, compression, total_compressed_size, "
        "stats_min, stats_max, stats_null_count FROM parquet_metadata(";
    EXPECT_EQ(oracle_.Diff(chunks + "[" + sources + "])", chunks + "'" + outputs[j] + "')"), "");
  }
}

TEST_F(PassthroughTest, RepeatedKeysKeepTheFirstRowsOnly) {
  // File 4 repeats file 0's keys: its rows are all new to the target but not to
  // this run, so it must not be copied.
  const std::string src = MakeSource(/*repeat_in_file=*/4);
  const std::string dst = dir_ / "dst";
  CopyRun run = Copy(Options(src, dst, {"url"}));
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->files_passed_through, 5);
  EXPECT_EQ(run.result->counts.rows_skipped_duplicate, 300);
  EXPECT_EQ(oracle_.Diff("SELECT * FROM read_parquet('" + src + "/*.parquet') WHERE origin <> 'f4'",
                         ReadTarget(dst)),
            "");
}

TEST_F(PassthroughTest, DuplicatesAllDefersRepeatedKeysEvenInNewFiles) {
  const std::string src = MakeSource(/*repeat_in_file=*/4);
  const std::string dst = dir_ / "dst";
  auto o = Options(src, dst, {"url"});
  o.keyed.duplicates = Duplicates::kAll;
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  EXPECT_EQ(run.result->files_passed_through, 4);  // files 1, 2, 3, 5
  EXPECT_EQ(oracle_.Diff("SELECT * FROM read_parquet('" + src + "/*.parquet')", ReadTarget(dst)),
            "");
  EXPECT_EQ(oracle_.Int(
                "SELECT count(*) FROM (SELECT url FROM read_parquet('" + dst +
                "/*.parquet', filename = true) GROUP BY url HAVING count(DISTINCT filename) > 1)"),
            0);
}

// Keys written from whole new units are held as source row numbers and read
// back from the source to confirm a repeat (keyed_write_filter.h,
// UseSourceRows). Heavy duplication within units, across files, and between
// units that go through the row-by-row path and units claimed whole: every key
// not in the target must be written once, from its first row.
TEST_F(PassthroughTest, RepeatedKeysAcrossWholeAndPartialUnitsKeepTheFirstRowOnly) {
  const std::string src = dir_ / "src";
  std::filesystem::create_directories(src);
  for (int f = 0; f < 8; ++f) {
    // x keys repeat at random (hash of the row number), within units and
    // across files, and are not in the target: their units are claimed whole.
    // File 2 mixes in y keys, half of them in the target: its units go row by
    // row and must see the x keys claimed before; file 6 repeats the other
    // half of the y keys, so units claimed whole must also see keys written
    // row by row. File 3 holds the empty string.
    const std::string seq = std::to_string(f * 400) + " + i";
    std::string url = "'https://x/' || (hash(" + seq + ") % 900)";
    if (f == 2) url = "CASE WHEN i % 2 = 0 THEN 'https://y/' || (i % 50) ELSE " + url + " END";
    if (f == 6) url = "CASE WHEN i < 200 THEN 'https://y/' || (25 + i % 25) ELSE " + url + " END";
    if (f == 3) url = "CASE WHEN i = 5 THEN '' ELSE " + url + " END";
    oracle_.Exec("COPY (SELECT " + seq + " AS seq, " + url + " AS url FROM range(400) t(i)) TO '" +
                 src + "/part-" + std::to_string(f) +
                 ".parquet' (FORMAT parquet, ROW_GROUP_SIZE 100)");
  }
  const std::string dst = dir_ / "dst";
  std::filesystem::create_directories(dst);
  oracle_.Exec("COPY (SELECT -1 - i AS seq, 'https://y/' || i AS url FROM range(25) t(i)) TO '" +
               dst + "/old.parquet' (FORMAT parquet)");
  auto o = Options(src, dst, {"url"});
  o.keyed.batch_size = 37;
  CopyRun run = Copy(o);
  ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
  const std::string first_rows = "SELECT * FROM read_parquet('" + src +
                                 "/*.parquet') s WHERE s.url NOT IN (SELECT url FROM '" + dst +
                                 "/old.parquet') QUALIFY seq = min(seq) OVER (PARTITION BY url)";
  EXPECT_EQ(oracle_.Diff("SELECT * FROM '" + dst + "/old.parquet' UNION ALL " + first_rows,
                         ReadTarget(dst)),
            "");
  EXPECT_EQ(run.result->counts.rows_written,
            oracle_.Int("SELECT count(*) FROM (" + first_rows + ")"));
}

TEST_F(PassthroughTest, TransformsAndOtherFormatsAreNeverCopied) {
  const std::string src = MakeSource();
  auto transformed = Options(src, dir_ / "t", {"url"});
  transformed.transform_sql = "SELECT id, url, upper(origin) AS origin FROM src";
  CopyRun t = Copy(transformed);
  ASSERT_TRUE(t.result.ok()) << t.result.status().ToString();
  EXPECT_EQ(t.result->files_passed_through, 0);
  EXPECT_EQ(oracle_.Diff("SELECT id, url, upper(origin) AS origin FROM read_parquet('" + src +
                             "/*.parquet')",
                         ReadTarget(dir_ / "t")),
            "");
  auto json = Options(src, dir_ / "j", {"url"});
  json.output.format = FileFormat::kJson;
  CopyRun j = Copy(json);
  ASSERT_TRUE(j.result.ok());
  EXPECT_EQ(j.result->files_passed_through, 0);
  EXPECT_EQ(j.result->counts.rows_written, 1800);
}

// Files of 1 MiB or more are copied with O_DIRECT writes, a 4 MiB block at a
// time, the last one padded and then cut: the copy must still be the source
// byte for byte, whatever its size. (Where the filesystem refuses O_DIRECT the
// copy falls back to copy_file_range; either way the bytes must match.)
TEST_F(PassthroughTest, BigFilesAreCopiedByteForByte) {
  const std::string src = dir_ / "big";
  std::filesystem::create_directories(src);
  for (int f = 0; f < 2; ++f) {
    oracle_.Exec("COPY (SELECT i AS id, md5(i::VARCHAR) || '-" + std::to_string(f) +
                 "' AS url FROM range(" + std::to_string(f * 400000) + ", " +
                 std::to_string(f * 400000 + 250000 + f * 123457) + ") t(i)) TO '" + src +
                 "/part-" + std::to_string(f) +
                 ".parquet' (FORMAT parquet, COMPRESSION 'uncompressed')");
  }
  std::vector<std::string> dirs = {dir_ / "dst"};
  if (std::filesystem::is_directory("/dev/shm"))
    dirs.push_back("/dev/shm/" + dir_.path().filename().string());
  for (const std::string& dst : dirs) {
    SCOPED_TRACE(dst);
    auto o = Options(src, dst, {"url"});
    o.output.rows_per_file = 200000;  // fewer than either file's: each is copied alone
    CopyRun run = Copy(o);
    ASSERT_TRUE(run.result.ok()) << run.result.status().ToString();
    EXPECT_EQ(run.result->files_passed_through, 2);
    std::vector<std::string> copies;
    for (const auto& e : std::filesystem::directory_iterator(dst)) copies.push_back(e.path());
    std::sort(copies.begin(), copies.end());
    ASSERT_EQ(copies.size(), 2u);
    for (int f = 0; f < 2; ++f) {
      const std::string original = src + "/part-" + std::to_string(f) + ".parquet";
      ASSERT_GT(std::filesystem::file_size(original), size_t{4} << 20);
      ASSERT_NE(std::filesystem::file_size(original) % 4096, 0u);
      EXPECT_EQ(std::filesystem::file_size(copies[f]), std::filesystem::file_size(original));
      EXPECT_TRUE(ReadBytes(copies[f]) == ReadBytes(original)) << copies[f] << " differs";
    }
    if (dst != dirs[0]) std::filesystem::remove_all(dst);
  }
}

}  // namespace
}  // namespace thund::engine::keyed
