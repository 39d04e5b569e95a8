// file: URIs as local paths (ir/file_uri.h): the spellings Spark and
// `spark-pipelines init` write, and the ones that are not local.
#include "ir/file_uri.h"

#include <gtest/gtest.h>

namespace thund::internal {
namespace {

std::string Local(const std::string& s) {
  auto r = LocalPathOf(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : std::string("<error>");
}

std::string Error(const std::string& s) {
  auto r = LocalPathOf(s);
  return r.ok() ? std::string() : r.status().message();
}

TEST(FileUri, LocalSpellingsNameTheirPath) {
  EXPECT_EQ(Local("file:///tmp/proj/pipeline-storage"), "/tmp/proj/pipeline-storage");
  EXPECT_EQ(Local("file:/tmp/proj"), "/tmp/proj");
  EXPECT_EQ(Local("file://localhost/tmp/proj"), "/tmp/proj");
  EXPECT_EQ(Local("FILE:///tmp/x"), "/tmp/x");
  EXPECT_EQ(Local("file:///tmp/with%20space/%C3%A9"), "/tmp/with space/\xC3\xA9");
  EXPECT_EQ(Local("file:///"), "/");
}

TEST(FileUri, OtherTextIsUnchanged) {
  for (const char* s : {"./storage", "/abs/path", "s3://bucket/x", "relative/dir", "files/x",
                        "profile:x"}) {
    EXPECT_EQ(Local(s), s);
    EXPECT_FALSE(IsFileUri(s)) << s;
  }
}

TEST(FileUri, NonLocalOrMalformedUrisAreErrors) {
  EXPECT_NE(Error("file://server/share").find("names host 'server'"), std::string::npos);
  EXPECT_NE(Error("file:relative").find("no absolute path"), std::string::npos);
  EXPECT_NE(Error("file://").find("no absolute path"), std::string::npos);
  EXPECT_NE(Error("file:///a%2").find("malformed %-escape"), std::string::npos);
  EXPECT_NE(Error("file:///a%zz").find("malformed %-escape"), std::string::npos);
  EXPECT_NE(Error("file:///a%00b").find("malformed %-escape"), std::string::npos);
}

}  // namespace
}  // namespace thund::internal
