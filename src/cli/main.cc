// The `thund` command line. Subcommands live in cmd_<name>.cc.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <arrow/memory_pool.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/loaded.h"
#include "engine/version/versions.h"
#include "thund/utf8.h"

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

// True when the command line asks for JSON on stdout (--format json,
// --events json): an internal error is then printed as a JSON diagnostic there.
bool WantsJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--format=json" || a == "--events=json") return true;
    if ((a == "--format" || a == "--events") && i + 1 < argc && std::strcmp(argv[i + 1], "json") == 0) {
      return true;
    }
  }
  return false;
}

// An exception no command caught (a library's, or a bug): reported as the
// diagnostic "internal-error", exit code 1, never std::terminate.
int ReportInternalError(const char* what, bool json) {
  thund::Diagnostic d;
  d.code = "internal-error";
  d.message = "internal error: " + thund::EscapeInvalidUtf8(what);
  d.hint = "this is a bug in thund; please report it with the command and its input";
  if (json) {
    std::cout << thund::cli::DiagnosticsJson({d}) << std::endl;
  } else {
    std::cerr << d.ToString() << std::endl;
  }
  return thund::cli::kFailed;
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

  // Test seam: THUND_DEBUG_THROW=1 makes a library throw (nlohmann's
  // type_error 316, the one invalid UTF-8 in a dump raises) before the command
  // runs, so tests can see how an uncaught exception is reported.
  if (const char* t = std::getenv("THUND_DEBUG_THROW"); t != nullptr && std::strcmp(t, "1") == 0) {
    app.preparse_callback([](size_t) {
      (void)nlohmann::json(std::string("bad byte \xff")).dump();  // raw dump: the point
    });
  }

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
  } catch (const std::exception& e) {
    return ReportInternalError(e.what(), WantsJson(argc, argv));
  } catch (...) {
    return ReportInternalError("an exception of unknown type", WantsJson(argc, argv));
  }
  return exit_code;
}
