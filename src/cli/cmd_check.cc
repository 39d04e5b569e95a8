#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/loaded.h"
#include "cli/spark_cli.h"
#include "thund/diagnostic.h"

namespace thund::cli {
namespace {

struct CheckOptions {
  std::string path;
  std::string format = "human";  // human | json
  std::string backend = "native";  // native | spark
  SparkCliOptions spark;
};

int RunCheck(const CheckOptions& o) {
  Loaded l = LoadAndValidate(
      o.path, o.backend == "spark" ? CheckBackend::kSpark : CheckBackend::kNative);
  if (o.backend == "spark" && l.parsed && !HasErrors(l.diagnostics)) {
    // What Spark cannot run (errors) and runs differently (notes).
    for (auto& d : SparkCheckDiagnostics(l.pipeline, o.spark)) l.diagnostics.push_back(d);
  }
  const bool ok = !HasErrors(l.diagnostics);
  if (o.format == "json") {
    std::cout << DiagnosticsJson(l.diagnostics) << "\n";
  } else {
    PrintDiagnosticsHuman(l, std::cerr);
    if (ok) {
      std::cout << o.path << ": ok (" << l.pipeline.datasets.size() << " datasets, "
                << l.pipeline.flows.size() << " flows)\n";
    }
  }
  return ok ? kOk : kFailed;
}

}  // namespace

void RegisterCheck(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<CheckOptions>();
  auto* c = app.add_subcommand("check", "Validate a pipeline; exit 0 when valid, 1 when not.");
  c->add_option("PATH", o->path, "pipeline file (.yaml/.yml/.json), .sql file, spark-pipeline.yml, or a directory holding one")->required();
  c->add_option("--format", o->format, "output format")->check(CLI::IsMember({"human", "json"}));
  c->add_option("--backend", o->backend,
                "the engine the pipeline is checked for: native, or spark (what the chosen "
                "Spark version cannot run is an error, what it runs differently a note)")
      ->check(CLI::IsMember({"native", "spark"}));
  AddSparkOptions(c, &o->spark, /*with_storage=*/false);
  c->callback([o, exit_code] { *exit_code = RunCheck(*o); });
}

}  // namespace thund::cli
