// The `thund` command line.
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
  app.set_version_flag("--version", std::string("thund ") + kVersion + " (" + thund::LinkedVersions() + ")");
  app.require_subcommand(1);
  app.fallthrough(false);

  CheckOptions check;
  auto* c = app.add_subcommand("check", "Validate a pipeline; exit 0 when valid, 1 when not.");
  c->add_option("PATH", check.path, "pipeline file (.yaml, .yml, .json)")->required();
  c->add_option("--format", check.format, "output format")->check(CLI::IsMember({"human", "json"}));

  PlanOptions plan;
  auto* p = app.add_subcommand("plan", "Print the flows in execution order with what each needs.");
  p->add_option("PATH", plan.path, "pipeline file (.yaml, .yml, .json)")->required();
  p->add_option("--format", plan.format, "output format")->check(CLI::IsMember({"human", "json"}));

  FmtOptions fmt;
  auto* f = app.add_subcommand("fmt", "Print a pipeline in canonical form (idempotent).");
  f->add_option("PATH", fmt.path, "pipeline file (.yaml, .yml, .json)")->required();
  f->add_option("--to", fmt.to, "output surface")->check(CLI::IsMember({"yaml", "json", "sql"}));
  auto* w = f->add_flag("-w,--write", fmt.write, "rewrite PATH in place");
  f->add_flag("--check", fmt.check, "exit 1 when PATH is not in canonical form")->excludes(w);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage
    return kUsage;
  }
  if (c->parsed()) return RunCheck(check);
  if (p->parsed()) return RunPlan(plan);
  if (f->parsed()) return RunFmt(fmt);
  return kUsage;
}
