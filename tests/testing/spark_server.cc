#include "testing/spark_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#ifndef THUND_SPARK_SERVER_DIR
#error "THUND_SPARK_SERVER_DIR (where ctest's Spark fixture keeps its server) must be defined"
#endif
#ifndef THUND_SOURCE_ROOT
#error "THUND_SOURCE_ROOT must be defined"
#endif

namespace thund::testing {
namespace {

std::string ReadRemote(const std::string& dir) {
  std::ifstream in(dir + "/remote");
  std::string remote;
  std::getline(in, remote);
  return remote;
}

// True when something accepts TCP connections at the remote's port.
bool Listening(const std::string& remote) {
  const size_t colon = remote.rfind(':');
  if (colon == std::string::npos) return false;
  const int port = std::atoi(remote.c_str() + colon + 1);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

std::string& OwnDir() {
  static std::string dir;
  return dir;
}

void StopOwn() {
  if (OwnDir().empty()) return;
  const std::string cmd = std::string(THUND_SOURCE_ROOT) + "/scripts/spark_server.sh stop '" +
                          OwnDir() + "' >/dev/null 2>&1";
  (void)std::system(cmd.c_str());
  std::error_code ec;
  std::filesystem::remove_all(OwnDir(), ec);
}

}  // namespace

std::string SparkVenv() {
  const char* env = std::getenv("THUND_SPARK_VENV");
  return env && *env ? env : std::string(THUND_SOURCE_ROOT) + "/.deps/spark";
}

arrow::Result<std::string> SharedSparkRemote() {
  static std::mutex mu;
  static std::string remote;
  std::lock_guard<std::mutex> lock(mu);
  if (!remote.empty()) return remote;
  const std::string shared = ReadRemote(THUND_SPARK_SERVER_DIR);
  if (!shared.empty() && Listening(shared)) return remote = shared;
  if (::access((SparkVenv() + "/bin/spark-submit").c_str(), X_OK) != 0) {
    return arrow::Status::IOError("no Spark at ", SparkVenv(),
                                  ": run scripts/bootstrap.sh (it installs pyspark)");
  }
  OwnDir() = (std::filesystem::temp_directory_path() /
              ("thund-spark-" + std::to_string(::getpid())))
                 .string();
  const std::string cmd = std::string(THUND_SOURCE_ROOT) + "/scripts/spark_server.sh start '" +
                          OwnDir() + "' >/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(OwnDir() + "/server.log");
    std::stringstream ss;
    ss << log.rdbuf();
    return arrow::Status::IOError("the Spark Connect server did not start; log:\n", ss.str());
  }
  std::atexit(StopOwn);
  remote = ReadRemote(OwnDir());
  return remote;
}

}  // namespace thund::testing
