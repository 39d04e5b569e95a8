// The SDP corpora under tests/data/sdp/:
//  * positive/: one .sql file per statement form, plus multi-file projects
//    under positive/projects/<name>/ (with a spark-pipeline.yml). Each must
//    load, validate and pass the function check with no error, and survive
//    the SQL and pipeline-file round trips.
//  * negative/: each .sql file starts with `-- expect: LINE:COL message`; a
//    project directory holds expect.txt with `FILE:LINE:COL message`. The
//    error must be reported at exactly that place with that message.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "thund/load.h"
#include "thund/pipeline_file.h"
#include "thund/sql_pipeline.h"
#include "thund/validate.h"

namespace thund {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(THUND_SOURCE_DIR) / "tests" / "data" / "sdp";

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::string Render(const Diagnostics& ds) {
  std::string out;
  for (const auto& d : ds) {
    std::string text = d.location.file.empty() ? "" : ReadText(d.location.file);
    out += RenderDiagnostic(d, text);
  }
  return out;
}

// Everything `thund check` reports for `path`.
Diagnostics Check(const std::string& path, Pipeline* out = nullptr) {
  ParseResult r = LoadPipeline(path);
  Diagnostics all = r.diagnostics;
  if (r.ok()) {
    for (auto& d : Validate(r.pipeline)) all.push_back(d);
    for (auto& d : CheckSqlFunctions(r.pipeline)) all.push_back(d);
  }
  if (out) *out = r.pipeline;
  return all;
}

std::vector<fs::path> PositiveCases() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kCorpus / "positive")) {
    if (e.path().extension() == ".sql") out.push_back(e.path());
  }
  for (const auto& e : fs::directory_iterator(kCorpus / "positive" / "projects")) {
    if (e.is_directory()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SdpCorpus, PositiveCasesCheckClean) {
  const auto cases = PositiveCases();
  ASSERT_GE(cases.size(), 20u);
  for (const fs::path& c : cases) {
    SCOPED_TRACE(c.string());
    Pipeline p;
    Diagnostics ds = Check(c.string(), &p);
    EXPECT_FALSE(HasErrors(ds)) << Render(ds);
    EXPECT_FALSE(p.datasets.empty());
    for (const auto& d : ds) {
      EXPECT_NE(d.severity, Severity::kWarning) << "unexpected warning: " << d.ToString();
    }
  }
}

TEST(SdpCorpus, PositiveCasesRoundTrip) {
  for (const fs::path& c : PositiveCases()) {
    SCOPED_TRACE(c.string());
    ParseResult r = LoadPipeline(c.string());
    ASSERT_TRUE(r.ok()) << Render(r.diagnostics);
    const std::string sql = FormatSql(r.pipeline);
    ParseResult again = ParseSql(sql, "formatted.sql");
    ASSERT_TRUE(again.ok()) << Render(again.diagnostics) << sql;
    EXPECT_EQ(again.pipeline, r.pipeline) << sql;
    ParseResult file = ParsePipelineFile(FormatPipelineFile(r.pipeline), "formatted.yaml");
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(file.pipeline, r.pipeline);
  }
}

struct Expectation {
  std::string file;  // empty: the case file itself
  int line = 0;
  int column = 0;
  std::string message;
};

bool ParseExpect(const std::string& spec, Expectation* e) {
  // [FILE:]LINE:COL message
  size_t space = spec.find(' ');
  if (space == std::string::npos) return false;
  std::string where = spec.substr(0, space);
  e->message = spec.substr(space + 1);
  size_t c2 = where.rfind(':');
  if (c2 == std::string::npos) return false;
  size_t c1 = where.rfind(':', c2 - 1);
  e->column = std::stoi(where.substr(c2 + 1));
  if (c1 == std::string::npos) {
    e->line = std::stoi(where.substr(0, c2));
  } else {
    e->line = std::stoi(where.substr(c1 + 1, c2 - c1 - 1));
    e->file = where.substr(0, c1);
  }
  return true;
}

TEST(SdpCorpus, NegativeCasesFailWhereExpected) {
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(kCorpus / "negative")) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  ASSERT_GE(cases.size(), 25u);
  for (const fs::path& c : cases) {
    SCOPED_TRACE(c.string());
    std::vector<Expectation> want;
    if (fs::is_directory(c)) {
      std::istringstream lines(ReadText(c / "expect.txt"));
      for (std::string line; std::getline(lines, line);) {
        if (line.empty() || line[0] == '#') continue;
        Expectation e;
        ASSERT_TRUE(ParseExpect(line, &e)) << line;
        want.push_back(e);
      }
    } else {
      std::istringstream lines(ReadText(c));
      for (std::string line; std::getline(lines, line);) {
        const std::string tag = "-- expect: ";
        if (line.rfind(tag, 0) != 0) break;
        Expectation e;
        ASSERT_TRUE(ParseExpect(line.substr(tag.size()), &e)) << line;
        want.push_back(e);
      }
    }
    ASSERT_FALSE(want.empty()) << "no expectation written for this case";
    Diagnostics ds = Check(c.string());
    EXPECT_TRUE(HasErrors(ds)) << "expected errors";
    for (const auto& e : want) {
      bool found = false;
      for (const auto& d : ds) {
        const std::string& f = d.location.file;
        const bool file_ok =
            e.file.empty() || (f.size() >= e.file.size() &&
                               f.compare(f.size() - e.file.size(), e.file.size(), e.file) == 0);
        if (d.severity == Severity::kError && file_ok && d.location.line == e.line &&
            d.location.column == e.column && d.message.find(e.message) != std::string::npos) {
          found = true;
        }
      }
      EXPECT_TRUE(found) << "expected error at " << e.line << ":" << e.column << " containing '"
                         << e.message << "'; got:\n"
                         << Render(ds);
    }
  }
}

}  // namespace
}  // namespace thund
