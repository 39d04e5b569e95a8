// Helpers shared by the pipeline-file tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "thund/diagnostic.h"
#include "thund/pipeline_file.h"

namespace thund::file_test {

inline Expectation MakeExpectation(std::string name, std::string predicate,
                                   ExpectationAction action) {
  Expectation e;
  e.name = std::move(name);
  e.predicate = std::move(predicate);
  e.action = action;
  return e;
}

inline std::string DiagText(const Diagnostics& diags) {
  std::string out;
  for (const auto& d : diags) out += d.ToString() + "  [code " + d.code + "]\n";
  return out;
}

inline std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(THUND_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The only diagnostic with `code`; fails the test when there is not exactly one.
inline const Diagnostic* OnlyWithCode(const Diagnostics& diags, const std::string& code) {
  const Diagnostic* found = nullptr;
  int n = 0;
  for (const auto& d : diags) {
    if (d.code == code) {
      found = &d;
      ++n;
    }
  }
  return n == 1 ? found : nullptr;
}

}  // namespace thund::file_test
