// Runs a command line in a shell and captures its exit code, stdout and stderr.
// For CLI tests only (the binaries under test are real processes).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace thund::testing
