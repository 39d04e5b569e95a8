// The `thund` command line. Subcommands live in cmd_<name>.cc.
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>
#include <arrow/memory_pool.h>

#include "cli/commands.h"
#include "engine/version/versions.h"

namespace {

constexpr const char* kVersion = "0.1.0";

// Arrow's default pool, unless the user chose one (ARROW_DEFAULT_MEMORY_POOL):
// jemalloc when the library has it. A streaming run frees and reallocates
// its working tables every trigger; mimalloc (the wheel's default) keeps
// what is freed, so a long run's footprint grew with its history rather than
// its state (Nexmark q5: 1.38x at 16x the stream under mimalloc, 1.20x under
// jemalloc; docs/benchmarks.md). Sanitizer builds keep the default, whose
// allocations ASan sees.
void ChooseArrowPool() {
#if !defined(__SANITIZE_ADDRESS__)
  if (std::getenv("ARROW_DEFAULT_MEMORY_POOL") != nullptr) return;
  arrow::MemoryPool* jemalloc = nullptr;
  if (arrow::jemalloc_memory_pool(&jemalloc).ok()) {
    ::setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc", /*overwrite=*/0);
  }
#endif
}

}  // namespace

int main(int argc, char** argv) {
  ChooseArrowPool();  // before anything allocates through Arrow
  using namespace thund::cli;
  CLI::App app{"thund: declare datasets and the flows that compute them; check, plan and run them."};
  app.set_version_flag("--version",
                       std::string("thund ") + kVersion + " (" + thund::LinkedVersions() + ")");
  app.require_subcommand(1);

  int exit_code = kUsage;
  RegisterCheck(app, &exit_code);
  RegisterPlan(app, &exit_code);
  RegisterExplain(app, &exit_code);
  RegisterLower(app, &exit_code);
  RegisterFmt(app, &exit_code);
  RegisterRun(app, &exit_code);
  RegisterShow(app, &exit_code);
  RegisterQuery(app, &exit_code);
  RegisterRuns(app, &exit_code);
  RegisterCopy(app, &exit_code);
  RegisterCompletion(app, &exit_code);

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
