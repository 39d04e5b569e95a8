#include "testing/s3_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#ifndef THUND_MOTO_SERVER
#error "THUND_MOTO_SERVER (the path of .deps/venv/bin/moto_server) must be defined"
#endif

extern char** environ;

namespace thund::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStartTimeout = std::chrono::seconds(20);

struct HttpResponse {
  int status = 0;
  std::string text;  // status line, headers and body
};

// One HTTP/1.1 request with an empty body to 127.0.0.1:port.
arrow::Result<HttpResponse> Http(int port, const std::string& method, const std::string& target) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return arrow::Status::IOError("socket: ", std::strerror(errno));
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::string err = std::strerror(errno);
    ::close(fd);
    return arrow::Status::IOError("connect 127.0.0.1:", port, ": ", err);
  }
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" +
                    std::to_string(port) + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  bool sent = ::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
  std::string resp;
  char buf[4096];
  for (ssize_t n; sent && (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) resp.append(buf, n);
  ::close(fd);
  std::smatch m;
  if (!std::regex_search(resp, m, std::regex("^HTTP/1\\.[01] (\\d{3})"))) {
    return arrow::Status::IOError(method, " ", target, ": no HTTP response");
  }
  return HttpResponse{std::stoi(m[1].str()), std::move(resp)};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<S3Server>& SharedServer() {
  static std::unique_ptr<S3Server> server;
  return server;
}
std::string& SharedError() {
  static std::string error;
  return error;
}

}  // namespace

arrow::Result<std::unique_ptr<S3Server>> S3Server::Start() {
  const std::string program = THUND_MOTO_SERVER;
  if (::access(program.c_str(), X_OK) != 0) {
    return arrow::Status::IOError("moto_server not found at ", program,
                                  ": run scripts/bootstrap.sh (it installs moto[server])");
  }
  static int counter = 0;
  std::string log = (std::filesystem::temp_directory_path() /
                     ("thund-moto-" + std::to_string(::getpid()) + "-" +
                      std::to_string(counter++) + ".log"))
                        .string();
  // Everything the child needs is built before fork(): after it, only
  // async-signal-safe calls.
  std::vector<std::string> args = {program, "-H", "127.0.0.1", "-p", "0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = {"PYTHONUNBUFFERED=1"};
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) return arrow::Status::IOError("fork: ", std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the test process is already gone
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null_in = ::open("/dev/null", O_RDONLY);
    if (fd < 0 || null_in < 0) ::_exit(127);
    ::dup2(null_in, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  std::unique_ptr<S3Server> server(new S3Server(pid, log));
  ARROW_RETURN_NOT_OK(server->WaitUntilReady());
  server->SetEnv("AWS_ENDPOINT_URL", server->endpoint());
  server->SetEnv("AWS_ACCESS_KEY_ID", "testing");
  server->SetEnv("AWS_SECRET_ACCESS_KEY", "testing");
  server->SetEnv("AWS_REGION", "us-east-1");
  return server;
}

arrow::Status S3Server::WaitUntilReady() {
  const auto deadline = Clock::now() + kStartTimeout;
  const std::regex listening("Running on http://127\\.0\\.0\\.1:(\\d+)");
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return arrow::Status::IOError("moto_server exited during startup (status ", status,
                                    "); run scripts/bootstrap.sh to repair the venv. Log:\n",
                                    Log());
    }
    std::smatch m;
    std::string text = Log();
    if (port_ == 0 && std::regex_search(text, m, listening)) port_ = std::stoi(m[1].str());
    if (port_ != 0) {
      auto resp = Http(port_, "GET", "/");
      if (resp.ok() && resp->status == 200) return arrow::Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return arrow::Status::IOError("moto_server did not answer within ",
                                std::chrono::seconds(kStartTimeout).count(),
                                " s (is scripts/bootstrap.sh complete?). Log:\n", Log());
}

S3Server::~S3Server() {
  for (const auto& [name, previous] : saved_env_) {
    if (previous) {
      ::setenv(name.c_str(), previous->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::seconds(3);
    bool reaped = false;
    while (!reaped && Clock::now() < deadline) {
      reaped = ::waitpid(pid_, nullptr, WNOHANG) == pid_;
      if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!reaped) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  std::error_code ec;
  std::filesystem::remove(log_path_, ec);
}

std::string S3Server::Log() const { return ReadFile(log_path_); }

void S3Server::SetEnv(const char* name, const std::string& value) {
  if (!saved_env_.count(name)) {
    const char* previous = std::getenv(name);
    saved_env_[name] = previous ? std::optional<std::string>(previous) : std::nullopt;
  }
  ::setenv(name, value.c_str(), 1);
}

arrow::Status S3Server::CreateBucket(const std::string& name) {
  ARROW_ASSIGN_OR_RAISE(HttpResponse resp, Http(port_, "PUT", "/" + name));
  if (resp.status != 200) {
    return arrow::Status::IOError("creating bucket '", name, "': HTTP ", resp.status, "\n",
                                  resp.text);
  }
  return arrow::Status::OK();
}

void S3ServerTest::SetUpTestSuite() {
  if (SharedServer()) return;
  auto started = S3Server::Start();
  if (started.ok()) {
    SharedServer() = std::move(*started);
    SharedError().clear();
  } else {
    SharedError() = started.status().ToString();
  }
}

void S3ServerTest::TearDownTestSuite() { SharedServer().reset(); }

void S3ServerTest::SetUp() {
  ASSERT_NE(SharedServer(), nullptr) << "no S3 server for this test: " << SharedError();
}

S3Server& S3ServerTest::server() { return *SharedServer(); }

}  // namespace thund::testing
