// Runs a command line in a shell and captures its exit code, stdout and stderr.
// For CLI tests only (the binaries under test are real processes).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <vector>

extern char** environ;

namespace thund::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `cmd` is passed to /bin/sh; quote arguments yourself.
inline CommandResult RunCommand(const std::string& cmd) {
  static int counter = 0;
  auto dir = std::filesystem::temp_directory_path() /
             ("thund-cmd-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  std::string full = cmd + " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadAll(dir / "out");
  r.err = ReadAll(dir / "err");
  std::filesystem::remove_all(dir);
  return r;
}

// Starts `args` (args[0]: the program's path) as a child of this process,
// stdout and stderr appended to `log`; returns its pid, or -1 (a test
// failure) when it cannot start. For tests that signal or kill the child.
inline pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "posix_spawn " << args[0] << " failed";
  return rc == 0 ? pid : -1;
}

inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

#ifdef THUND_BINARY
// The thund CLI under test (THUND_BINARY: set by the test target) with `args`
// (quoted by the caller).
inline CommandResult RunThund(const std::string& args) {
  return RunCommand(ShellQuote(THUND_BINARY) + " " + args);
}
#endif

}  // namespace thund::testing
