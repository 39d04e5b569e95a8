// The machine interface under bad input: `thund check --format json` on bytes
// that are not UTF-8, and exceptions no command caught. The output is always
// one JSON document and the exit code 1; never std::terminate.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "testing/run_command.h"

namespace thund {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::ShellQuote;

namespace fs = std::filesystem;

class CliBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("thund-cli-bad-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  static CommandResult Thund(const std::string& args, const std::string& env = "") {
    return RunCommand(env + ShellQuote(THUND_BINARY) + " " + args);
  }
  // The one diagnostic of a `--format json` output.
  static nlohmann::json OnlyDiagnostic(const CommandResult& r) {
    const auto doc = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(doc.is_object()) << "not JSON: " << r.out << "\nstderr: " << r.err;
    if (!doc.is_object() || doc["diagnostics"].size() != 1) {
      ADD_FAILURE() << "want one diagnostic: " << r.out;
      return {};
    }
    return doc["diagnostics"][0];
  }

  fs::path dir_;
};

// The crash of issue 21: a mutated pipeline file with a Latin-1 byte made
// `check --format json` die in nlohmann's dump (type_error 316).
TEST_F(CliBadInputTest, CheckJsonOnYamlWithInvalidUtf8IsALocatedError) {
  const std::string path = Write("p.yaml", "name: p\ndatasets:\n  - name: caf\xE9\n    kind: view\n");
  CommandResult r = Thund("check --format json " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto d = OnlyDiagnostic(r);
  EXPECT_EQ(d["code"], "invalid-utf8");
  EXPECT_EQ(d["line"], 3);
  EXPECT_EQ(d["column"], 14);
  EXPECT_EQ(d["file"], path);
}

TEST_F(CliBadInputTest, CheckJsonOnSqlWithInvalidUtf8IsALocatedError) {
  const std::string path = Write("p.sql", "CREATE MATERIALIZED VIEW t AS\n  SELECT 'caf\xE9' AS c;\n");
  CommandResult r = Thund("check --format json " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto d = OnlyDiagnostic(r);
  EXPECT_EQ(d["code"], "invalid-utf8");
  EXPECT_EQ(d["line"], 2);
  EXPECT_EQ(d["column"], 14);
}

TEST_F(CliBadInputTest, CheckHumanOnInvalidUtf8ShowsTheByteEscaped) {
  const std::string path = Write("p.sql", "CREATE MATERIALIZED VIEW t AS SELECT '\xFF' AS c;\n");
  CommandResult r = Thund("check " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(":1:39: error: the file is not valid UTF-8: byte 0xFF"), std::string::npos)
      << r.err;
  // The excerpt shows the byte as \xFF, the caret under it.
  EXPECT_NE(r.err.find(" 1 | CREATE MATERIALIZED VIEW t AS SELECT '\\xFF' AS c;\n"
                       "   |                                       ^\n"),
            std::string::npos)
      << r.err;
}

// A path that is not UTF-8 reaches the diagnostics as the file name: the JSON
// stays valid (the byte becomes U+FFFD).
TEST_F(CliBadInputTest, CheckJsonOnAPathThatIsNotUtf8StaysValidJson) {
  const std::string path = (dir_ / "missing-\xFF.yaml").string();
  CommandResult r = Thund("check --format json " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto d = OnlyDiagnostic(r);
  EXPECT_EQ(d["code"], "io");
  EXPECT_NE(d["file"].get<std::string>().find("missing-\xEF\xBF\xBD.yaml"), std::string::npos)
      << d.dump();
}

// An exception no command catches (injected: nlohmann's type_error 316) is an
// internal-error diagnostic with exit code 1: as JSON on stdout when JSON was
// asked for, else on stderr.
TEST_F(CliBadInputTest, UncaughtExceptionIsAnInternalErrorDiagnosticInJson) {
  const std::string path = Write("p.sql", "CREATE MATERIALIZED VIEW t AS SELECT 1 AS x;\n");
  CommandResult r = Thund("check --format json " + ShellQuote(path), "THUND_DEBUG_THROW=1 ");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto d = OnlyDiagnostic(r);
  EXPECT_EQ(d["code"], "internal-error");
  EXPECT_EQ(d["severity"], "error");
  EXPECT_NE(d["message"].get<std::string>().find("type_error.316"), std::string::npos) << d.dump();
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

TEST_F(CliBadInputTest, UncaughtExceptionIsAnInternalErrorOnStderr) {
  const std::string path = Write("p.sql", "CREATE MATERIALIZED VIEW t AS SELECT 1 AS x;\n");
  for (const std::string cmd : {"check", "plan", "explain"}) {
    CommandResult r = Thund(cmd + " " + ShellQuote(path), "THUND_DEBUG_THROW=1 ");
    EXPECT_EQ(r.exit_code, 1) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("error: internal error: [json.exception.type_error.316]"),
              std::string::npos)
        << cmd << ": " << r.err;
    EXPECT_EQ(r.out, "") << cmd;
  }
}

}  // namespace
}  // namespace thund
