// A real S3-compatible server for tests: moto_server (moto[server], installed
// into .deps/venv by scripts/bootstrap.sh) run as a child of the test process
// on 127.0.0.1, on a port the server picks itself (no race between parallel
// test processes).
//
// Start() waits until the server answers HTTP (at most 20 s), then points the
// AWS variables of this process at it: AWS_ENDPOINT_URL=http://127.0.0.1:PORT,
// AWS_ACCESS_KEY_ID=testing, AWS_SECRET_ACCESS_KEY=testing, AWS_REGION=us-east-1
// (the previous values come back when the server is destroyed). Moto keeps
// everything in memory: a fresh server holds no buckets.
//
// The destructor stops the server (SIGTERM, then SIGKILL after 3 s) and reaps
// it. The child also gets SIGTERM when the test process dies (PR_SET_PDEATHSIG),
// so a crashed test leaves no server behind.
//
// A missing moto is a failure with "run scripts/bootstrap.sh", never a skip.
//
// Sharing: derive a fixture from S3ServerTest; its suite starts one server in
// SetUpTestSuite and stops it in TearDownTestSuite. A fixture that overrides
// SetUp() must call S3ServerTest::SetUp() first.
//
// Thread-safety: none; call from the test's main thread.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <arrow/result.h>
#include <arrow/status.h>
#include <gtest/gtest.h>

namespace thund::testing {

class S3Server {
 public:
  // Starts moto_server and waits until it answers.
  static arrow::Result<std::unique_ptr<S3Server>> Start();
  ~S3Server();
  S3Server(const S3Server&) = delete;
  S3Server& operator=(const S3Server&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT"
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The server's stdout + stderr so far (for failure messages).
  std::string Log() const;

  // Creates bucket `name` with a plain S3 PUT (no thund code involved).
  arrow::Status CreateBucket(const std::string& name);

 private:
  S3Server(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  arrow::Status WaitUntilReady();
  void SetEnv(const char* name, const std::string& value);

  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
  std::map<std::string, std::optional<std::string>> saved_env_;  // name -> previous value
};

// Fixture base for suites that share one S3Server (see the top of this file).
class S3ServerTest : public ::testing::Test {
 public:
  static void SetUpTestSuite();
  static void TearDownTestSuite();

 protected:
  // Fails the test (with the reason) when the server did not start.
  void SetUp() override;
  // REQUIRES: SetUp() succeeded.
  static S3Server& server();
};

}  // namespace thund::testing
