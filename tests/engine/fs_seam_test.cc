// The filesystem seam: atomic file writes under injected faults.
#include <gtest/gtest.h>

#include <filesystem>

#include <arrow/filesystem/localfs.h>

#include "engine/fs/atomic_write.h"
#include "engine/fs/fault_injection_fs.h"

namespace thund::engine {
namespace {

namespace fs = std::filesystem;

class FsSeamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("thund-fs-" + UniqueToken());
    fs::create_directories(dir_);
    local_ = std::make_shared<arrow::fs::LocalFileSystem>();
    faulty_ = std::make_shared<FaultInjectingFileSystem>(local_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  std::vector<std::string> Listing() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
  std::shared_ptr<arrow::fs::LocalFileSystem> local_;
  std::shared_ptr<FaultInjectingFileSystem> faulty_;
};

TEST_F(FsSeamTest, WritesAndReplacesWholeFiles) {
  ASSERT_TRUE(WriteFileAtomically(*faulty_, Path("a.txt"), "first").ok());
  ASSERT_EQ(*ReadWholeFile(*local_, Path("a.txt")), "first");
  ASSERT_TRUE(WriteFileAtomically(*faulty_, Path("a.txt"), "second version").ok());
  EXPECT_EQ(*ReadWholeFile(*local_, Path("a.txt")), "second version");
  EXPECT_EQ(Listing(), std::vector<std::string>{"a.txt"});
}

// Fail every possible operation of a multi-write replacement in turn: the file
// always holds the old or the new content, never a mixture or a prefix.
TEST_F(FsSeamTest, EveryFaultPointLeavesOldOrNewContent) {
  const std::string old_content = "old content";
  const std::string new_content(10000, 'n');
  auto write_in_chunks = [&](arrow::io::OutputStream* out) -> arrow::Status {
    for (size_t off = 0; off < new_content.size(); off += 1000) {
      ARROW_RETURN_NOT_OK(out->Write(new_content.data() + off, 1000));
    }
    return arrow::Status::OK();
  };
  // Count the operations of a clean run first.
  ASSERT_TRUE(WriteFileAtomically(*local_, Path("f"), old_content).ok());
  int64_t before = faulty_->operations();
  ASSERT_TRUE(WriteFileAtomically(*faulty_, Path("probe"), write_in_chunks).ok());
  int64_t clean_ops = faulty_->operations() - before;
  ASSERT_GE(clean_ops, 12);  // 10 writes + close + move

  for (int64_t k = 1; k <= clean_ops; ++k) {
    ASSERT_TRUE(WriteFileAtomically(*local_, Path("f"), old_content).ok());
    faulty_->FailAfter(k);
    arrow::Status st = WriteFileAtomically(*faulty_, Path("f"), write_in_chunks);
    faulty_->FailAfter(0);
    EXPECT_FALSE(st.ok()) << "fault at op " << k << " was not reported";
    EXPECT_NE(st.message().find("injected fault"), std::string::npos) << st;
    EXPECT_EQ(*ReadWholeFile(*local_, Path("f")), old_content) << "fault at op " << k;
    // Whatever a "killed" writer left is recognisably temporary and removable.
    ASSERT_TRUE(CleanupTemporaries(*local_, dir_.string()).ok());
    EXPECT_EQ(Listing(), (std::vector<std::string>{"f", "probe"})) << "fault at op " << k;
  }
}

TEST_F(FsSeamTest, TemporaryNamesAreHiddenFromParquetGlobs) {
  std::string tmp = TemporaryPathFor(Path("part-0.parquet"));
  std::string base = fs::path(tmp).filename().string();
  EXPECT_TRUE(IsTemporaryName(base));
  EXPECT_NE(base.substr(base.size() - 8), ".parquet");
  EXPECT_EQ(base[0], '_');
  EXPECT_FALSE(IsTemporaryName("part-0.parquet"));
}

TEST_F(FsSeamTest, CleanupOfMissingDirectoryIsNotAnError) {
  auto removed = CleanupTemporaries(*local_, Path("missing"));
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 0);
}

}  // namespace
}  // namespace thund::engine
