// The `thund` command's subcommands. Each returns the process exit code:
//   0 success, 1 the input is invalid / the work failed, 2 usage error.
#pragma once

#include <string>

namespace thund::cli {

enum ExitCode { kOk = 0, kFailed = 1, kUsage = 2 };

struct CheckOptions {
  std::string path;
  std::string format = "human";  // human | json
};
int RunCheck(const CheckOptions& o);

struct PlanOptions {
  std::string path;
  std::string format = "human";  // human | json
};
int RunPlan(const PlanOptions& o);

struct FmtOptions {
  std::string path;
  std::string to = "yaml";  // yaml | json | sql
  bool write = false;       // rewrite the file in place
  bool check = false;       // exit 1 when the file is not in canonical form
};
int RunFmt(const FmtOptions& o);

}  // namespace thund::cli
