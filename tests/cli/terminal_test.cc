// What a person at a terminal sees: the live progress line of `thund run` and
// `thund copy` (under a real pseudo-terminal, and its absence when stderr is
// not a terminal or with -q), the run summary as JSON (--summary-json), and
// the shell completion scripts (`thund completion`), checked against the
// command's own --help.
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/run_command.h"

namespace thund {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::ShellQuote;
namespace fs = std::filesystem;

// Runs `cmd` with /bin/sh on a new pseudo-terminal (stdin, stdout and stderr
// are the terminal unless `cmd` redirects them) and returns all it printed
// there; *exit_code gets its exit status.
std::string RunOnTerminal(const std::string& cmd, int* exit_code) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::setenv("TERM", "xterm", 1);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  EXPECT_GT(pid, 0) << "forkpty failed";
  if (pid < 0) return "";
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the terminal's last writer is gone
    out.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

class TerminalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("thund-term-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string Thund() const { return ShellQuote(THUND_BINARY); }
  std::string Storage() const { return ShellQuote((dir_ / "store").string()); }

  // A batch pipeline of one flow writing `rows` rows.
  std::string Pipeline(int rows) {
    return Write("p.yaml", "name: prog\ndatasets:\n  - name: numbers\n    kind: materialized_view\n"
                           "flows:\n  - name: numbers\n    target: numbers\n"
                           "    sql: SELECT i AS id, i % 7 AS k FROM generate_series(1, " +
                               std::to_string(rows) + ") AS t(i)\n");
  }

  fs::path dir_;
};

// The line's marks: a carriage return + erase-line, and the run's counters.
bool HasRunProgress(const std::string& s) {
  return s.find("\r\033[K") != std::string::npos && s.find("thund run: ") != std::string::npos &&
         s.find(" rows/s)") != std::string::npos;
}

TEST_F(TerminalTest, RunShowsALiveProgressLineOnATerminal) {
  const std::string p = Pipeline(200000);
  int code = -1;
  const std::string seen =
      RunOnTerminal(Thund() + " run " + ShellQuote(p) + " --storage " + Storage(), &code);
  EXPECT_EQ(code, 0) << seen;
  EXPECT_TRUE(HasRunProgress(seen)) << seen;
  EXPECT_NE(seen.find("/1 flows"), std::string::npos) << seen;
  // The summary still follows, on a clean line.
  EXPECT_NE(seen.find("numbers"), std::string::npos) << seen;
}

TEST_F(TerminalTest, RunIsQuietWhenStderrIsNotATerminalOrWithQ) {
  const std::string p = Pipeline(1000);
  int code = -1;
  // stdout is the terminal, stderr a file: no line anywhere.
  const std::string err_file = (dir_ / "err").string();
  std::string seen = RunOnTerminal(Thund() + " run " + ShellQuote(p) + " --storage " + Storage() +
                                       " 2>" + ShellQuote(err_file),
                                   &code);
  EXPECT_EQ(code, 0) << seen;
  const std::string err = testing::ReadAll(err_file);
  EXPECT_FALSE(HasRunProgress(seen)) << seen;
  EXPECT_EQ(err.find("thund run: "), std::string::npos) << err;
  EXPECT_EQ(err.find('\r'), std::string::npos) << err;
  // -q on a terminal: neither the line nor event lines; the summary stays.
  seen = RunOnTerminal(
      Thund() + " run " + ShellQuote(p) + " --storage " + Storage() + " --full-refresh-all -q",
      &code);
  EXPECT_EQ(code, 0) << seen;
  EXPECT_FALSE(HasRunProgress(seen)) << seen;
  EXPECT_EQ(seen.find("flow_started"), std::string::npos) << seen;
  EXPECT_NE(seen.find("numbers"), std::string::npos) << seen;
  // Not a terminal at all (the usual ctest case).
  CommandResult plain = RunCommand(Thund() + " run " + ShellQuote(p) + " --storage " + Storage() +
                                   " --full-refresh-all");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(HasRunProgress(plain.out + plain.err)) << plain.err;
}

TEST_F(TerminalTest, CopyShowsFilesRowsAndBytesOnATerminalOnly) {
  std::string csv = "id,v\n";
  for (int i = 0; i < 5000; ++i) csv += std::to_string(i) + "," + std::to_string(i * 3) + "\n";
  const std::string src = Write("in/rows.csv", csv);
  const std::string dst = (dir_ / "out").string();
  int code = -1;
  std::string seen = RunOnTerminal(Thund() + " copy " + ShellQuote(src) + " " + ShellQuote(dst) +
                                       " --checkpoint-keys id --rows-per-file 1000",
                                   &code);
  EXPECT_EQ(code, 0) << seen;
  EXPECT_NE(seen.find("\r\033[Kthund copy: "), std::string::npos) << seen;
  EXPECT_TRUE(std::regex_search(seen, std::regex(R"(\d+ files \| [0-9.k]+ rows written \()")))
      << seen;
  EXPECT_TRUE(std::regex_search(seen, std::regex(R"(rows/s\) \| [0-9.]+ (B|KB|MB))"))) << seen;
  fs::remove_all(dst);
  seen = RunOnTerminal(Thund() + " copy " + ShellQuote(src) + " " + ShellQuote(dst) +
                           " --checkpoint-keys id --rows-per-file 1000 -q",
                       &code);
  EXPECT_EQ(code, 0) << seen;
  EXPECT_EQ(seen.find("thund copy: "), std::string::npos) << seen;
  fs::remove_all(dst);
  CommandResult plain = RunCommand(Thund() + " copy " + ShellQuote(src) + " " + ShellQuote(dst) +
                                   " --checkpoint-keys id --rows-per-file 1000");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err.find('\r'), std::string::npos) << plain.err;
  EXPECT_EQ(plain.err.find(" rows written ("), std::string::npos) << plain.err;
}

TEST_F(TerminalTest, SummaryJsonAgreesWithTheCommittedData) {
  const std::string p = Pipeline(12345);
  const std::string summary = (dir_ / "summary.json").string();
  CommandResult r = RunCommand(Thund() + " run " + ShellQuote(p) + " --storage " + Storage() +
                               " -q --summary-json " + ShellQuote(summary));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(testing::ReadAll(summary));
  EXPECT_EQ(j["pipeline"], "prog");
  EXPECT_EQ(j["status"], "completed");
  ASSERT_EQ(j["datasets"].size(), 1u);
  EXPECT_EQ(j["datasets"][0]["dataset"], "numbers");
  EXPECT_EQ(j["datasets"][0]["status"], "computed");
  // The oracle: DuckDB counting the committed dataset.
  CommandResult q = RunCommand(Thund() + " query " + ShellQuote(p) + " --storage " + Storage() +
                               " \"SELECT count(*) AS n FROM numbers\" --format csv");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.out.find(std::to_string(j["datasets"][0]["rows_written"].get<int64_t>())),
            std::string::npos)
      << q.out;
  EXPECT_NE(q.out.find("12345"), std::string::npos) << q.out;
}

// The subcommands listed by `thund --help`, and the long options of `thund SUB --help`.
std::set<std::string> HelpWords(const std::string& help, const std::regex& re) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(help.begin(), help.end(), re); it != std::sregex_iterator();
       ++it) {
    out.insert((*it)[1]);
  }
  return out;
}

class CompletionTest : public TerminalTest {
 protected:
  void SetUp() override {
    TerminalTest::SetUp();
    CommandResult r = RunCommand(Thund() + " completion bash");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    script_ = Write("thund.bash", r.out);
  }
  // COMPREPLY for the words typed so far (the last one is being completed).
  std::set<std::string> Complete(const std::string& words) {
    const std::string cmd = "cd " + ShellQuote(dir_.string()) + " && bash -c " +
                            ShellQuote("source " + ShellQuote(script_) + "; COMP_WORDS=(" + words +
                                       "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _thund; "
                                       "printf '%s\\n' \"${COMPREPLY[@]}\"");
    CommandResult r = RunCommand(cmd);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> out;
    std::stringstream ss(r.out);
    for (std::string line; std::getline(ss, line);) {
      if (!line.empty()) out.insert(line);
    }
    return out;
  }
  std::string script_;
};

TEST_F(CompletionTest, BashCompletesEverySubcommandOfTheHelp) {
  CommandResult help = RunCommand(Thund() + " --help");
  const auto subs = HelpWords(help.out, std::regex(R"(\n  ([a-z]+)  )"));
  ASSERT_GE(subs.size(), 10u) << help.out;
  const auto all = Complete("thund ''");
  for (const auto& s : subs) EXPECT_TRUE(all.count(s)) << s;
  EXPECT_EQ(Complete("thund ru"), (std::set<std::string>{"run", "runs"}));
  EXPECT_EQ(Complete("thund comp"), (std::set<std::string>{"completion"}));
  EXPECT_EQ(Complete("thund completion ''"), (std::set<std::string>{"bash", "fish", "zsh"}));
}

TEST_F(CompletionTest, BashCompletesOptionsAndTheirChoices) {
  for (const std::string sub : {"run", "copy", "show", "check"}) {
    CommandResult help = RunCommand(Thund() + " " + sub + " --help");
    const auto longs = HelpWords(help.out, std::regex(R"((--[a-z][a-z-]*))"));
    ASSERT_FALSE(longs.empty()) << help.out;
    const auto offered = Complete("thund " + sub + " --");
    for (const auto& l : longs) EXPECT_TRUE(offered.count(l)) << sub << " " << l;
  }
  EXPECT_EQ(Complete("thund run --events ''"), (std::set<std::string>{"human", "json", "none"}));
  EXPECT_EQ(Complete("thund run p.yaml --streaming-mode inc"),
            (std::set<std::string>{"incremental"}));
  // A positional is a file name.
  Write("pipe.yaml", "name: x\n");
  EXPECT_EQ(Complete("thund check pip"), (std::set<std::string>{"pipe.yaml"}));
}

TEST_F(CompletionTest, ZshAndFishScriptsNameEverySubcommand) {
  CommandResult help = RunCommand(Thund() + " --help");
  const auto subs = HelpWords(help.out, std::regex(R"(\n  ([a-z]+)  )"));
  for (const std::string shell : {"zsh", "fish"}) {
    CommandResult r = RunCommand(Thund() + " completion " + shell);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& s : subs) {
      EXPECT_NE(r.out.find(shell == "zsh" ? "    '" + s + ":" : "-a " + s + " -d"),
                std::string::npos)
          << shell << " " << s;
    }
    // When the shell is here, it must parse the script.
    if (RunCommand("command -v " + shell).exit_code == 0) {
      const std::string file = Write("c." + shell, r.out);
      CommandResult n = RunCommand(shell + " -n " + ShellQuote(file));
      EXPECT_EQ(n.exit_code, 0) << n.err;
    }
  }
  CommandResult bad = RunCommand(Thund() + " completion tcsh");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
}

}  // namespace
}  // namespace thund
