// The `thund` command line. Subcommands live in cmd_<name>.cc.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "engine/version/versions.h"

namespace {

constexpr const char* kVersion = "0.1.0";

}  // namespace

int main(int argc, char** argv) {
  using namespace thund::cli;
  CLI::App app{"thund: declare datasets and the flows that compute them; check, plan and run them."};
  app.set_version_flag("--version",
                       std::string("thund ") + kVersion + " (" + thund::LinkedVersions() + ")");
  app.require_subcommand(1);

  int exit_code = kUsage;
  RegisterCheck(app, &exit_code);
  RegisterPlan(app, &exit_code);
  RegisterExplain(app, &exit_code);
  RegisterFmt(app, &exit_code);
  RegisterRun(app, &exit_code);
  RegisterShow(app, &exit_code);
  RegisterQuery(app, &exit_code);
  RegisterRuns(app, &exit_code);
  RegisterCopy(app, &exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << "\n\n";
    // The usage of the subcommand that was being parsed, else the top level.
    auto subs = app.get_subcommands();
    std::cerr << (subs.empty() ? app.help() : subs.back()->help());
    return kUsage;
  }
  return exit_code;
}
