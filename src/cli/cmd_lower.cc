// thund lower --to spark PATH OUT_DIR: write the pipeline as a Spark
// Declarative Pipelines project that the stock `spark-pipelines run` accepts,
// and print what Spark runs differently (docs/spark.md).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/loaded.h"
#include "cli/spark_cli.h"

namespace thund::cli {
namespace {

struct LowerOptions {
  std::string to = "spark";
  std::string path;
  std::string out_dir;
  std::string format = "human";
  SparkCliOptions spark;
};

int RunLower(const LowerOptions& o) {
  Loaded l = LoadAndValidate(o.path, CheckBackend::kSpark);
  if (!l.parsed || HasErrors(l.diagnostics)) {
    PrintDiagnosticsHuman(l, std::cerr);
    return kFailed;
  }
  const auto b = BackendOptions(o.spark);
  spark::SparkLowering lowering = spark::LowerToSpark(l.pipeline, {b.version, b.storage});
  if (o.format == "json") {
    std::cout << spark::ReportJson(lowering.project.report, lowering.diagnostics) << "\n";
  }
  if (HasErrors(lowering.diagnostics)) {
    Loaded refused = l;
    refused.diagnostics = lowering.diagnostics;
    PrintDiagnosticsHuman(refused, std::cerr);
    std::cerr << "nothing written: Spark " << spark::Name(b.version)
              << " cannot run the pipeline as declared\n";
    return kFailed;
  }
  namespace fs = std::filesystem;
  for (const auto& [rel, text] : spark::ProjectFiles(lowering.project)) {
    const fs::path file = fs::path(o.out_dir) / rel;
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (ec || !out) {
      std::cerr << "error: cannot write " << file.string()
                << (ec ? ": " + ec.message() : std::string()) << "\n";
      return kFailed;
    }
  }
  if (o.format != "json") {
    std::cout << "wrote a Spark " << spark::Name(b.version) << " pipeline project to "
              << o.out_dir << " (run it with: spark-pipelines run --spec " << o.out_dir
              << "/spark-pipeline.yml)\n";
    const std::string report = spark::ReportText(lowering.project.report);
    if (!report.empty()) std::cout << "\nwhat Spark runs differently:\n" << report;
  }
  return kOk;
}

}  // namespace

void RegisterLower(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<LowerOptions>();
  auto* c = app.add_subcommand(
      "lower", "Write the pipeline for another engine (--to spark: a Spark Declarative "
               "Pipelines project) and report what that engine runs differently.");
  c->add_option("--to", o->to, "target engine")->check(CLI::IsMember({"spark"}));
  c->add_option("PATH", o->path, "pipeline file, .sql file or SDP project")->required();
  c->add_option("OUT_DIR", o->out_dir, "directory to write the project into")->required();
  c->add_option("--format", o->format, "report format")->check(CLI::IsMember({"human", "json"}));
  AddSparkOptions(c, &o->spark, /*with_storage=*/true);
  c->callback([o, exit_code] { *exit_code = RunLower(*o); });
}

}  // namespace thund::cli
