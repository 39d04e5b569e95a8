// The `thund` command's subcommands. Each lives in its own cmd_<name>.cc and
// registers itself on the CLI11 app; its callback stores the process exit code:
//   0 success, 1 the input is invalid / the work failed, 2 usage error.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace thund::cli {

enum ExitCode { kOk = 0, kFailed = 1, kUsage = 2 };

// Each adds one subcommand to `app`. When it runs, it writes its exit code to
// *exit_code (which must outlive app.parse()).
void RegisterCheck(CLI::App& app, int* exit_code);
void RegisterPlan(CLI::App& app, int* exit_code);
void RegisterFmt(CLI::App& app, int* exit_code);
void RegisterRun(CLI::App& app, int* exit_code);
void RegisterShow(CLI::App& app, int* exit_code);
void RegisterQuery(CLI::App& app, int* exit_code);
void RegisterRuns(CLI::App& app, int* exit_code);
void RegisterCopy(CLI::App& app, int* exit_code);
void RegisterExplain(CLI::App& app, int* exit_code);
void RegisterLower(CLI::App& app, int* exit_code);
// Register last: it describes the subcommands registered before it.
void RegisterCompletion(CLI::App& app, int* exit_code);

}  // namespace thund::cli
