// Object storage through ResolveLocation, against a real S3-compatible server
// (moto_server on loopback, started by tests/testing/s3_server.h) — no mocks.
//
// Arrow's S3 support is finalized at exit (filesystem_uri.h); a crash there
// fails ExitsCleanlyAfterUsingS3 (and any test's process under ctest).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/filesystem/s3fs.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>

#include "engine/fs/atomic_write.h"
#include "engine/fs/filesystem_uri.h"
#include "engine/table_compare.h"
#include "testing/run_command.h"
#include "testing/s3_server.h"

namespace thund::engine {
namespace {

using arrow::fs::FileType;

// A loopback port nothing listens on (bound, then released).
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class S3FileSystemTest : public thund::testing::S3ServerTest {
 protected:
  void SetUp() override {
    S3ServerTest::SetUp();
    if (HasFatalFailure()) return;
    bucket_ = "thund-test-" + UniqueToken();
    THUND_ASSERT_OK(server().CreateBucket(bucket_));
    THUND_ASSERT_OK_AND_ASSIGN(loc_, ResolveLocation("s3://" + bucket_ + "/data/"));
  }
  std::string Key(const std::string& rel) const { return loc_.path + "/" + rel; }
  // Base names under `dir` (not recursive), each tagged "/" when a directory.
  std::vector<std::string> List(const std::string& dir) {
    arrow::fs::FileSelector sel;
    sel.base_dir = dir;
    auto infos = loc_.fs->GetFileInfo(sel);
    EXPECT_TRUE(infos.ok()) << infos.status().ToString();
    std::vector<std::string> out;
    for (const auto& i : infos.ValueOr({})) {
      out.push_back(i.base_name() + (i.IsDirectory() ? "/" : ""));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  FileType TypeOf(const std::string& path) {
    auto info = loc_.fs->GetFileInfo(path);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return info.ok() ? info->type() : FileType::Unknown;
  }

  std::string bucket_;
  ResolvedLocation loc_;
};

TEST_F(S3FileSystemTest, ResolvesBucketAndPrefix) {
  EXPECT_EQ(loc_.path, bucket_ + "/data");
  EXPECT_EQ(loc_.uri, "s3://" + bucket_ + "/data");
  EXPECT_FALSE(loc_.local);
  EXPECT_EQ(loc_.fs->type_name(), "s3");
  // The same settings share one filesystem, whether they come from the
  // environment or from storage options.
  THUND_ASSERT_OK_AND_ASSIGN(auto again, ResolveLocation("S3://" + bucket_));
  EXPECT_EQ(again.fs, loc_.fs);
  EXPECT_EQ(again.path, bucket_);
  THUND_ASSERT_OK_AND_ASSIGN(
      auto explicit_opts,
      ResolveLocation("s3://" + bucket_, {{"endpoint", server().endpoint()},
                                          {"region", "us-east-1"},
                                          {"access_key_id", "testing"},
                                          {"secret_access_key", "testing"}}));
  EXPECT_EQ(explicit_opts.fs, loc_.fs);
  EXPECT_TRUE(IsObjectStoreUri("s3://b/x"));
  EXPECT_TRUE(IsObjectStoreUri("S3://b"));
  EXPECT_FALSE(IsObjectStoreUri("file:///tmp/x"));
  EXPECT_FALSE(IsObjectStoreUri("/tmp/s3://x"));
}

TEST_F(S3FileSystemTest, WritesReadsListsAndDeletes) {
  // No directory has to exist first: S3 has keys, not directories.
  THUND_ASSERT_OK(WriteFileAtomically(*loc_.fs, Key("a.txt"), "first"));
  THUND_ASSERT_OK_AND_ASSIGN(std::string got, ReadWholeFile(*loc_.fs, Key("a.txt")));
  EXPECT_EQ(got, "first");
  THUND_ASSERT_OK(WriteFileAtomically(*loc_.fs, Key("a.txt"), "second, longer"));
  THUND_ASSERT_OK_AND_ASSIGN(got, ReadWholeFile(*loc_.fs, Key("a.txt")));
  EXPECT_EQ(got, "second, longer");
  THUND_ASSERT_OK(WriteFileAtomically(*loc_.fs, Key("sub/b.txt"), "nested"));

  // A key prefix lists as a directory; no temporary is left behind.
  EXPECT_EQ(List(loc_.path), (std::vector<std::string>{"a.txt", "sub/"}));
  EXPECT_EQ(TypeOf(Key("sub")), FileType::Directory);
  EXPECT_EQ(TypeOf(Key("a.txt")), FileType::File);
  THUND_ASSERT_OK_AND_ASSIGN(int removed, CleanupTemporaries(*loc_.fs, loc_.path));
  EXPECT_EQ(removed, 0);

  THUND_ASSERT_OK(loc_.fs->DeleteFile(Key("a.txt")));
  EXPECT_EQ(TypeOf(Key("a.txt")), FileType::NotFound);
  EXPECT_FALSE(ReadWholeFile(*loc_.fs, Key("a.txt")).ok());
  // Deleting the last key under a prefix: Arrow leaves a "dir/" marker object
  // so that the parent "directory" does not vanish with it.
  THUND_ASSERT_OK(loc_.fs->DeleteFile(Key("sub/b.txt")));
  EXPECT_EQ(TypeOf(Key("sub")), FileType::Directory);
  EXPECT_EQ(List(Key("sub")), std::vector<std::string>{});
  THUND_ASSERT_OK(loc_.fs->DeleteDirContents(loc_.path));
  EXPECT_EQ(List(loc_.path), std::vector<std::string>{});
  // Listing a prefix that holds nothing is NotFound unless allowed.
  arrow::fs::FileSelector missing;
  missing.base_dir = Key("never-written");
  EXPECT_FALSE(loc_.fs->GetFileInfo(missing).ok());
  missing.allow_not_found = true;
  EXPECT_TRUE(loc_.fs->GetFileInfo(missing).ok());
}

TEST_F(S3FileSystemTest, CreateDirWritesAMarkerObject) {
  THUND_ASSERT_OK(loc_.fs->CreateDir(Key("d1/d2"), /*recursive=*/true));
  EXPECT_EQ(TypeOf(Key("d1")), FileType::Directory);
  EXPECT_EQ(TypeOf(Key("d1/d2")), FileType::Directory);
  EXPECT_EQ(List(Key("d1")), std::vector<std::string>{"d2/"});
  // Creating it again is not an error.
  THUND_ASSERT_OK(loc_.fs->CreateDir(Key("d1/d2"), /*recursive=*/true));
  THUND_ASSERT_OK(loc_.fs->DeleteDir(Key("d1")));
  EXPECT_EQ(TypeOf(Key("d1")), FileType::NotFound);
}

// S3 has no rename. Arrow's S3FileSystem::Move of a file is CopyObject followed
// by DeleteObject: the destination appears whole (the copy is one request), but
// the two steps are not atomic together — a crash between them leaves both keys,
// and the cost grows with the object size. Moving a "directory" is not
// supported. WriteFileAtomically on S3 therefore costs an upload plus a copy;
// its guarantee (readers see the old or the new object, never a partial one)
// holds anyway, because an S3 object only becomes visible once complete.
TEST_F(S3FileSystemTest, MoveIsCopyThenDelete) {
  THUND_ASSERT_OK(WriteFileAtomically(*loc_.fs, Key("src"), "payload"));
  THUND_ASSERT_OK(WriteFileAtomically(*loc_.fs, Key("dst"), "old"));
  THUND_ASSERT_OK(loc_.fs->Move(Key("src"), Key("dst")));  // replaces "dst"
  EXPECT_EQ(TypeOf(Key("src")), FileType::NotFound);
  THUND_ASSERT_OK_AND_ASSIGN(std::string got, ReadWholeFile(*loc_.fs, Key("dst")));
  EXPECT_EQ(got, "payload");
  // A file moved into a "directory" that does not exist yet: fine on S3.
  THUND_ASSERT_OK(loc_.fs->Move(Key("dst"), Key("new/dir/dst")));
  EXPECT_EQ(TypeOf(Key("new/dir/dst")), FileType::File);

  THUND_ASSERT_OK(WriteFileAtomically(*loc_.fs, Key("tree/x"), "x"));
  arrow::Status dir_move = loc_.fs->Move(Key("tree"), Key("tree2"));
  EXPECT_FALSE(dir_move.ok());
  EXPECT_EQ(TypeOf(Key("tree/x")), FileType::File);
  EXPECT_FALSE(loc_.fs->Move(Key("absent"), Key("elsewhere")).ok());
}

// OpenOutputStream on an existing key replaces it only at Close(): until then
// readers keep seeing the old object, small (one PutObject at Close) or large
// (a multipart upload, completed at Close).
TEST_F(S3FileSystemTest, OutputStreamReplacesObjectAtClose) {
  for (size_t size : {size_t{100}, size_t{12} << 20}) {
    SCOPED_TRACE(size);
    THUND_ASSERT_OK(WriteFileAtomically(*loc_.fs, Key("obj"), "old"));
    THUND_ASSERT_OK_AND_ASSIGN(auto out, loc_.fs->OpenOutputStream(Key("obj")));
    const std::string chunk(1 << 20, 'n');
    for (size_t written = 0; written < size; written += std::min(size, chunk.size())) {
      THUND_ASSERT_OK(out->Write(chunk.data(), static_cast<int64_t>(std::min(size, chunk.size()))));
    }
    THUND_ASSERT_OK(out->Flush());
    THUND_ASSERT_OK_AND_ASSIGN(std::string during, ReadWholeFile(*loc_.fs, Key("obj")));
    EXPECT_EQ(during, "old");
    THUND_ASSERT_OK(out->Close());
    THUND_ASSERT_OK_AND_ASSIGN(auto info, loc_.fs->GetFileInfo(Key("obj")));
    EXPECT_EQ(info.size(), static_cast<int64_t>(size));
  }
}

TEST_F(S3FileSystemTest, ParquetRoundTrip) {
  // ReadParquetFile / WriteParquetFile (parquet_io.h) take local paths only, so
  // the Parquet goes through Arrow's reader and writer on the S3 filesystem,
  // committed with WriteFileAtomically as thund's writers do.
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  THUND_ASSERT_OK(ids.AppendValues({1, 2, 3}));
  THUND_ASSERT_OK(names.AppendValues({"a", "b", "c"}));
  std::shared_ptr<arrow::Array> id_arr, name_arr;
  THUND_ASSERT_OK(ids.Finish(&id_arr));
  THUND_ASSERT_OK(names.Finish(&name_arr));
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())}),
      {id_arr, name_arr});
  const std::string path = Key("t/part-0.parquet");
  THUND_ASSERT_OK(WriteFileAtomically(*loc_.fs, path, [&](arrow::io::OutputStream* out) {
    std::shared_ptr<arrow::io::OutputStream> borrowed(std::shared_ptr<void>(), out);
    return parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), borrowed, 1024);
  }));
  THUND_ASSERT_OK_AND_ASSIGN(auto input, loc_.fs->OpenInputFile(path));
  THUND_ASSERT_OK_AND_ASSIGN(auto reader,
                             parquet::arrow::OpenFile(input, arrow::default_memory_pool()));
  THUND_ASSERT_OK_AND_ASSIGN(auto back, reader->ReadTable());
  EXPECT_TRUE(testing::TablesEqualOrdered(*table, *back));
}

TEST_F(S3FileSystemTest, MissingBucketIsNamed) {
  auto r = ResolveLocation("s3://no-such-bucket-" + UniqueToken() + "/p");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("s3://no-such-bucket-"), std::string::npos);
  EXPECT_NE(r.status().message().find("does not exist at " + server().endpoint()),
            std::string::npos)
      << r.status().ToString();
}

TEST_F(S3FileSystemTest, UnreachableEndpointIsNamed) {
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(ClosedPort());
  const std::string location = "s3://" + bucket_ + "/p";
  auto r = ResolveLocation(location, {{"endpoint", endpoint}});
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.status().message();
  EXPECT_EQ(msg.rfind(location + ": could not reach endpoint " + endpoint, 0), 0u) << msg;
  EXPECT_NE(msg.find("AWS_ENDPOINT_URL"), std::string::npos) << msg;
}

TEST_F(S3FileSystemTest, BadOptionsAreRefused) {
  const std::string location = "s3://" + bucket_;
  auto unknown = ResolveLocation(location, {{"endpiont", "http://x"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown storage option 'endpiont'"),
            std::string::npos);
  EXPECT_FALSE(ResolveLocation(location, {{"access_key_id", ""}}).ok());  // secret still set
  EXPECT_FALSE(ResolveLocation(location, {{"allow_http", "false"}}).ok());
  EXPECT_FALSE(ResolveLocation(location, {{"allow_http", "yes"}}).ok());
  EXPECT_FALSE(ResolveLocation(location, {{"endpoint", "http://h:1/path"}}).ok());
  EXPECT_FALSE(ResolveLocation("s3://").ok());
  EXPECT_FALSE(ResolveLocation("s3://" + bucket_ + "/a?region=x").ok());
  EXPECT_FALSE(ResolveLocation("s3://" + bucket_ + "//a").ok());
}

// A process that used S3 exits with 0 and says nothing at exit (a missing or
// mis-ordered FinalizeS3 aborts there, or warns).
TEST_F(S3FileSystemTest, ExitsCleanlyAfterUsingS3) {
  if (std::getenv("THUND_S3_EXIT_CHILD") != nullptr) GTEST_SKIP() << "already the child";
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  auto r = thund::testing::RunCommand(
      "THUND_S3_EXIT_CHILD=1 " + thund::testing::ShellQuote(self) +
      " --gtest_filter=S3FileSystemTest.ParquetRoundTrip:" +
      "S3FileSystemTest.ExitsCleanlyAfterUsingS3");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[  PASSED  ] 1 test."), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

// Local locations need no server.
TEST(FilesystemUriTest, LocalPathsResolveLocally) {
  THUND_ASSERT_OK_AND_ASSIGN(auto abs, ResolveLocation("/tmp/./thund/../x/"));
  EXPECT_TRUE(abs.local);
  EXPECT_EQ(abs.path, "/tmp/x");
  EXPECT_EQ(abs.uri, "file:///tmp/x");
  EXPECT_EQ(abs.fs->type_name(), "local");

  THUND_ASSERT_OK_AND_ASSIGN(auto uri, ResolveLocation("file:///tmp/a%20b"));
  EXPECT_TRUE(uri.local);
  EXPECT_EQ(uri.path, "/tmp/a b");
  EXPECT_EQ(uri.uri, "file:///tmp/a%20b");
  EXPECT_EQ(uri.fs, abs.fs);
  THUND_ASSERT_OK_AND_ASSIGN(auto host, ResolveLocation("file://localhost/tmp"));
  EXPECT_EQ(host.path, "/tmp");

  THUND_ASSERT_OK_AND_ASSIGN(auto rel, ResolveLocation("rel/dir"));
  EXPECT_TRUE(rel.local);
  EXPECT_EQ(rel.path, (std::filesystem::current_path() / "rel/dir").string());

  // Storage options travel with local locations too; unknown keys never do.
  EXPECT_TRUE(ResolveLocation("/tmp", {{"region", "eu-west-1"}}).ok());
  auto unknown = ResolveLocation("/tmp", {{"colour", "red"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'colour'"), std::string::npos);

  EXPECT_FALSE(ResolveLocation("").ok());
  EXPECT_FALSE(ResolveLocation("file://otherhost/tmp").ok());
  EXPECT_FALSE(ResolveLocation("file:///tmp/%zz").ok());
  auto gs = ResolveLocation("gs://bucket/x");
  ASSERT_FALSE(gs.ok());
  EXPECT_NE(gs.status().message().find("unsupported storage scheme 'gs://'"), std::string::npos);
}

}  // namespace
}  // namespace thund::engine
