// Running a helper program (thund's Python helpers) to completion with its
// standard streams redirected to files. Blocking; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace thund {

// Runs args[0] (a path, not searched in PATH) with `args`; standard input from
// `in` ("" = /dev/null), standard output to `out`, standard error to `err`
// ("" = the same file as `out`). Returns the exit status, or -1 when the
// program could not start or did not exit normally.
int RunProgram(const std::vector<std::string>& args, const std::string& in,
               const std::string& out, const std::string& err = "");

}  // namespace thund
